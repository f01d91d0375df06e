"""OpenAI Chat Completions stream decoder (and the many servers that copy the format).

Theory of operation. Each SSE event is a ``chat.completion.chunk``; only choice 0 is read
(https://platform.openai.com/docs/api-reference/chat-streaming). Its ``delta`` carries
text (``content``), reasoning (``reasoning_content`` or ``reasoning``: vLLM, DeepSeek,
OpenRouter), a ``refusal``, and ``tool_calls`` fragments. ``finish_reason`` ends the
choice, a chunk with empty ``choices`` carries ``usage``, and ``data: [DONE]`` (not JSON)
ends the body.

Tool-call fragments are grouped into *slots*, one per call, and a slot becomes a
``ToolCalls`` entry once its name is complete. Which slot a fragment belongs to:

* by ``index`` when present; a new ``id`` at an index whose call is open is a new call
  (ollama repeats ``index: 0`` for every parallel call: ollama/ollama #15457);
* without ``index`` (ollama #7881, Gemini's OpenAI endpoint): by ``id`` when present, else
  the most recent call. An empty ``id`` counts as absent (DeepSeek, vLLM send ``""``).

When the name is complete. OpenAI sends the whole name in the first fragment together with
``arguments: ""``; some servers send it in pieces, some repeat it on later fragments. Rule:
name text accumulates until a fragment of the same call carries ``arguments`` (a string,
even ``""``), or a fragment of another call, ``finish_reason`` or the end arrives; then the
call starts. So OpenAI's calls start on their first fragment, a name-only fragment (vLLM)
waits one fragment, and a name never starts half-written. Name text after the start is
ignored (Qwen3.5 repeats the name on the closing fragment: agentscope-java #1216; MiniMax
on every fragment: hermes-agent #8259), as is a name piece equal to the name so far.
Argument text that comes before the name (vercel/ai #14722) waits and follows the start.

Calls stay open until ``finish_reason`` because fragments of several calls may interleave;
a call without an ``id`` gets ``call_<n>`` (n = its position among the response's calls).
"""

from __future__ import annotations

import json
from collections.abc import Hashable
from dataclasses import dataclass, field, replace
from typing import Any

from toolwire.decode._base import SSEJSONDecoder
from toolwire.decode._fields import get_dict, get_int, get_str
from toolwire.events import Event, StopReason, StreamError, TextDelta, ThinkingDelta, Usage
from toolwire.sse import SSEEvent

_FINISH: dict[str, StopReason] = {
    "stop": "end_turn",
    "length": "max_tokens",
    "tool_calls": "tool_use",
    "function_call": "tool_use",
    "content_filter": "refusal",
}
# Finish reasons that cut the output: a call whose arguments did not parse fails with why.
_CUT_WHY: dict[str, str] = {
    "length": "the response hit max_tokens before the call's arguments ended",
    "content_filter": "the provider's content filter stopped the call's arguments",
}


@dataclass(slots=True)
class _Slot:
    """One tool call of the response, from its first fragment until it ends."""

    key: int  # the ToolCalls key: creation order, unique even when a server reuses an index
    id: str | None = None
    name: str = ""
    args: list[str] = field(default_factory=list)  # argument text seen before the start
    started: bool = False
    ended: bool = False


def _choice0(payload: dict[str, Any]) -> dict[str, Any] | None:
    choices = payload.get("choices")
    if not isinstance(choices, list):
        return None
    for choice in choices:
        if isinstance(choice, dict) and choice.get("index", 0) == 0:
            return choice
    return None


def _usage(raw: dict[str, Any]) -> Usage:
    return Usage(
        input_tokens=get_int(raw, "prompt_tokens"),
        output_tokens=get_int(raw, "completion_tokens"),
        cache_read_tokens=get_int(get_dict(raw, "prompt_tokens_details"), "cached_tokens"),
        reasoning_tokens=get_int(get_dict(raw, "completion_tokens_details"), "reasoning_tokens"),
    )


