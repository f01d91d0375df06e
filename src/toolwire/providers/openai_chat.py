"""OpenAI Chat Completions, and the many servers that speak it (OpenRouter, Ollama, vLLM,
llama.cpp, LM Studio) under their own ``base_url``."""

from __future__ import annotations

from toolwire.providers._profile import Family, ImageLimits, NameRule, ProviderProfile

_MB = 1024 * 1024

OPENAI_URL = "https://api.openai.com/v1"
OPENAI_NAMES = NameRule("a-zA-Z0-9_-", 64)
"""a-z, A-Z, 0-9, ``_`` and ``-``, at most 64 (Chat ``function.name``, Responses ``name``)."""
# GIF only when not animated: a fitted GIF is PNG anyway (Gemini takes none).
OPENAI_IMAGES = ImageLimits(
    "openai", frozenset({"image/png", "image/jpeg", "image/webp"}), None, None, 50 * _MB
)
OPENAI_FAMILIES = (
    Family("gpt-5", 400_000, 128_000),
    Family("gpt-4.1", 1_047_576, 32_768),
    Family("gpt-4o", 128_000, 16_384),
    Family("gpt-4-turbo", 128_000, 4_096),
    Family("gpt-4", 8_192, 4_096),
    Family("gpt-3.5-turbo", 16_385, 4_096),
    Family("gpt-oss", 131_072, 32_768),
    Family("o1", 200_000, 100_000),
    Family("o3", 200_000, 100_000),
    Family("o4-mini", 200_000, 100_000),
    Family("codex-mini", 200_000, 100_000),
)

PROFILE = ProviderProfile(
    wire_format="openai-chat",
    backend="toolwire.backends.openai_chat:OpenAIChatBackend",
    decoder="toolwire.decode.openai_chat:OpenAIChatDecoder",
    default_url=OPENAI_URL,
    key_env="OPENAI_API_KEY",
    acp_protocol="openai",
    otel_name="openai",
    name_rule=OPENAI_NAMES,
    images=OPENAI_IMAGES,
    families=OPENAI_FAMILIES,
)

__all__ = ["OPENAI_FAMILIES", "OPENAI_IMAGES", "OPENAI_NAMES", "OPENAI_URL", "PROFILE"]
