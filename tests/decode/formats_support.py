"""The shared cases of the open-weight text formats, for each format's own test file.

``../shared/conformance/text-tool-calls/cases-formats.json`` (SOURCES.md beside it says where
each case comes from) is read at test time, never copied here. Each format's test decodes
its cases whole, split at every byte boundary, byte by byte and in random chunks (through
``TextStream``, so a split may cut a UTF-8 character): the events must be the same every
way, and the calls and content must be what the peer's test asserts, or the case is listed
with its reason (each reason is also in docs/decoding.md).

The comparison follows SOURCES.md: a call that failed is reported to the model, never run,
so it counts as no call; without the tool's schema a value stays the string the model
wrote, which agrees with a peer's typed value when JSON reads it as that value.
"""

from __future__ import annotations

import json
import math
import random
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from tests.decode.tags_support import decode, merge_adjacent
from tests.helpers import CONFORMANCE, check_invariants, feed_pieces, shared, split_at
from toolwire.decode import TextDecoder, TextStream
from toolwire.events import Event, TextDelta, ThinkingDelta, ToolCallEnd, ToolCallStart

Factory = Callable[[Mapping[str, Any] | None], TextDecoder]


def cases(fmt: str) -> list[dict[str, Any]]:
    """The shared cases of one format (the caller is marked ``@needs_shared``)."""
    path = shared(CONFORMANCE / "text-tool-calls" / "cases-formats.json")
    every = json.loads(path.read_text(encoding="utf-8"))["cases"]
    return [case for case in every if case["format"] == fmt]


def tools_for(case: Mapping[str, Any]) -> dict[str, Any]:
    """The tools the peer's parser had, and (SOURCES.md) the tools its expected calls name."""
    tools: dict[str, Any] = dict(case["schema"] or {})
    for call in case["expected"]["calls"]:
        tools.setdefault(call["name"], {"type": "object"})
    return tools


def merged(events: Iterable[Event]) -> list[Event]:
    """Adjacent text, deltas of one call and reasoning merged: the same in any chunking."""
    out: list[Event] = []
    for ev in merge_adjacent(events):
        if isinstance(ev, ThinkingDelta) and out and isinstance(out[-1], ThinkingDelta):
            out[-1] = ThinkingDelta(out[-1].text + ev.text)
        else:
            out.append(ev)
    return out


def decode_bytes(factory: Callable[[], TextDecoder], pieces: Iterable[bytes]) -> list[Event]:
    events = feed_pieces(TextStream(factory()), pieces)
    check_invariants(events)
    return events


def split_mismatches(factory: Callable[[], TextDecoder], text: str, seed: int) -> list[str]:
    """Chunkings whose events differ from the whole text's: every single cut, byte by byte,
    and ten random chunkings."""
    data = text.encode()
    whole = merged(decode_bytes(factory, [data]))
    rng = random.Random(seed)
    ways: dict[str, list[bytes]] = {f"cut at {i}": split_at(data, [i]) for i in range(1, len(data))}
    ways["byte by byte"] = [data[i : i + 1] for i in range(len(data))]
    for n in range(10):
        cuts = rng.sample(range(1, max(len(data), 2)), min(len(data) - 1, rng.randint(1, 40)))
        ways[f"random chunking {n}"] = split_at(data, cuts)
    return [way for way, pieces in ways.items() if merged(decode_bytes(factory, pieces)) != whole]


def outcome(events: Iterable[Event]) -> tuple[list[dict[str, Any]], str]:
    """The calls that ended normally, and the visible text."""
    names: dict[str, str] = {}
    calls: list[dict[str, Any]] = []
    text: list[str] = []
    for ev in events:
        if isinstance(ev, TextDelta):
            text.append(ev.text)
        elif isinstance(ev, ToolCallStart):
            names[ev.id] = ev.name
        elif isinstance(ev, ToolCallEnd) and ev.ok:
            calls.append({"name": names[ev.id], "arguments": ev.arguments})
    return calls, "".join(text)


