"""Build the ``toolwire demo`` replay cassette from the readable session script below.

The cassette (``src/toolwire/samples/demo_session.jsonl``, format in docs/design.md,
"Replay cassettes") holds one Anthropic Messages streaming body per model response, written
the way the API streams it: ``message_start``, ``ping``, ``content_block_start`` /
``_delta`` / ``_stop`` for thinking (with a ``signature_delta``), text and ``tool_use``
(arguments as ``input_json_delta`` pieces, the first one empty), ``message_delta`` with
the stop reason and usage, ``message_stop``. Ids, piece sizes and token counts are
derived deterministically, so the output only changes when the script does.

Usage::

    python scripts/make_demo_cassette.py           # (re)write the cassette
    python scripts/make_demo_cassette.py --check   # exit 1 if it is out of date
"""

from __future__ import annotations

import hashlib
import json
import random
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

SAMPLES = Path(__file__).resolve().parent.parent / "src" / "toolwire" / "samples"
CASSETTE = SAMPLES / "demo_session.jsonl"
PROJECT = SAMPLES / "demo_project"
MODEL = "claude-sonnet-4-5-20250929"
PACING = {"chunk_size": 64, "chunk_delay_ms": 15}
# A stand-in with the shape of a real signature: the replay backend never sends it on.
SIGNATURE_PREFIX = "EqoBCkgIBhgCIkDemoSignatureNotReal"


@dataclass(frozen=True)
class Step:
    """One model response: optional thinking, optional text, then tool calls (or none)."""

    text: str = ""
    thinking: str = ""
    calls: list[tuple[str, dict[str, Any]]] = field(default_factory=list)


PLAN = [
    ("Read the failing slugify tests", "Reading the failing slugify tests"),
    ("Find the slugify implementation", "Finding the slugify implementation"),
    ("Fix the bug", "Fixing the bug"),
    ("Run the test suite", "Running the test suite"),
]


def todos(done: int, active: int | None) -> dict[str, Any]:
    """TodoWrite arguments: the first ``done`` items completed, item ``active`` running."""
    items = []
    for i, (content, active_form) in enumerate(PLAN):
        status = "completed" if i < done else "in_progress" if i == active else "pending"
        items.append({"content": content, "status": status, "activeForm": active_form})
    return {"todos": items}


OLD_LINE = "    words = _WORD.findall(ascii_text)\n"
NEW_LINE = "    words = _WORD.findall(ascii_text.lower())\n"

STEPS = [
    Step(
        thinking="The user says the slugify tests fail. I should look at the tests first, "
        "then find the implementation, fix it, and run the whole suite to confirm.",
        text="I'll track this with a short plan, then start with the failing tests.",
        calls=[("TodoWrite", todos(0, 0))],
    ),
    Step(
        text="Let me see how the project is laid out.",
        calls=[("Glob", {"pattern": "**/*.py"})],
    ),
    Step(calls=[("Read", {"file_path": "tests/test_slugify.py"})]),
    Step(
        text="Both failing cases start with capital letters. Let me find where `slugify` "
        "is defined.",
        calls=[("Grep", {"pattern": "def slugify", "glob": "*.py", "output_mode": "content"})],
    ),
    Step(calls=[("Read", {"file_path": "textkit/slugify.py"})]),
    Step(
        thinking="_WORD is [a-z0-9]+, but the text is never lowercased before findall, so "
        "every capital letter is dropped: 'Hello' becomes 'ello'. Lowercasing the ASCII "
        "text before matching fixes it and keeps the accent handling.",
        text="Found it: `_WORD` only matches lowercase letters, and the text is never "
        "lowercased, so capitals are silently dropped (`Hello` becomes `ello`). "
        "Lowercasing before matching fixes it.",
        calls=[
            (
                "Edit",
                {"file_path": "textkit/slugify.py", "old_string": OLD_LINE, "new_string": NEW_LINE},
            )
        ],
    ),
    Step(
        text="Now let me run the test suite.",
        calls=[("Bash", {"command": "python -m unittest -q", "description": "Run the test suite"})],
    ),
    Step(calls=[("TodoWrite", todos(4, None))]),
    Step(
        text="Fixed. `slugify` matched words with `[a-z0-9]+` but never lowercased its "
        "input, so every capital letter was dropped (`Hello, World!` became `ello-orld`). "
        "It now lowercases the text before matching, in `textkit/slugify.py`, and all 6 "
        "tests pass."
    ),
]


def _id(prefix: str, *seed: object) -> str:
    """A deterministic id shaped like Anthropic's (``msg_01``/``toolu_01`` + 22 chars)."""
    alphabet = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
    number = int.from_bytes(hashlib.sha256(repr(seed).encode()).digest(), "big")
    chars = []
    for _ in range(22):
        number, digit = divmod(number, len(alphabet))
        chars.append(alphabet[digit])
    return prefix + "".join(chars)


