"""Gemini ``streamGenerateContent`` (Gemini API and Vertex AI) -> normalized events.

Wire format (https://ai.google.dev/api/generate-content). With ``alt=sse`` each SSE
``data`` is a whole ``GenerateContentResponse``; without it the body is one JSON array of
them, which ``feed`` detects from the first byte. Gemini has no terminal event: the body
closes after a chunk carrying ``finishReason``, so the message ends in ``close`` (a body
that closes without one was cut). Usage comes on every chunk; the last one counts.

Parts of ``candidates[0].content``: ``text`` (``thought: true`` marks reasoning), a
``thoughtSignature`` that must be echoed back to Gemini (kept as a signature-only
``ThinkingDelta``, or on the ``ToolCallStart`` of the call it belongs to), and
``functionCall``. On the Gemini API a call arrives whole (``args`` an object): it is
announced, its arguments sent as one JSON text delta, and ended. On Vertex with
``streamFunctionCallArguments`` the name comes first with ``willContinue`` and the
arguments follow as ``partialArgs``, turned into JSON text by ``_vertex_args``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from toolwire.decode._base import SSEJSONDecoder
from toolwire.decode._json_array import JsonObjects
from toolwire.decode._vertex_args import PartialArgs, PartialArgsError
from toolwire.errors import UsageError
from toolwire.events import Event, StopReason, StreamError, TextDelta, ThinkingDelta, Usage
from toolwire.sse import SSEEvent

_REFUSAL = frozenset(
    {
        "SAFETY",
        "RECITATION",
        "PROHIBITED_CONTENT",
        "BLOCKLIST",
        "SPII",
        "IMAGE_SAFETY",
        "IMAGE_PROHIBITED_CONTENT",
        "IMAGE_RECITATION",
    }
)
# Finish reasons that mean the model's tool call was unusable: the turn failed.
_FAILED = frozenset({"MALFORMED_FUNCTION_CALL", "UNEXPECTED_TOOL_CALL", "TOO_MANY_TOOL_CALLS"})


def _stop_reason(finish: str) -> StopReason:
    if finish == "MAX_TOKENS":
        return "max_tokens"
    if finish in _REFUSAL:
        return "refusal"
    return "end_turn"  # STOP, and reasons such as OTHER that say nothing more useful


def _usage(meta: Any) -> Usage | None:
    """``usageMetadata`` -> Usage; ``None`` when the chunk carries no counts (Vertex).

    ``output_tokens`` includes ``thoughtsTokenCount``: Gemini counts thinking apart from
    ``candidatesTokenCount``, the other providers count it within their output tokens.
    """
    if not isinstance(meta, dict):
        return None
    prompt, out, thoughts = (
        meta.get("promptTokenCount"),
        meta.get("candidatesTokenCount"),
        meta.get("thoughtsTokenCount"),
    )
    if prompt is None and out is None and thoughts is None:
        return None
    output = None if out is None and thoughts is None else (out or 0) + (thoughts or 0)
    return Usage(
        input_tokens=prompt,
        output_tokens=output,
        cache_read_tokens=meta.get("cachedContentTokenCount"),
        reasoning_tokens=thoughts,
    )


def _raw(payload: dict[str, Any], sse: SSEEvent) -> str:
    # A payload fed without SSE framing (``feed_payload``) has no text of its own.
    return sse.data or json.dumps(payload)


@dataclass(slots=True)
class _Streaming:
    """A Vertex call whose arguments are still arriving."""

    key: int
    args: PartialArgs
    failed: bool = False


class GeminiDecoder(SSEJSONDecoder):
    """Decode a Gemini ``streamGenerateContent`` body (SSE or JSON array) into events."""

    def __init__(self) -> None:
        super().__init__()
        self._form: str | None = None  # "sse" or "array", known at the first byte
        self._lead = b""  # leading whitespace seen before the form is known
        self._objects = JsonObjects()
        self._finish: StopReason | None = None
        self._usage: Usage | None = None
        self._response_id = ""
        self._streaming: _Streaming | None = None

    def feed(self, data: bytes) -> list[Event]:
        if self._closed:
            raise UsageError("decoder.feed() called after close()")
        if self._form is None:
            data = self._lead + data
            head = data.lstrip()
            if not head:
                self._lead = data
                return []
            self._lead = b""
            self._form = "array" if head[:1] in (b"[", b"{") else "sse"
        if self._form == "sse":
            return super().feed(data)
        out: list[Event] = []
        for text in self._objects.feed(data):
            self._on_data(SSEEvent(data=text), out)
        return out

    def close(self) -> list[Event]:
        out: list[Event] = []
        cut = "" if self._closed else self._objects.close()
        if cut and not self._calls.message_ended:
            out.append(StreamError("the stream ended inside a JSON object", cut))
        return out + super().close()

    # -- payloads -----------------------------------------------------------------------

    def _on_payload(self, payload: dict[str, Any], sse: SSEEvent, out: list[Event]) -> None:
        error = payload.get("error")
        if error is not None:
            message = error.get("message") if isinstance(error, dict) else None
            out.extend(self._calls.fail_message(str(message or error), _raw(payload, sse)))
            return
        if not self._response_id and isinstance(payload.get("responseId"), str):
            self._response_id = payload["responseId"]
        self._usage = _usage(payload.get("usageMetadata")) or self._usage
        candidates = payload.get("candidates")
        if not isinstance(candidates, list) or not candidates:
            feedback = payload.get("promptFeedback")
            if isinstance(feedback, dict) and feedback.get("blockReason"):
                self._finish = "refusal"  # the prompt itself was blocked: no candidates come
            return
        candidate = candidates[0] if isinstance(candidates[0], dict) else {}
        content = candidate.get("content")
        parts = content.get("parts") if isinstance(content, dict) else None
        for part in parts if isinstance(parts, list) else ():
            if isinstance(part, dict):
                self._on_part(part, out)
        finish = candidate.get("finishReason")
        if isinstance(finish, str) and finish:
            self._on_finish(finish, candidate, _raw(payload, sse), out)

    def _on_part(self, part: dict[str, Any], out: list[Event]) -> None:
        signature = part.get("thoughtSignature")
        signature = signature if isinstance(signature, str) and signature else None
        call = part.get("functionCall")
        if isinstance(call, dict):
            self._on_function_call(call, signature, out)
            return
        text = part.get("text")
        if isinstance(text, str) and text:
            out.append(ThinkingDelta(text) if part.get("thought") else TextDelta(text))
        if signature is not None:
            out.append(ThinkingDelta("", signature=signature))

    def _on_finish(
        self, finish: str, candidate: dict[str, Any], raw: str, out: list[Event]
    ) -> None:
        if finish in _FAILED:
            why = candidate.get("finishMessage")
            message = f"Gemini stopped with {finish}" + (f": {why}" if why else "")
            out.extend(self._calls.fail_message(message, raw))
            return
        self._finish = _stop_reason(finish)
        if finish == "STOP":
            self._end_streaming(out)  # the model is done: what arrived is the whole call
        # MessageEnd waits for the body to close: a later chunk may still carry usage.

    def _on_close(self, out: list[Event]) -> None:
        if self._calls.message_ended:
            return
        if self._finish is None:
            super()._on_close(out)  # no finishReason: the stream was cut
            return
        out.extend(self._calls.end_message(self._finish, self._usage))

    # -- function calls -------------------------------------------------------------------

    def _on_function_call(
        self, call: dict[str, Any], signature: str | None, out: list[Event]
    ) -> None:
        name = call.get("name")
        more = bool(call.get("willContinue"))
        if isinstance(name, str) and name:
            self._end_streaming(out)  # a new call: the previous one is over
            key = self._calls.started
            call_id = call.get("id")
            if not isinstance(call_id, str) or not call_id:
                call_id = self._mint_id(key)
            out.append(self._calls.start(key, call_id, name, signature))
            if not more and "partialArgs" not in call:
                self._whole_call(key, call.get("args"), out)
                return
            self._streaming = _Streaming(key, PartialArgs())
        streaming = self._streaming
        if streaming is None:
            return  # a continuation with no call to continue: nothing to attach it to
        for entry in call.get("partialArgs") or ():
            self._partial(streaming, entry, out)
        if not more:
            self._end_streaming(out)

    def _whole_call(self, key: int, args: Any, out: list[Event]) -> None:
        text = json.dumps({} if args is None else args, ensure_ascii=False, separators=(",", ":"))
        delta = self._calls.delta(key, text)
        if delta is not None:
            out.append(delta)
        out.append(self._calls.end(key))

    def _partial(self, streaming: _Streaming, entry: Any, out: list[Event]) -> None:
        if streaming.failed:
            return
        try:
            if not isinstance(entry, dict):
                raise PartialArgsError("partialArgs entry is not an object")
            text = streaming.args.feed(entry)
        except PartialArgsError as e:
            streaming.failed = True
            out.append(self._calls.fail(streaming.key, f"unreadable streamed arguments: {e}"))
            return
        delta = self._calls.delta(streaming.key, text)
        if delta is not None:
            out.append(delta)

    def _end_streaming(self, out: list[Event]) -> None:
        streaming, self._streaming = self._streaming, None
        if streaming is None or streaming.failed:
            return
        delta = self._calls.delta(streaming.key, streaming.args.finish())
        if delta is not None:
            out.append(delta)
        out.append(self._calls.end(streaming.key))

    def _mint_id(self, index: int) -> str:
        # Gemini API calls often have no id. Minted from the response id (unique per
        # response) and the call's position, so the same bytes always give the same id.
        return f"gemini-{self._response_id or 'call'}-{index}"


__all__ = ["GeminiDecoder"]
