"""OpenAI's Responses API: OpenAI's own service, the one detected from ``OPENAI_API_KEY``."""

from __future__ import annotations

from toolwire.providers._profile import Detected, ProviderProfile
from toolwire.providers.openai_chat import (
    OPENAI_FAMILIES,
    OPENAI_IMAGES,
    OPENAI_NAMES,
    OPENAI_URL,
)

PROFILE = ProviderProfile(
    wire_format="openai-responses",
    backend="toolwire.backends.openai_responses:OpenAIResponsesBackend",
    decoder="toolwire.decode.openai_responses:OpenAIResponsesDecoder",
    default_url=OPENAI_URL,
    key_env="OPENAI_API_KEY",
    acp_protocol="openai",
    otel_name="openai",
    name_rule=OPENAI_NAMES,
    images=OPENAI_IMAGES,
    families=OPENAI_FAMILIES,
    detected=Detected("openai", "gpt-5.4", ("OPENAI_API_KEY",)),
    native_search=("",),
)

__all__ = ["PROFILE"]
