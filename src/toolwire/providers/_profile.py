"""What toolwire knows about one provider, as data: the shape every profile fills in.

A profile names no class and calls nothing: ``config`` (which keys, which defaults),
``imaging`` (which images), ``context`` (which windows, how usage counts) and the proxy's
telemetry read it, and ``backends`` finds its request builder and ``decode`` its decoder
by the dotted names it gives (imported only when a backend of that format is built).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class NameRule:
    """The tool names a provider accepts: the characters, the first character, the length."""

    allowed: str  # a regex character class, without the brackets
    max_length: int
    first: str | None = None  # the first character's class, when it is narrower

    def accepts(self, name: str) -> bool:
        head = f"[{self.first}]" if self.first else f"[{self.allowed}]"
        pattern = rf"{head}[{self.allowed}]{{0,{self.max_length - 1}}}"
        return re.fullmatch(pattern, name) is not None

    def rewrite(self, name: str, salt: int = 0) -> str:
        """``name`` made acceptable: rejected characters as ``_``, a hash of it appended."""
        digest = hashlib.sha256(f"{name}#{salt}".encode() if salt else name.encode())
        suffix = "_" + digest.hexdigest()[:8]
        body = re.sub(f"[^{self.allowed}]", "_", name)
        if self.first and not re.match(f"[{self.first}]", body):
            body = "_" + body  # also covers the empty name
        return body[: self.max_length - len(suffix)] + suffix


@dataclass(frozen=True, slots=True)
class ImageLimits:
    """One service's limits for an inline (base64) image (docs/agent.md, "Images")."""

    service: str
    """Who sets them (two wire formats of one service share them)."""
    formats: frozenset[str]
    """The media types it takes."""
    max_base64: int | None
    """The most base64 characters one image may have (None: only the request's size)."""
    max_side: int | None
    """The most pixels on either side (None: it scales any size down itself)."""
    request_bytes: int
    """The largest request body, all images included."""


@dataclass(frozen=True, slots=True)
class Family:
    """Models whose id starts with ``prefix``: their context window and output limit."""

    prefix: str
    window: int
    output: int


@dataclass(frozen=True, slots=True)
class Detected:
    """The backend made for this provider when its key is in the environment."""

    name: str
    model: str
    key_envs: tuple[str, ...]
    """Looked for in this order; the first one set is the backend's ``api_key_env``."""


@dataclass(frozen=True, slots=True)
class ProviderProfile:
    """Everything toolwire knows about one wire format and the service behind it."""

    wire_format: str
    """The ``provider`` of a ``[backends.NAME]`` table and of a cassette line."""
    backend: str
    """``module:Class`` of its ``HTTPBackend`` (URL, headers, body)."""
    decoder: str
    """``module:Class`` of its decoder (response bytes to events)."""
    default_url: str
    """Its own service, where ``base_url`` is unset."""
    key_env: str | None
    """The key variable read on its own service (never sent to another ``base_url``)."""
    acp_protocol: str
    """The ACP ``LlmProtocol`` it speaks (``providers/list``)."""
    otel_name: str
    """``gen_ai.provider.name`` of the OpenTelemetry semantic conventions."""
    name_rule: NameRule
    images: ImageLimits
    families: tuple[Family, ...]
    """The model families its service serves (``context.windows``)."""
    detected: Detected | None = None
    native_search: tuple[str, ...] | None = None
    """Model id prefixes whose requests may carry the service's own web search (``("",)``:
    every model); None: no native search."""
    thinking_budgets: Mapping[str, int] | None = None
    """Tokens per thought level where the service takes a budget; None: it takes the
    level's name (an effort)."""
    usage_includes_cache: bool = True
    """Its input token count includes the cached tokens (Anthropic's does not)."""

    def detected_key_envs(self) -> tuple[str, ...]:
        """The key variables its detection looks for (none when it is not detected)."""
        return self.detected.key_envs if self.detected is not None else ()

    def searches_natively(self, model: str) -> bool:
        """Requests for ``model`` may offer the service's own web search."""
        prefixes = self.native_search
        return prefixes is not None and model.startswith(prefixes)


__all__ = ["Detected", "Family", "ImageLimits", "NameRule", "ProviderProfile"]
