"""Gemini API (``POST {base_url}/v1beta/models/{model}:streamGenerateContent?alt=sse``).

The key goes in the ``x-goog-api-key`` header, never in the URL (URLs end up in logs).
Translation rules:

* roles are ``user`` and ``model``; a ``functionCall`` turn is answered by one ``user``
  turn holding a ``functionResponse`` per call, in call order (Gemini pairs them by
  order and name; ``id`` is sent only when Gemini itself gave the call one);
* ``functionResponse.response`` is ``{"output": ...}`` or, for a failed call,
  ``{"error": ...}``: the keys Google's docs name for results and errors;
* thought signatures go back only to the backend that produced them, on the part they
  came with: a call's ``thoughtSignature`` on its ``functionCall`` part, a thought's on
  its ``thought`` part, a signature that came alone on an empty text part right after
  the text it followed. A call from another backend goes without one: signatures are
  never invented (Gemini 3 may then refuse an unfinished tool loop of another model;
  a handoff ends that loop in text, which carries no signature requirement);
* consecutive contents of the same role are merged.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

from toolwire.backends._asks import gemini_generation, gemini_tool_config
from toolwire.backends._gemini_schema import declaration_schema
from toolwire.backends._images import gemini_image
from toolwire.backends._names import GEMINI, ToolNames
from toolwire.backends._prepare import prepare
from toolwire.backends._thinking import gemini_thinking
from toolwire.backends.base import ModelRequest
from toolwire.backends.http import HTTPBackend
from toolwire.config.choices import ToolFormat
from toolwire.history import (
    ImagePart,
    Message,
    TextPart,
    ThinkingPart,
    ToolCallPart,
    ToolResultPart,
    ToolSpec,
)
from toolwire.history.images import with_notes
from toolwire.history.pairing import as_object
from toolwire.providers import PROFILES

# ``decode.gemini`` mints ``gemini-<responseId>-<n>`` for calls Gemini sent without an id;
# such an id is ours, not Gemini's, and is not sent back.
_MINTED_PREFIX = "gemini-"
_NO_IMAGES = "not sent: a function response carries no images here"


def build_body(
    request: ModelRequest,
    *,
    model: str,
    backend: str,
    tool_format: ToolFormat = "native",
    vision: bool = True,
) -> dict[str, Any]:
    """The ``generateContent`` body for ``request`` (the model goes in the URL)."""
    del model  # Gemini names the model in the URL, not the body
    native, history, system, names = prepare(request, GEMINI, tool_format, vision=vision)
    config: dict[str, Any] = {"maxOutputTokens": request.max_tokens}
    if request.temperature is not None:
        config["temperature"] = request.temperature
    thinking = gemini_thinking(request.thinking)
    if thinking is not None:
        config["thinkingConfig"] = thinking
    config.update(gemini_generation(request, native=native))
    contents = _contents(history, backend, names)
    body: dict[str, Any] = {"contents": contents, "generationConfig": config}
    if system:
        body["systemInstruction"] = {"parts": [{"text": system}]}
    if native and request.tools:
        body["tools"] = [{"functionDeclarations": [_declaration(t, names) for t in request.tools]}]
    if native and request.web_search:
        # Grounding beside function declarations: Gemini 3 models only (docs/agent.md,
        # "WebSearch"); BackendConfig.search_route asks for it on those alone.
        body["tools"] = [*body.get("tools", ()), {"google_search": {}}]
    forced = gemini_tool_config(request, names, native=native)
    if forced is not None:
        body["toolConfig"] = forced
    return body


def _declaration(tool: ToolSpec, names: ToolNames) -> dict[str, Any]:
    declaration: dict[str, Any] = {"name": names.wire(tool.name), "description": tool.description}
    schema = declaration_schema(tool.input_schema)
    if schema is not None:  # a tool without input leaves it out (an empty OBJECT is refused)
        key, value = schema
        declaration[key] = value
    return declaration


def _contents(history: list[Message], backend: str, names: ToolNames) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    calls: list[ToolCallPart] = []
    own_calls = False
    for message in history:
        if message.role == "assistant":
            own_calls = message.backend == backend
            calls = message.tool_calls()
            role, parts = "model", _model_parts(message, own=own_calls, names=names)
        elif message.role == "tool":
            results = [p for p in message.parts if isinstance(p, ToolResultPart)]
            role = "user"
            parts = [
                _response(c, r, own=own_calls, names=names)
                for c, r in zip(calls, results, strict=True)
            ]
        else:
            role = "user"
            parts = [
                {"text": p.text} if isinstance(p, TextPart) else gemini_image(p)
                for p in message.parts
                if isinstance(p, ImagePart) or (isinstance(p, TextPart) and p.text)
            ]
        if not parts:
            continue
        if out and out[-1]["role"] == role:
            out[-1]["parts"].extend(parts)
        else:
            out.append({"role": role, "parts": parts})
    return out


def _model_parts(message: Message, *, own: bool, names: ToolNames) -> list[dict[str, Any]]:
    parts: list[dict[str, Any]] = []
    for part in message.parts:
        if isinstance(part, TextPart) and part.text:
            parts.append({"text": part.text})
        elif isinstance(part, ToolCallPart):
            call: dict[str, Any] = {
                "name": names.wire(part.name),
                "args": as_object(part.arguments),
            }
            if own and not part.id.startswith(_MINTED_PREFIX):
                call["id"] = part.id
            entry: dict[str, Any] = {"functionCall": call}
            if own and part.signature:
                entry["thoughtSignature"] = part.signature
            parts.append(entry)
        elif isinstance(part, ThinkingPart) and own:
            _thinking(part, parts)
    return parts


def _thinking(part: ThinkingPart, parts: list[dict[str, Any]]) -> None:
    if part.text:
        entry: dict[str, Any] = {"text": part.text, "thought": True}
        if part.signature:
            entry["thoughtSignature"] = part.signature
        parts.append(entry)
    elif part.signature:
        # A signature alone: the decoder emits it after the text part that carried it.
        last = parts[-1] if parts else None
        if last is not None and "text" in last and "thoughtSignature" not in last:
            last["thoughtSignature"] = part.signature
        else:
            parts.append({"text": "", "thoughtSignature": part.signature})


def _response(
    call: ToolCallPart, result: ToolResultPart, *, own: bool, names: ToolNames
) -> dict[str, Any]:
    key = "error" if result.is_error else "output"
    content = with_notes(result.content, result.images, _NO_IMAGES)
    response: dict[str, Any] = {"name": names.wire(call.name), "response": {key: content}}
    if own and not call.id.startswith(_MINTED_PREFIX):
        response["id"] = call.id
    return {"functionResponse": response}


class GeminiBackend(HTTPBackend):
    """Streams from the Gemini API as SSE (``alt=sse``)."""

    profile = PROFILES["gemini"]

    def url(self) -> str:
        model = quote(self.model.removeprefix("models/"), safe="")
        return f"{self.base_url}/v1beta/models/{model}:streamGenerateContent?alt=sse"

    def auth_headers(self, api_key: str) -> dict[str, str]:
        return {"x-goog-api-key": api_key}

    def build_body(self, request: ModelRequest) -> dict[str, Any]:
        return build_body(
            request,
            model=self.model,
            backend=self.name,
            tool_format=self.tool_format,
            vision=self.vision,
        )


__all__ = ["GeminiBackend", "build_body"]
