"""toolwire's decoders against what the production parsers' own test suites assert.

The cases live in ``../shared/conformance`` (recorded provider streams in ``streams/``,
model texts in ``text-tool-calls/``; each folder's SOURCES.md says where every case comes
from) and are read at test time, never copied here. One test loops over all of them, so
that the tally ``N/M agree, K documented differences`` is printed once, also under xdist
(tests/conftest.py prints it at the end of the session). Every case that
disagrees must be listed in ``DIFFERENCES`` with its reason, and each reason is written
in docs/decoding.md ("Where toolwire differs from its peers").
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from tests.helpers import CONFORMANCE, needs_shared, shared
from toolwire.decode import decoder_for
from toolwire.decode.tags import HermesDecoder, Qwen3CoderDecoder
from toolwire.events import (
    Event,
    MessageEnd,
    StreamError,
    TextDelta,
    ThinkingDelta,
    ToolCallEnd,
    ToolCallStart,
)

# toolwire's stop reason in the AI SDK's unified vocabulary (streams/SOURCES.md).
_FINISH = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "tool_use": "tool-calls",
    "max_tokens": "length",
    "refusal": "content-filter",
    "error": "error",
}

_LENIENT_HERMES = (
    "llama.cpp's Hermes 2 Pro parser also takes other wrappers around the JSON (<tool>, "
    "<tools>, <response>, <json>, <xml>, <function_call>); toolwire takes <tool_call>, "
    '<function=NAME>, <function name="NAME">, and a JSON object naming a declared tool '
    "at the start of a line, bare or in a code fence: the model was shown only "
    "<tool_call>, and an object indented under another tag reads as quoted data"
)
# The AI SDK names a provider-run call by the key its caller gave that tool in the request
# (``toolNameMapping.toCustomToolName``); the recorded test offered OpenAI's web search as
# ``webSearch``. toolwire has no such alias: it names the call by its wire type.
_AI_SDK_TOOL_NAMES = {"webSearch": "web_search"}
# llama.cpp's test-chat.cpp offers these tools to the Hermes 2 Pro template (its cases
# record no schema); toolwire's agent and proxy give the decoder the tools they offered.
_LLAMACPP_TOOLS: dict[str, Any] = {
    "special_function": {"type": "object", "properties": {"arg1": {"type": "integer"}}},
    "python": {"type": "object", "properties": {"code": {"type": "string"}}},
}

DIFFERENCES: dict[str, str] = {
    "vllm-hermes-non_streaming_invalid_json": (
        "only the final '}' is missing before the text ends: toolwire ends the call when "
        "its last member is complete (documented leniency); vLLM reports no call"
    ),
    "sglang-qwen25-valid_call_survives_malformed_sibling": (
        "a JSON array of calls in one <tool_call> is not a call: the templates write one "
        "object per block, and an array with a broken member would run in part; it stays "
        "visible text with a stream_error"
    ),
    **{
        f"llamacpp-hermes-lenient_{name}": _LENIENT_HERMES
        for name in (
            "tool_tag",
            "tools_tag",
            "response_tag",
            "fenced_xml_response",
            "fenced_json_function_call",
            "json_tag",
            "xml_tag",
            "JSON_tag",
        )
    },
}
"""Case id -> why toolwire deliberately differs (each also in docs/decoding.md)."""


# -- streams ------------------------------------------------------------------------------


def _decode_stream(fmt: str, data: bytes) -> list[Event]:
    decoder = decoder_for(fmt)
    return decoder.feed(data) + decoder.close()


def _summary(events: list[Event]) -> dict[str, Any]:
    names: dict[str, tuple[str, bool]] = {}
    calls: list[dict[str, Any]] = []
    server: list[dict[str, Any]] = []
    text, thinking, signatures, errors = [], [], [], []
    stop, usage = None, None
    for ev in events:
        if isinstance(ev, TextDelta):
            text.append(ev.text)
        elif isinstance(ev, ThinkingDelta):
            thinking.append(ev.text)
            if ev.signature:
                signatures.append(ev.signature)
        elif isinstance(ev, ToolCallStart):
            names[ev.id] = (ev.name, bool(getattr(ev, "server", False)))
        elif isinstance(ev, ToolCallEnd):
            name, on_server = names.get(ev.id, ("", False))
            call = {"name": name, "arguments": ev.arguments if ev.ok else None, "id": ev.id}
            (server if on_server else calls).append(call)
        elif isinstance(ev, StreamError):
            errors.append(ev.message)
        elif isinstance(ev, MessageEnd):
            stop, usage = ev.stop_reason, ev.usage
    return {
        "text": "".join(text),
        "thinking": "".join(thinking),
        "signatures": signatures,
        "tool_calls": calls,
        "provider_executed_calls": server,
        "finish": _FINISH.get(stop or "", stop),
        "errors": errors,
        "usage": usage,
    }


def _same_calls(got: list[dict[str, Any]], want: list[dict[str, Any]]) -> bool:
    if len(got) != len(want):
        return False
    for g, w in zip(got, want, strict=True):
        if g["name"] != w["name"] or not _same_value(g["arguments"], w.get("arguments")):
            return False
        if w.get("id") is not None and g["id"] != w["id"]:
            return False
    return True


def _stream_mismatches(case: Mapping[str, Any], folder: Path) -> list[str]:
    want = case["expect"]
    got = _summary(_decode_stream(case["format"], (folder / case["file"]).read_bytes()))
    return _text_parts(want, got) + _call_parts(want, got)


def _text_parts(want: Mapping[str, Any], got: Mapping[str, Any]) -> list[str]:
    bad: list[str] = []
    if want.get("text") is not None and got["text"] != want["text"]:
        bad.append("text")
    if want.get("text_nows") is not None and "".join(got["text"].split()) != want["text_nows"]:
        bad.append("text_nows")
    for part in want.get("text_contains") or ():
        if part not in got["text"]:
            bad.append(f"text_contains {part!r}")
    if want.get("thinking") is not None and got["thinking"] != want["thinking"]:
        bad.append("thinking")
    for part in want.get("thinking_contains") or ():
        if part not in got["thinking"]:
            bad.append(f"thinking_contains {part!r}")
    if want.get("thinking_signature") and not got["signatures"]:
        bad.append("thinking_signature")
    return bad


def _call_parts(want: Mapping[str, Any], got: Mapping[str, Any]) -> list[str]:
    bad: list[str] = []
    for key in ("tool_calls", "provider_executed_calls"):
        expected = want.get(key)
        if expected is not None and key == "provider_executed_calls":
            expected = [
                {**c, "name": _AI_SDK_TOOL_NAMES.get(c["name"], c["name"])} for c in expected
            ]
        if expected is not None and not _same_calls(got[key], expected):
            bad.append(f"{key}: {got[key]}")
    finishes = (want.get("finish"), *(want.get("finish_also") or ()))
    if want.get("finish") is not None and got["finish"] not in finishes:
        bad.append(f"finish {got['finish']}")
    if want.get("error") is not None:
        failed = bool(got["errors"]) or got["finish"] == "error"
        if failed != want["error"]:
            bad.append(f"error {got['errors']}")
    for part in want.get("error_contains") or ():
        if not any(part in message for message in got["errors"]):
            bad.append(f"error_contains {part!r}")
    if want.get("usage") is not None:
        usage = got["usage"]
        for key, value in want["usage"].items():
            if getattr(usage, key, None) != value:
                bad.append(f"usage {key}")
    return bad


# -- text formats -------------------------------------------------------------------------


def _decode_text(case: Mapping[str, Any]) -> tuple[list[dict[str, Any]], str]:
    if case["format"] == "hermes":
        tools = case["schema"] if case["schema_given"] else None
        if case["id"].startswith("llamacpp-"):
            tools = _LLAMACPP_TOOLS
        decoder: HermesDecoder | Qwen3CoderDecoder = HermesDecoder(tools)
    else:
        decoder = Qwen3CoderDecoder(case["schema"] if case["schema_given"] else None)
    events = decoder.feed(case["input"]) + decoder.close()
    names: dict[str, str] = {}
    calls: list[dict[str, Any]] = []
    text: list[str] = []
    for ev in events:
        if isinstance(ev, TextDelta):
            text.append(ev.text)
        elif isinstance(ev, ToolCallStart):
            names[ev.id] = ev.name
        elif isinstance(ev, ToolCallEnd) and ev.ok:
            # A call that failed is reported to the model as failed, not run: for the
            # comparison it is no call, as the peers that refuse it have none.
            calls.append({"name": names[ev.id], "arguments": ev.arguments})
    return calls, "".join(text)


def _untyped(text: str) -> Any:
    """toolwire's typing rule for a value whose schema it does not know (SOURCES.md)."""
    stripped = text.strip()
    try:
        return json.loads(stripped)
    except ValueError:
        return {"True": True, "False": False, "None": None}.get(stripped, text)


