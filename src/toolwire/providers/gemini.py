"""Google's Gemini API (``generateContent`` streamed as SSE)."""

from __future__ import annotations

from toolwire.providers._profile import Detected, Family, ImageLimits, NameRule, ProviderProfile

_MB = 1024 * 1024

PROFILE = ProviderProfile(
    wire_format="gemini",
    backend="toolwire.backends.gemini:GeminiBackend",
    decoder="toolwire.decode.gemini:GeminiDecoder",
    default_url="https://generativelanguage.googleapis.com",
    key_env="GEMINI_API_KEY",
    acp_protocol="gemini",
    otel_name="gcp.gemini",
    # Starts with a letter or ``_``; letters, digits, ``_ . : -``; at most 64.
    name_rule=NameRule("a-zA-Z0-9_.:-", 64, first="a-zA-Z_"),
    images=ImageLimits(
        "gemini",
        frozenset({"image/png", "image/jpeg", "image/webp", "image/heic", "image/heif"}),
        None,
        None,
        20 * _MB,
    ),
    families=(
        Family("gemini-1.5-pro", 2_097_152, 8_192),
        Family("gemini-1.5", 1_048_576, 8_192),
        Family("gemini-2.0", 1_048_576, 8_192),
        Family("gemini-2.5", 1_048_576, 65_536),
        Family("gemini-3", 1_048_576, 65_536),
        Family("gemini", 1_048_576, 8_192),
    ),
    detected=Detected("gemini", "gemini-2.5-flash", ("GEMINI_API_KEY", "GOOGLE_API_KEY")),
    # Gemini before 3 refuses ``google_search`` beside function declarations.
    native_search=("gemini-3", "models/gemini-3"),
    thinking_budgets={"low": 1024, "medium": 8192, "high": 24576},
)

__all__ = ["PROFILE"]
