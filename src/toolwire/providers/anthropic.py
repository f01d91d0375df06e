"""Anthropic's Messages API, and the services that serve it under their own ``base_url``."""

from __future__ import annotations

from toolwire.providers._profile import Detected, Family, ImageLimits, NameRule, ProviderProfile

_MB = 1024 * 1024

PROFILE = ProviderProfile(
    wire_format="anthropic",
    backend="toolwire.backends.anthropic:AnthropicBackend",
    decoder="toolwire.decode.anthropic:AnthropicDecoder",
    default_url="https://api.anthropic.com",
    key_env="ANTHROPIC_API_KEY",
    acp_protocol="anthropic",
    otel_name="anthropic",
    # ``^[a-zA-Z0-9_-]{1,64}$``, its documented tool name pattern.
    name_rule=NameRule("a-zA-Z0-9_-", 64),
    images=ImageLimits(
        "anthropic",
        frozenset({"image/png", "image/jpeg", "image/gif", "image/webp"}),
        5 * _MB,
        8000,
        32 * _MB,
    ),
    families=(
        Family("claude-opus-4-5", 200_000, 64_000),
        Family("claude-opus-4", 200_000, 32_000),
        Family("claude-sonnet-4", 200_000, 64_000),
        Family("claude-haiku-4", 200_000, 64_000),
        Family("claude-3-7-sonnet", 200_000, 64_000),
        Family("claude-3-5", 200_000, 8_192),
        Family("claude-3", 200_000, 4_096),
        Family("claude", 200_000, 32_000),
    ),
    detected=Detected("anthropic", "claude-sonnet-5", ("ANTHROPIC_API_KEY",)),
    native_search=("",),
    thinking_budgets={"low": 2048, "medium": 8192, "high": 24576},
    # ``input_tokens`` leaves out what was read from or written to the prompt cache.
    usage_includes_cache=False,
)

__all__ = ["PROFILE"]