def _event(kind: str, data: dict[str, Any]) -> str:
    return f"event: {kind}\ndata: {json.dumps(data, ensure_ascii=False, separators=(',', ':'))}\n\n"


def _words(text: str, rng: random.Random) -> list[str]:
    """Text in the pieces a model streams: a few words at a time."""
    tokens = re.findall(r"\S+\s*|\s+", text)
    pieces = []
    while tokens:
        take = rng.randint(1, 4)
        pieces.append("".join(tokens[:take]))
        tokens = tokens[take:]
    return pieces


def _slices(text: str, rng: random.Random) -> list[str]:
    """Argument JSON cut anywhere (mid-key, mid-escape), as ``input_json_delta`` arrives."""
    pieces = []
    while text:
        take = rng.randint(3, 18)
        pieces.append(text[:take])
        text = text[take:]
    return pieces


def _block(index: int, start: dict[str, Any], deltas: list[dict[str, Any]]) -> list[str]:
    out = [_event("content_block_start", {"type": "content_block_start", "index": index,
                                          "content_block": start})]  # fmt: skip
    for delta in deltas:
        out.append(_event("content_block_delta", {"type": "content_block_delta",
                                                  "index": index, "delta": delta}))  # fmt: skip
    out.append(_event("content_block_stop", {"type": "content_block_stop", "index": index}))
    return out


def _blocks(n: int, step: Step, rng: random.Random) -> list[str]:
    events: list[str] = []
    if step.thinking:
        deltas = [{"type": "thinking_delta", "thinking": p} for p in _words(step.thinking, rng)]
        deltas.append({"type": "signature_delta", "signature": _id(SIGNATURE_PREFIX, n)})
        events += _block(0, {"type": "thinking", "thinking": "", "signature": ""}, deltas)
    if step.text:
        deltas = [{"type": "text_delta", "text": p} for p in _words(step.text, rng)]
        events += _block(int(bool(step.thinking)), {"type": "text", "text": ""}, deltas)
    index = int(bool(step.thinking)) + int(bool(step.text))
    for k, (name, arguments) in enumerate(step.calls):
        start = {"type": "tool_use", "id": _id("toolu_01", n, k), "name": name, "input": {}}
        pieces = ["", *_slices(json.dumps(arguments, ensure_ascii=False), rng)]
        deltas = [{"type": "input_json_delta", "partial_json": p} for p in pieces]
        events += _block(index + k, start, deltas)
    return events


def body(n: int, step: Step) -> str:
    """The SSE body of response ``n`` (0-based)."""
    rng = random.Random(n)
    written = step.thinking + step.text + json.dumps([c[1] for c in step.calls])
    message: dict[str, Any] = {
        "id": _id("msg_01", n), "type": "message", "role": "assistant", "model": MODEL,
        "content": [], "stop_reason": None, "stop_sequence": None,
        "usage": {"input_tokens": 40 + 9 * n, "cache_creation_input_tokens": 900 * (n == 0),
                  "cache_read_input_tokens": 2800 + 700 * n, "output_tokens": 1},
    }  # fmt: skip
    stop = "tool_use" if step.calls else "end_turn"
    events = [_event("message_start", {"type": "message_start", "message": message})]
    events.append(_event("ping", {"type": "ping"}))
    events += _blocks(n, step, rng)
    events.append(_event("message_delta", {"type": "message_delta",
                         "delta": {"stop_reason": stop, "stop_sequence": None},
                         "usage": {"output_tokens": 12 + len(written) // 4}}))  # fmt: skip
    events.append(_event("message_stop", {"type": "message_stop"}))
    return "".join(events)


def check_script() -> None:
    """The script must fit the bundled project, or the demo would fail on replay."""
    for step in STEPS:
        for name, arguments in step.calls:
            path = PROJECT / arguments.get("file_path", "")
            if name in ("Read", "Edit") and not path.is_file():
                raise ValueError(f"{path} is not in the demo project")
            if name == "Edit":
                found = path.read_text(encoding="utf-8").count(arguments["old_string"])
                if found != 1:
                    raise ValueError(f"old_string occurs {found} times in {path}")
    if STEPS[-1].calls or not all(step.calls for step in STEPS[:-1]):
        raise ValueError("every response but the last must call a tool; the last must not")


def render() -> str:
    """The whole cassette, one JSON line per response."""
    check_script()
    lines = [
        json.dumps({"provider": "anthropic", "body": body(n, step), **PACING}, ensure_ascii=False)
        for n, step in enumerate(STEPS)
    ]
    return "\n".join(lines) + "\n"


def main(argv: list[str]) -> int:
    text = render()
    if "--check" in argv:
        current = CASSETTE.read_text(encoding="utf-8") if CASSETTE.exists() else ""
        if current != text:
            print(f"{CASSETTE} is out of date: run {Path(__file__).name}", file=sys.stderr)
            return 1
        return 0
    CASSETTE.write_text(text, encoding="utf-8")
    print(f"wrote {CASSETTE} ({len(STEPS)} responses, {len(text):,} bytes)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