def _same_value(got: Any, want: Any, *, typed: bool = True, trim: bool = False) -> bool:
    if not typed and isinstance(got, str) and not isinstance(want, str):
        got = _untyped(got)
    if trim and isinstance(got, str) and isinstance(want, str):
        return got.strip() == want.strip()
    if isinstance(got, bool) or isinstance(want, bool):
        return got is want if isinstance(got, bool) and isinstance(want, bool) else False
    if isinstance(got, int | float) and isinstance(want, int | float):
        if isinstance(got, float) or isinstance(want, float):
            return math.isclose(float(got), float(want), rel_tol=1e-12)
        return got == want
    if isinstance(got, dict) and isinstance(want, dict):
        return got.keys() == want.keys() and all(
            _same_value(got[k], want[k], typed=typed, trim=trim) for k in got
        )
    if isinstance(got, list) and isinstance(want, list):
        return len(got) == len(want) and all(
            _same_value(g, w, typed=typed, trim=trim) for g, w in zip(got, want, strict=True)
        )
    return bool(type(got) is type(want) and got == want)


def _text_mismatches(case: Mapping[str, Any]) -> list[str]:
    want = case["expected"]
    calls, content = _decode_text(case)
    bad: list[str] = []
    check, args = want["calls_check"], want["args_match"]
    typed, trim = case["schema_given"], case["value_rule"] == "trim"
    expected = want["calls"]
    if check in ("exact", "names", "count") and len(calls) != len(expected):
        bad.append(f"calls: {calls}")
    elif check in ("exact", "names"):
        for g, w in zip(calls, expected, strict=True):
            if g["name"] != w["name"]:
                bad.append(f"name {g['name']}")
            elif check == "exact" and args == "keys":
                # The peer asserts only these keys' values.
                got = g["arguments"] if isinstance(g["arguments"], dict) else {}
                if not all(
                    k in got and _same_value(got[k], v, typed=typed, trim=trim)
                    for k, v in w["arguments"].items()
                ):
                    bad.append(f"keys {g['arguments']}")
            elif check == "exact" and not _same_value(
                g["arguments"], w["arguments"], typed=typed, trim=trim
            ):
                bad.append(f"arguments {g['arguments']!r}")
    rule, text = want["content_rule"], want["content"]
    if rule is not None and not _same_content(content, text, rule):
        bad.append(f"content {content!r}")
    return bad


