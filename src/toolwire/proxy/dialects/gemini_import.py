"""A Gemini ``generateContent`` request -> the neutral history and request.

``contents`` turn by turn: a ``model`` turn is an assistant message (``text``, thoughts,
``functionCall``); a ``user`` turn splits into a ``tool`` message (its
``functionResponse`` parts, first, each matched to a call of the turn before by ``id``,
else by name in call order) and a ``user`` message (``text``, ``inlineData`` and
``fileData`` images; other files as a one-line note). Signatures stay where
``backends.gemini`` puts them back: a call's ``thoughtSignature`` on its call, a
thought's on its thought (consecutive thought parts are one thought, as streamed), one
on plain text as a signature-only thought after that text; each in standard base64.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from toolwire.history import (
    ImagePart,
    Message,
    Part,
    TextPart,
    ThinkingPart,
    ToolCallPart,
    ToolResultPart,
)
from toolwire.history.pairing import UNKNOWN_TOOL
from toolwire.proxy.errors import BadRequestError

_RESULT_KEYS = ("output", "content", "result")
# Google's SDKs hold a signature as bytes and send it back in URL-safe base64; the
# providers sent (and verify) standard base64, which Gemini reads as well.
_STANDARD_BASE64 = str.maketrans("-_", "+/")
# Values that are the client's own data, whose keys are kept as sent.
_OPAQUE = frozenset(
    {"args", "response", "parametersJsonSchema", "responseJsonSchema", "default", "example"}
)


def camel_keys(value: Any) -> Any:
    """``value`` with every field name in lowerCamelCase.

    Google's JSON takes a field as ``mimeType`` or as the proto's ``mime_type``, and the
    Python SDK sends some nested ones so (``inlineData.mime_type``,
    ``thinkingConfig.include_thoughts``). A call's ``args``, a ``response``, a JSON
    Schema and a schema's property names are the client's own: kept as sent.
    """
    if isinstance(value, list):
        return [camel_keys(v) for v in value]
    if not isinstance(value, dict):
        return value
    out: dict[str, Any] = {}
    for key, item in value.items():
        name = _camel(key) if isinstance(key, str) else key
        if name in _OPAQUE:
            out[name] = item
        elif name == "properties" and isinstance(item, dict):
            out[name] = {k: camel_keys(v) for k, v in item.items()}
        else:
            out[name] = camel_keys(item)
    return out


def _camel(key: str) -> str:
    if "_" not in key.strip("_"):
        return key
    head, *rest = key.split("_")
    return head + "".join(word[:1].upper() + word[1:] for word in rest)


def import_contents(contents: Any) -> tuple[Message, ...]:
    """``contents`` as a neutral history; ``BadRequestError`` for a malformed one."""
    if not isinstance(contents, list) or not contents:
        raise BadRequestError("contents: a non-empty list is required")
    out: list[Message] = []
    calls: list[ToolCallPart] = []
    for number, content in enumerate(contents):
        parts = _parts(content, number)
        if content.get("role") == "model":
            message = _model_turn(parts, number)
            calls = message.tool_calls()
            if message.parts:
                out.append(message)
        else:
            out.extend(_user_turn(parts, calls, number))
            calls = []
    return tuple(out)


def _parts(content: Any, number: int) -> list[Mapping[str, Any]]:
    where = f"contents[{number}]"
    if not isinstance(content, dict) or content.get("role", "user") not in ("user", "model"):
        raise BadRequestError(f"{where}: an object whose role is user or model is required")
    parts = content.get("parts") or []
    if not isinstance(parts, list) or not all(isinstance(p, dict) for p in parts):
        raise BadRequestError(f"{where}.parts: a list of objects is required")
    return parts


def _model_turn(parts: list[Mapping[str, Any]], number: int) -> Message:
    out: list[Part] = []
    for index, part in enumerate(parts):
        signature = part.get("thoughtSignature")
        if not isinstance(signature, str) or not signature:
            signature = None
        else:
            signature = signature.translate(_STANDARD_BASE64)
        call = part.get("functionCall")
        if isinstance(call, dict):
            out.append(_call(call, signature, f"call_{number}_{index}"))
        elif part.get("thought"):
            _thought(out, str(part.get("text") or ""), signature)
        else:
            text = part.get("text")
            if isinstance(text, str) and text:
                out.append(TextPart(text))
            if signature is not None:
                out.append(ThinkingPart("", signature))
    return Message("assistant", tuple(out))


def _thought(out: list[Part], text: str, signature: str | None) -> None:
    """A thought part: it continues the thought before it until that one is signed."""
    last = out[-1] if out else None
    if isinstance(last, ThinkingPart) and last.signature is None and last.redacted is None:
        out[-1] = ThinkingPart(last.text + text, signature)
    else:
        out.append(ThinkingPart(text, signature))


def _call(call: Mapping[str, Any], signature: str | None, minted: str) -> ToolCallPart:
    name = call.get("name")
    if not isinstance(name, str) or not name:
        raise BadRequestError("functionCall: a name is required")
    call_id = call.get("id")
    args = call.get("args")
    return ToolCallPart(
        call_id if isinstance(call_id, str) and call_id else minted,
        name,
        args if isinstance(args, dict) else {},
        signature,
    )


def _user_turn(
    parts: list[Mapping[str, Any]], calls: list[ToolCallPart], number: int
) -> list[Message]:
    open_calls = list(calls)  # calls not answered yet, in call order
    results: list[ToolResultPart] = []
    rest: list[Part] = []
    for part in parts:
        response = part.get("functionResponse")
        if isinstance(response, dict):
            results.append(_result(response, open_calls, number))
        else:
            rest.extend(_user_part(part))
    out = [Message("tool", tuple(results))] if results else []
    if rest:
        out.append(Message("user", tuple(rest)))
    return out


def _result(
    response: Mapping[str, Any], open_calls: list[ToolCallPart], number: int
) -> ToolResultPart:
    """A ``functionResponse`` answering one of ``open_calls`` (removed from it): the one
    with its ``id``, else the first of its name; an answer to no call keeps its own id."""
    name = str(response.get("name") or UNKNOWN_TOOL)
    wanted = response.get("id")
    match = next((c for c in open_calls if c.id == wanted), None)
    if match is None:
        match = next((c for c in open_calls if c.name == name), None)
    if match is not None:
        open_calls.remove(match)
    call_id = match.id if match is not None else str(wanted or f"orphan_{number}_{name}")
    content, is_error = _response_text(response.get("response"))
    images = tuple(i for p in response.get("parts") or () for i in _images(p))
    return ToolResultPart(call_id, name, content, is_error, images)


def _response_text(response: Any) -> tuple[str, bool]:
    """What a call returned as text, and whether it failed (an ``error`` and no output)."""
    if not isinstance(response, dict):
        return _text(response), False
    if "error" in response and not any(k in response for k in _RESULT_KEYS):
        return _text(response["error"]), True
    for key in _RESULT_KEYS:
        if len(response) == 1 and key in response:
            return _text(response[key]), False
    return _text(response), False


def _text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def _user_part(part: Mapping[str, Any]) -> list[Part]:
    text = part.get("text")
    if isinstance(text, str):
        return [TextPart(text)] if text and not part.get("thought") else []
    images = _images(part)
    if images:
        return list(images)
    for key in ("inlineData", "fileData"):
        data = part.get(key)
        if isinstance(data, dict):
            return [TextPart(f"[{data.get('mimeType') or 'file'} attachment]")]
    return []


def _images(part: Any) -> tuple[ImagePart, ...]:
    """The image an ``inlineData`` or ``fileData`` part holds (none: not an image)."""
    if not isinstance(part, dict):
        return ()
    inline, linked = part.get("inlineData"), part.get("fileData")
    if isinstance(inline, dict) and str(inline.get("mimeType", "")).startswith("image/"):
        return (ImagePart(str(inline["mimeType"]), str(inline.get("data") or "")),)
    if isinstance(linked, dict) and str(linked.get("mimeType", "")).startswith("image/"):
        return (ImagePart(str(linked["mimeType"]), url=str(linked.get("fileUri") or "")),)
    return ()


__all__ = ["camel_keys", "import_contents"]
