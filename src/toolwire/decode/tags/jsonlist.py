"""Granite and Phi-4-mini: a marker, then a JSON list of ``{"name", "arguments"}`` objects.

* Granite 3 writes ``<|tool_call|>[{"name": ..., "arguments": {...}}, ...]``; vLLM also
  reads ``<tool_call>`` as the marker, and so does toolwire. Both are special strings of
  the model's vocabulary: a marker followed by anything but a list (or one object)
  reverts to text with a ``StreamError``.
* Phi-4-mini writes ``functools[{"name": ..., "arguments": {...}}, ...]``. ``functools`` is
  also a Python module that prose and code name (``functools.partial``), so the marker is
  no special token: anything but ``[`` or ``{`` after it reverts to text without an
  error, and each object must start with its ``name`` (a declared tool, when the tools
  are known).

The frame, the objects and what separates them are ``_jsoncalls.JsonCallsDecoder``'s.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from toolwire.decode.tags._holdback import TagSet
from toolwire.decode.tags._jsoncalls import JsonCallsDecoder, dumps


class GraniteDecoder(JsonCallsDecoder):
    """Decode Granite's ``<|tool_call|>[...]`` calls out of a model's text."""

    _OPEN = TagSet("<|tool_call|>", "<tool_call>")
    _COMMIT_ON_OPEN = True

    def _opened(self, tag: str) -> None:
        self._bare = False


class Phi4MiniDecoder(JsonCallsDecoder):
    """Decode Phi-4-mini's ``functools[...]`` calls out of a model's text."""

    _OPEN = TagSet("functools")

    def _opened(self, tag: str) -> None:
        self._bare = True


def render_granite(name: str, arguments: Mapping[str, Any]) -> str:
    return "<|tool_call|>" + dumps([{"name": name, "arguments": dict(arguments)}])


def render_phi4_mini(name: str, arguments: Mapping[str, Any]) -> str:
    return "functools" + dumps([{"name": name, "arguments": dict(arguments)}])


__all__ = ["GraniteDecoder", "Phi4MiniDecoder", "render_granite", "render_phi4_mini"]
