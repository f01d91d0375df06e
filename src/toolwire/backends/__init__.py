"""Model backends: the provider-neutral history in, normalized stream events out.

One module per provider (``anthropic``, ``openai_chat``, ``openai_responses``,
``gemini``), each with a pure ``build_body`` (history -> JSON body) and a backend class
that streams over httpx; ``replay`` serves cassettes, ``record`` writes them;
``factory.create_backend`` builds any of them from configuration. The contract every
backend keeps is in ``base``. ``http_client()`` makes the HTTP client backends share;
its maker closes it. ``encodable``/``encodable_json`` clean lone surrogates out of text
before it is serialized (``_text``).
"""

from __future__ import annotations

from toolwire.backends._text import encodable, encodable_json, encodable_value, utf8
from toolwire.backends._wire import http_client
from toolwire.backends.base import (
    PROVIDERS,
    TOOL_FORMATS,
    WIRE_FORMATS,
    Backend,
    HTTPSettings,
    ModelRequest,
    Tap,
    TappableBackend,
)
from toolwire.backends.factory import create_backend
from toolwire.backends.http import HTTPBackend
from toolwire.backends.record import RecordingBackend
from toolwire.backends.replay import ReplayBackend, demo_cassette

__all__ = [
    "PROVIDERS",
    "TOOL_FORMATS",
    "WIRE_FORMATS",
    "Backend",
    "HTTPBackend",
    "HTTPSettings",
    "ModelRequest",
    "RecordingBackend",
    "ReplayBackend",
    "Tap",
    "TappableBackend",
    "create_backend",
    "demo_cassette",
    "encodable",
    "encodable_json",
    "encodable_value",
    "http_client",
    "utf8",
]