def mismatches(case: Mapping[str, Any], events: list[Event]) -> list[str]:
    """How the decoded calls and content differ from what the peer's test asserts."""
    want = case["expected"]
    calls, content = outcome(events)
    check, expected = want["calls_check"], want["calls"]
    if check != "any" and len(calls) != len(expected):
        return [f"calls: {calls}"]
    bad: list[str] = []
    trim = case["value_rule"] == "trim"
    for got, call in zip(calls, expected, strict=False):
        if check in ("exact", "names") and got["name"] != call["name"]:
            bad.append(f"name {got['name']}")
        elif check == "exact":
            typed = got["name"] in (case["schema"] or {})
            args = got["arguments"]
            keys = call["arguments"] if want["args_match"] == "keys" else args
            pairs = [(args.get(k), call["arguments"].get(k, _MISSING)) for k in keys]
            same = all(same_value(g, w, typed=typed, trim=trim) for g, w in pairs)
            if not same or (
                want["args_match"] == "exact" and args.keys() != call["arguments"].keys()
            ):
                bad.append(f"arguments {args!r}")
    rule = want["content_rule"]
    if rule is not None and not same_content(content, want["content"], rule):
        bad.append(f"content {content!r}")
    return bad


_MISSING = object()


def _untyped(text: str) -> Any:
    stripped = text.strip()
    try:
        return json.loads(stripped)
    except ValueError:
        return text


def same_value(got: Any, want: Any, *, typed: bool, trim: bool) -> bool:
    if not typed and isinstance(got, str) and not isinstance(want, str):
        got = _untyped(got)
    if isinstance(got, str) and isinstance(want, str):
        return got.strip() == want.strip() if trim else got == want
    if isinstance(got, bool) or isinstance(want, bool):
        return got is want
    if isinstance(got, int | float) and isinstance(want, int | float):
        return math.isclose(got, want) if isinstance(got, float) else got == want
    if isinstance(got, dict) and isinstance(want, dict):
        return got.keys() == want.keys() and all(
            same_value(got[k], want[k], typed=typed, trim=trim) for k in got
        )
    if isinstance(got, list) and isinstance(want, list):
        return len(got) == len(want) and all(
            same_value(g, w, typed=typed, trim=trim) for g, w in zip(got, want, strict=True)
        )
    return bool(type(got) is type(want) and got == want)


def same_content(content: str, want: str | list[str] | None, rule: str) -> bool:
    if isinstance(want, list):
        return all(part in content for part in want)
    expect = want or ""
    return {
        "exact": content == expect,
        "strip": content.strip() == expect.strip(),
        "contains": expect in content,
        "startswith": content.startswith(expect),
    }[rule]


def check_format(fmt: str, factory: Factory, differences: Mapping[str, str]) -> str:
    """Every shared case of ``fmt``: the same events in every chunking, and the peer's calls
    and content unless ``differences`` gives the reason it differs. Returns the tally."""
    results: dict[str, list[str]] = {}
    for n, case in enumerate(cases(fmt)):
        tools = tools_for(case)

        def make(tools: dict[str, Any] = tools) -> TextDecoder:
            return factory(tools)

        split = split_mismatches(make, case["input"], seed=n)
        assert not split, f"{case['id']}: chunking changes the events: {split[:5]}"
        results[case["id"]] = mismatches(case, decode_bytes(make, [case["input"].encode()]))
    agree = [cid for cid, bad in results.items() if not bad]
    unexplained = {cid: bad for cid, bad in results.items() if bad and cid not in differences}
    stale = [cid for cid in differences if not results.get(cid)]
    tally = f"{fmt}: {len(agree)}/{len(results)} agree, {len(results) - len(agree)} documented"
    assert results, f"no shared case of {fmt}"
    assert not unexplained, f"{tally}; not documented: {json.dumps(unexplained, indent=1)}"
    assert not stale, f"{tally}; documented but agreeing (or gone): {stale}"
    return tally


def assert_same_in_any_chunking(
    factory: Callable[[], TextDecoder], text: str, cuts: Iterable[int] = ()
) -> None:
    """Whole, char by char and at ``cuts``: the same events once adjacent pieces merge
    (reasoning too, which ``tags_support``'s version leaves apart)."""
    whole = merged(decode(factory, [text]))
    assert merged(decode(factory, list(text))) == whole
    assert merged(decode(factory, split_at(text, cuts))) == whole