def _same_content(content: str, want: str | list[str] | None, rule: str) -> bool:
    if isinstance(want, list):  # several substrings, each asserted
        return all(part in content for part in want)
    expect = want or ""  # vLLM's None: no content
    return {
        "exact": content == expect,
        "strip": content.strip() == expect.strip(),
        "rstrip": content.rstrip() == expect.rstrip(),
        "contains": expect in content,
        "startswith": content.startswith(expect),
    }[rule]


# -- the one test -------------------------------------------------------------------------


def _load(name: str) -> Any:
    return json.loads(shared(CONFORMANCE / name).read_text(encoding="utf-8"))


@needs_shared
def test_conformance_with_the_peers(record_property: Any) -> None:
    streams = _load("streams/expected.json")
    texts = _load("text-tool-calls/cases.json")["cases"]
    results: dict[str, list[str]] = {}
    for case in streams:
        results[case["id"]] = _stream_mismatches(case, CONFORMANCE / "streams")
    for case in texts:
        results[case["id"]] = _text_mismatches(case)
    agree = [cid for cid, bad in results.items() if not bad]
    documented = [cid for cid, bad in results.items() if bad and cid in DIFFERENCES]
    unexplained = {cid: bad for cid, bad in results.items() if bad and cid not in DIFFERENCES}
    stale = [cid for cid in DIFFERENCES if not results.get(cid)]
    tally = f"{len(agree)}/{len(results)} agree, {len(documented)} documented differences"
    record_property("conformance_tally", tally)
    assert not unexplained, f"{tally}; not documented: {json.dumps(unexplained, indent=1)}"
    assert not stale, f"{tally}; documented but agreeing (or gone): {stale}"
