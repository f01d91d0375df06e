"""Benchmark: building a handoff for a long session.

Generates, deterministically (fixed seed), a transcript of 2,000 messages and about
20 MB: 100 user prompts, each followed by a tool loop of assistant calls and results
in a realistic mix (Read 45%, Bash 20%, Edit 12%, Write 8%, Grep 10%, Glob 5%) over a
pool of 80 files, so that many reads of the same file, edits after reads and repeated
commands give the dedup rules work. Files are 2-66 KB of code-like lines and command
outputs up to 44 KB.

Timed: ``build_handoff`` (split, extract, dedupe, budget, render, extractive summary;
no model call) with the default limits (40,000-char budget, 2,000 per item, last 2 turns
verbatim), and with a budget a hundred times larger (4 MB, 100 KB per item) to show
that cost follows what is kept, not what the history holds; median of N runs after one
warm-up. Also shown:
``history_digest`` of the head, the cost of the summary cache key, paid once per
switch only when a model writes the summary. Target: build at most 200 ms.
"""

from __future__ import annotations

import argparse
import random
import statistics
import time
from typing import Any

from toolwire.handoff import build_handoff, classify_command, history_digest
from toolwire.history import Message, TextPart, ToolCallPart, ToolResultPart

CWD = "/work/proj"
WORDS = [
    "def", "return", "self", "value", "result", "items", "config", "path", "name", "index",
    "data", "buffer", "stream", "parse", "render", "handle", "error", "status", "count",
    "total", "offset", "limit", "key", "token", "event",
]  # fmt: skip
TARGET_MESSAGES = 2000
PROMPTS = 100


def code(rng: random.Random, size: int) -> str:
    """``size`` characters of numbered, code-like lines (what ``Read`` returns)."""
    lines: list[str] = []
    total, n = 0, 1
    while total < size:
        indent = "    " * rng.randint(0, 3)
        words = " ".join(rng.choice(WORDS) for _ in range(rng.randint(3, 12)))
        line = f"{n:>6}\t{indent}{words}({rng.randint(0, 999)})\n"
        lines.append(line)
        total += len(line)
        n += 1
    return "".join(lines)


def call(rng: random.Random, files: list[str], i: int) -> tuple[ToolCallPart, str, bool]:
    """One call and its result text and error flag."""
    roll, path, cid = rng.random(), rng.choice(files), f"call_{i}"
    if roll < 0.45:
        args: dict[str, Any] = {"file_path": path}
        if rng.random() < 0.2:
            args.update(offset=rng.randint(1, 200), limit=100)
        return ToolCallPart(cid, "Read", args), code(rng, rng.randint(2_000, 66_000)), False
    if roll < 0.65:
        command = rng.choice(
            ["git status", "git diff", "pytest -q", "ls -la src", "make build", "grep -rn TODO src"]
        )
        failed = command == "pytest -q" and rng.random() < 0.5
        output = code(rng, rng.randint(200, 44_000))
        return ToolCallPart(cid, "Bash", {"command": command}), output, failed
    if roll < 0.77:
        old, new = code(rng, 300), code(rng, 400)
        args = {"file_path": path, "old_string": old, "new_string": new}
        return ToolCallPart(cid, "Edit", args), f"Edited {path}.", rng.random() < 0.1
    if roll < 0.85:
        content = code(rng, rng.randint(2_000, 40_000))
        return ToolCallPart(cid, "Write", {"file_path": path, "content": content}), "Wrote.", False
    if roll < 0.95:
        args = {"pattern": rng.choice(WORDS), "path": "src", "output_mode": "content"}
        return ToolCallPart(cid, "Grep", args), code(rng, rng.randint(500, 20_000)), False
    return ToolCallPart(cid, "Glob", {"pattern": "**/*.py"}), "\n".join(files), False


def transcript(seed: int = 5) -> list[Message]:
    """The benchmark history: exactly ``TARGET_MESSAGES`` messages, about 20 MB."""
    rng = random.Random(seed)
    files = [f"src/pkg{i % 8}/module_{i}.py" for i in range(80)]
    history: list[Message] = []
    loop = (TARGET_MESSAGES - PROMPTS * 2) // PROMPTS  # calls per prompt, 2 messages each
    for p in range(PROMPTS):
        history.append(Message("user", (TextPart(f"Step {p}: fix the failing tests."),)))
        for c in range(loop // 2):
            part, result, failed = call(rng, files, p * 100 + c)
            text = TextPart(f"Looking at {part.name} next.")
            history.append(Message("assistant", (text, part), "bench-a"))
            history.append(Message("tool", (ToolResultPart(part.id, part.name, result, failed),)))
        history.append(Message("assistant", (TextPart(f"Done with step {p}."),), "bench-a"))
    return history


def size_mb(history: list[Message]) -> float:
    chars = 0
    for message in history:
        for part in message.parts:
            if isinstance(part, ToolResultPart):
                chars += len(part.content)
            elif isinstance(part, TextPart):
                chars += len(part.text)
            elif isinstance(part, ToolCallPart):
                chars += sum(len(str(v)) for v in part.arguments.values())
    return chars / 1_000_000


def timed(fn: Any, runs: int) -> list[float]:
    fn()  # warm-up
    out = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        out.append((time.perf_counter() - start) * 1000)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15)
    opts = parser.parse_args()
    history = transcript()
    mb = size_mb(history)
    print("| step | messages | MB | median ms | min ms | output chars | items kept / total |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for name, limits in (
        ("build_handoff (defaults)", {}),
        ("build_handoff (4 MB budget)", {"max_tool_context_chars": 4_000_000,
                                         "max_tool_result_chars": 100_000}),
    ):  # fmt: skip
        handoff = build_handoff(history, cwd=CWD, target="bench-b", **limits)

        def run(lim: dict[str, int] = limits) -> None:
            classify_command.cache_clear()  # time the cold path: no command classified yet
            build_handoff(history, cwd=CWD, target="bench-b", **lim)

        build = timed(run, opts.runs)
        stats = handoff.stats
        kept = stats.files_read + stats.files_changed + stats.commands + stats.other_tools
        print(
            f"| {name} | {len(history)} | {mb:.1f} | {statistics.median(build):.1f} "
            f"| {min(build):.1f} | {len(handoff.block)} | {kept} / {len(handoff.items)} |"
        )
    digest = timed(lambda: history_digest(history[: handoff.tail_start]), opts.runs)
    print(
        f"| history_digest (LLM cache key) | {handoff.tail_start} | {mb:.1f} "
        f"| {statistics.median(digest):.1f} | {min(digest):.1f} | - | - |"
    )
    print(f"\n{opts.runs} runs after a warm-up; target: build_handoff median at most 200 ms.")


if __name__ == "__main__":
    main()