class OpenAIChatDecoder(SSEJSONDecoder):
    """Decode an OpenAI Chat Completions streaming body (``stream: true``) into events.

    Tolerates the quirks of OpenAI-compatible servers listed in the module docstring.
    ``message_end`` comes at ``[DONE]``, or at ``close()`` when ``finish_reason`` came
    without it; a body that closes before ``finish_reason`` was cut.
    """

    def __init__(self) -> None:
        super().__init__()
        self._slots: list[_Slot] = []
        self._by_index: dict[Hashable, _Slot] = {}
        self._by_id: dict[str, _Slot] = {}
        self._finish: str | None = None
        self._refused = False
        self._usage: Usage | None = None

    # -- chunks -----------------------------------------------------------------------

    def _on_data(self, sse: SSEEvent, out: list[Event]) -> None:
        # The sentinel is not JSON; the openai SDK also tests the prefix only.
        if sse.data.startswith("[DONE]"):
            if not self._calls.message_ended:
                self._end_message(out)
            return
        super()._on_data(sse, out)

    def _on_payload(self, payload: dict[str, Any], sse: SSEEvent, out: list[Event]) -> None:
        error = payload.get("error")
        if error is not None:
            self._on_error(error, sse.data or json.dumps(payload), out)
            return
        choice = _choice0(payload)
        if choice is not None:
            self._on_choice(choice, out)
        usage = payload.get("usage")
        if isinstance(usage, dict):  # usage: null on every other chunk
            self._usage = _usage(usage)

    def _on_error(self, error: Any, raw: str, out: list[Event]) -> None:
        # e.g. data: {"error": {"message": "...", "type": "server_error", "code": 502}}
        message = get_str(error, "message") if isinstance(error, dict) else str(error)
        code = error.get("code") if isinstance(error, dict) else None
        if isinstance(code, str) and code and message and code not in message:
            message = f"{code}: {message}"  # "tool_use_failed": what the user can act on
        out.extend(self._calls.fail_message(message or "the provider reported an error", raw))

    def _on_choice(self, choice: dict[str, Any], out: list[Event]) -> None:
        delta = get_dict(choice, "delta")
        reasoning = get_str(delta, "reasoning_content") or get_str(delta, "reasoning")
        if reasoning:  # one of the two: servers in transition send the same text in both
            out.append(ThinkingDelta(reasoning))
        if content := get_str(delta, "content"):
            out.append(TextDelta(content))
        if refusal := get_str(delta, "refusal"):
            self._refused = True
            out.append(TextDelta(refusal))
        fragments = delta.get("tool_calls")
        for fragment in fragments if isinstance(fragments, list) else ():
            if isinstance(fragment, dict):
                self._on_fragment(fragment, fragment.get("index"), out)
        legacy = delta.get("function_call")  # the deprecated `functions` API: one call
        if isinstance(legacy, dict):
            self._on_fragment({"function": legacy}, "function_call", out)
        reason = choice.get("finish_reason")
        if isinstance(reason, str) and reason and self._finish is None:
            self._on_finish(reason, out)

    def _on_close(self, out: list[Event]) -> None:
        if not self._calls.message_ended and self._finish is not None:
            self._end_message(out)  # finish_reason came; only [DONE] was lost
        super()._on_close(out)

    # -- tool-call fragments ----------------------------------------------------------

    def _on_fragment(self, fragment: dict[str, Any], index: Any, out: list[Event]) -> None:
        call_id = get_str(fragment, "id") or None
        slot = self._slot_for(index, call_id, out)
        if slot.ended:
            out.append(StreamError("tool call fragment after its call ended", json.dumps(fragment)))
            return
        self._start_others(slot, out)  # a fragment of this call completes the others' names
        if call_id is not None and slot.id is None and not slot.started:
            slot.id = call_id
            self._by_id.setdefault(call_id, slot)
        function = get_dict(fragment, "function")
        name = get_str(function, "name")
        if name and not slot.started and name != slot.name:
            slot.name += name
        arguments = function.get("arguments")
        if isinstance(arguments, str):
            if slot.name and not slot.started:
                self._start(slot, out)
            self._arguments(slot, arguments, out)

    def _slot_for(self, index: Any, call_id: str | None, out: list[Event]) -> _Slot:
        if isinstance(index, int | str):
            slot = self._by_index.get(index)
            if slot is not None and call_id and slot.id and call_id != slot.id and not slot.ended:
                self._end(slot, out)  # a new id where a call is open: index reused
                slot = None
            if slot is None or (slot.ended and call_id and call_id != slot.id):
                slot = self._by_index[index] = self._new_slot()
            return slot
        if call_id is not None:
            return self._by_id.get(call_id) or self._new_slot()
        if self._slots and not self._slots[-1].ended:
            return self._slots[-1]
        return self._new_slot()

    def _new_slot(self) -> _Slot:
        slot = _Slot(key=len(self._slots))
        self._slots.append(slot)
        return slot

    def _start_others(self, current: _Slot | None, out: list[Event]) -> None:
        for slot in self._slots:
            if slot is not current and slot.name and not slot.started and not slot.ended:
                self._start(slot, out)

    def _start(self, slot: _Slot, out: list[Event]) -> None:
        out.append(self._calls.start(slot.key, slot.id or "", slot.name))
        slot.started = True
        if slot.args:
            self._arguments(slot, "".join(slot.args), out)
            slot.args.clear()

    def _arguments(self, slot: _Slot, text: str, out: list[Event]) -> None:
        if not slot.started:
            slot.args.append(text)
            return
        event = self._calls.delta(slot.key, text)
        if event is not None:
            out.append(event)

    def _end(self, slot: _Slot, out: list[Event], cut_why: str | None = None) -> None:
        """End a call normally; ``cut_why`` replaces the parse error of a cut call."""
        slot.ended = True
        if not slot.started:
            if not slot.name:
                # Never named: nothing an editor could show or run. Say so, keep the text.
                if slot.args:
                    raw = "".join(slot.args)
                    out.append(StreamError("a tool call without a name was dropped", raw))
                return
            self._start(slot, out)
        end = self._calls.end(slot.key)
        if not end.ok and cut_why is not None:
            end = replace(end, error=cut_why)
        out.append(end)

    # -- the end ----------------------------------------------------------------------

    def _on_finish(self, reason: str, out: list[Event]) -> None:
        self._finish = reason
        self._start_others(None, out)  # names are complete now
        # Every open call ends here, also on "stop" (servers that send stop after tool
        # calls); on a cut, calls whose arguments are whole still succeed.
        for slot in self._slots:
            if not slot.ended:
                self._end(slot, out, _CUT_WHY.get(reason))

    def _end_message(self, out: list[Event]) -> None:
        if self._finish is None:
            # [DONE] without finish_reason: the server says the response is over, so calls
            # end normally; truncated arguments still fail to parse.
            self._on_finish("stop", out)
        stop = _FINISH.get(self._finish or "stop", "end_turn")
        if stop == "end_turn" and self._refused:
            stop = "refusal"
        out.extend(self._calls.end_message(stop, self._usage))


__all__ = ["OpenAIChatDecoder"]
