"""Models that other services serve over these wire formats (Anthropic- and
OpenAI-compatible endpoints, local servers): their windows, for ``context.windows``."""

from __future__ import annotations

from toolwire.providers._profile import Family

FAMILIES = (
    Family("glm-4.6", 200_000, 128_000),
    Family("glm-4.5", 128_000, 96_000),
    Family("kimi-k2-thinking", 262_144, 32_768),
    Family("kimi-k2-0905", 262_144, 32_768),
    Family("kimi-k2", 131_072, 32_768),
    Family("deepseek-reasoner", 128_000, 64_000),
    Family("deepseek-chat", 128_000, 8_000),
    Family("minimax-m2", 204_800, 32_768),
    Family("qwen3-coder", 262_144, 65_536),
    Family("qwen2.5-coder", 32_768, 8_192),
)

__all__ = ["FAMILIES"]
