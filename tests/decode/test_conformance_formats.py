"""The newer text formats against what the production parsers' own test suites assert.

The cases are ``../shared/conformance/text-tool-calls/cases-formats.json`` (model texts with
the calls vLLM, SGLang and llama.cpp extract; SOURCES.md beside it says where each comes
from), read at test time, never copied here. One test per format in the registry
(``toolwire.decode.textformats``) that has cases: each case is decoded whole and in several
chunkings, which must all give the same events, and the calls and content are compared as
the peer's test asserts them (``test_conformance``'s rules). Every case that disagrees is in
``DIFFERENCES`` with its reason, and each is listed in docs/decoding.md.

The decoder is given the tools the peer's parser had (``schema``) and those the expected
calls name (SOURCES.md: vLLM does not filter by declared name); toolwire's agent and proxy
always give the tools they offered.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from tests.decode.tags_support import merge_adjacent
from tests.decode.test_conformance import _same_content, _same_value
from tests.helpers import CONFORMANCE, check_invariants, feed_pieces, needs_shared, shared
from toolwire.decode.textformats import TEXT_FORMATS, text_decoder
from toolwire.events import Event, TextDelta, ToolCallEnd, ToolCallStart

_OLDER = ("xml-tags", "hermes", "qwen3-coder")  # tests/decode/test_conformance.py
# The markup families have a test file each (tests/decode/test_<format>.py, through
# ``formats_support.check_format``: every byte boundary, byte by byte, random chunks).
_OWN_FILE = ("glm45", "kimi_k2", "minimax_m2", "openai_harmony", "seed_oss", "qwen3_xml")
_SIZES = (1, 2, 3, 5, 8, 13)
_DOCS = Path(__file__).parents[2] / "docs" / "decoding.md"

_MID_LINE = (
    "a JSON object after prose on the same line is quoted, not a call: toolwire reads a "
    "bare object only at the start of a line (as for Hermes), so prose that shows a call "
    "never runs one"
)

_CUT = (
    "a call whose arguments the text cut off fails (it was shown as a call, and is "
    "reported, never run); the peer counts it with the arguments it could read"
)
_SPECIAL_SHOWN = (
    "markup after a special token that is no call reverts to text with the token, as "
    "for <tool_call> (text is never lost; a stream_error says why); the peer drops the "
    "token"
)

_UNDECLARED_FIRST = (
    "a bare list whose first call names an undeclared tool is a Python list in prose or "
    "code, not calls: it stays text (with <|python_start|> before it, the same list's "
    "declared call runs: vllm-llama4py-bad_sibling_tagged agrees)"
)

DIFFERENCES: dict[str, str] = {
    "vllm-llama3-simple_with_surrounding_text": _MID_LINE,
    "vllm-llama3-multiple_json_with_surrounding_text": _MID_LINE,
    "vllm-mistral-pre_v11-regex_fallback_junk": (
        "words between [TOOL_CALLS] and the list are no form Mistral writes: the block "
        "reverts to text; the peer searches the rest of the text for a list"
    ),
    "vllm-mistral-pre_v11-regex_fallback_fails": _SPECIAL_SHOWN,
    "vllm-mistral-v11-truncated_arguments": _CUT,
    "vllm-pythonic-bad_sibling_call": _UNDECLARED_FIRST,
    "vllm-pythonic-non_finite_argument": _UNDECLARED_FIRST,
    "llamacpp-dsv31-call_inside_reasoning_ignored": (
        "the text decoders do not split reasoning from the answer (a server's reasoning "
        "field or the outer stream does): a call written before </think> counts as one; "
        "llama.cpp, told the thinking was open, drops it"
    ),
}
"""Case id -> why toolwire deliberately differs (each also in docs/decoding.md)."""


def _tools(case: Mapping[str, Any]) -> dict[str, Any]:
    tools: dict[str, Any] = dict(case["schema"] or {}) if case["schema_given"] else {}
    for call in case["expected"]["calls"]:
        tools.setdefault(call["name"], {})
    return tools


def _decode(case: Mapping[str, Any], size: int | None) -> list[Event]:
    text: str = case["input"]
    pieces = [text] if size is None else [text[i : i + size] for i in range(0, len(text), size)]
    events = feed_pieces(text_decoder(case["format"], _tools(case)), pieces)
    check_invariants(events, message_end=False)
    return merge_adjacent(events)


def _outcome(events: list[Event]) -> tuple[list[dict[str, Any]], str]:
    names: dict[str, str] = {}
    calls: list[dict[str, Any]] = []
    for ev in events:
        if isinstance(ev, ToolCallStart):
            names[ev.id] = ev.name
        elif isinstance(ev, ToolCallEnd) and ev.ok:
            # A failed call is reported to the model, never run: for the peers, no call.
            calls.append({"name": names[ev.id], "arguments": ev.arguments})
    return calls, "".join(ev.text for ev in events if isinstance(ev, TextDelta))


def _same_args(got: Any, want: Any, case: Mapping[str, Any]) -> bool:
    if want is None:  # the peer's test asserts the name only
        return True
    typed, trim = case["schema_given"], case["value_rule"] == "trim"
    if case["expected"]["args_match"] == "keys":
        return isinstance(got, dict) and all(
            k in got and _same_value(got[k], v, typed=typed, trim=trim) for k, v in want.items()
        )
    return _same_value(got, want, typed=typed, trim=trim)


def _mismatches(case: Mapping[str, Any]) -> list[str]:
    whole = _decode(case, None)
    bad = [f"split {n}" for n in _SIZES if _decode(case, n) != whole]
    calls, content = _outcome(whole)
    want = case["expected"]
    check, expected = want["calls_check"], want["calls"]
    if check in ("exact", "names", "count") and len(calls) != len(expected):
        bad.append(f"calls: {calls}")
    elif check in ("exact", "names"):
        for got, w in zip(calls, expected, strict=True):
            if got["name"] != w["name"]:
                bad.append(f"name {got['name']}")
            elif check == "exact" and not _same_args(got["arguments"], w["arguments"], case):
                bad.append(f"arguments {got['arguments']!r}")
    rule = want["content_rule"]
    if rule is not None and not _same_content(content, want["content"], rule):
        bad.append(f"content {content!r}")
    return bad


def _cases(fmt: str) -> list[dict[str, Any]]:
    path = shared(CONFORMANCE / "text-tool-calls" / "cases-formats.json")
    cases: list[dict[str, Any]] = json.loads(path.read_text(encoding="utf-8"))["cases"]
    return [c for c in cases if c["format"] == fmt]


@needs_shared
@pytest.mark.parametrize("fmt", [f for f in TEXT_FORMATS if f not in (*_OLDER, *_OWN_FILE)])
def test_format_conformance_with_the_peers(fmt: str, record_property: Any) -> None:
    cases = _cases(fmt)
    if not cases:
        pytest.skip(f"../shared holds no cases for {fmt} (tests/decode/test_tags_formats.py)")
    results = {c["id"]: _mismatches(c) for c in cases}
    agree = [cid for cid, bad in results.items() if not bad]
    documented = [cid for cid, bad in results.items() if bad and cid in DIFFERENCES]
    unexplained = {cid: bad for cid, bad in results.items() if bad and cid not in DIFFERENCES}
    stale = [cid for cid in DIFFERENCES if cid in results and not results[cid]]
    tally = f"{fmt}: {len(agree)}/{len(results)} agree, {len(documented)} documented differences"
    record_property("conformance_tally", tally)
    assert not unexplained, f"{tally}; not documented: {json.dumps(unexplained, indent=1)}"
    assert not stale, f"{tally}; documented but agreeing: {stale}"


def test_every_difference_is_in_the_docs() -> None:
    docs = _DOCS.read_text(encoding="utf-8")
    missing = [cid for cid in DIFFERENCES if f"`{cid}`" not in docs]
    assert not missing, f"docs/decoding.md does not list: {missing}"
