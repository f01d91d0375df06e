"""Benchmark: a long session's context: prompt caching, compaction.

PART 1, prompt caching. A replayed 200-turn tool loop: one prompt, then in each turn the
model calls Read on a file of 2-6 KB from a synthetic project (60 files, read in a
shuffled cycle) and the result goes back. The 200 requests are built with the agent's
real pieces (``toolwire.backends.anthropic.build_body``, the agent's tools and system
prompt) from the growing history, with breakpoints (``prompt_cache = true``) and
without, and fed to a simulator of Anthropic's documented prompt-cache rules; no
network. Reported per turn: prompt tokens, cache reads / writes / uncached input, the
share of the prompt read from the cache, what that costs next to no caching (reads at
0.1x the input price, writes at 1.25x), and the bytes sent. Then the loop's totals for
each breakpoint strategy, also for a loop of 12 parallel Reads per turn (25 new blocks
a turn, past the 20-block lookback): what the second rolling breakpoint is for.

The simulator (``PromptCache``):

* a request is its blocks in the order Anthropic reads them: each tool definition, the
  system blocks, then each content block of each message (its role and message index
  are part of the block);
* each breakpoint writes a cache entry: the hash of the exact prefix up to and
  including its block, ``cache_control`` keys left out (moving a mark changes no
  content), unless that prefix is under the minimum (1,024 tokens);
* a request reads the longest written prefix that ends at one of its breakpoints or at
  one of the 20 blocks before one; what follows it up to the last breakpoint is written
  (cache-write tokens), the rest is plain input;
* entries never expire (the 5-minute TTL is refreshed by every hit of a live loop);
* tokens: UTF-8 bytes of a block's JSON / 3, rounded up.

PART 2, compaction: ``bench/context_loop.py`` (the agent against a fake server that
enforces a 32k window), run from the section at the end of this module.
"""

from __future__ import annotations

import argparse
import hashlib
import importlib.util
import json
import math
import random
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from toolwire.agent.session.system_prompt import compose
from toolwire.backends.anthropic import build_body
from toolwire.backends.base import ModelRequest
from toolwire.history import Message, TextPart, ToolCallPart, ToolResultPart, user
from toolwire.tools import tool_specs
from toolwire.tools.output import numbered

CWD = "/work/proj"
MODEL = "claude-sonnet-4-5"
TURNS = 200
FILES = 60
SHOWN = (1, 10, 50, 100, 200)
MIN_CACHEABLE = 1024  # tokens; Anthropic's minimum for Sonnet and Opus
LOOKBACK = 20  # blocks before a breakpoint where a hit is looked for
READ_PRICE, WRITE_PRICE = 0.1, 1.25  # of the input price
WORDS = [
    "def", "return", "self", "value", "result", "items", "config", "path", "name", "index",
    "data", "buffer", "stream", "parse", "render", "handle", "error", "status", "count",
]  # fmt: skip


def tokens(n_bytes: int) -> int:
    """The estimate the simulator charges: UTF-8 bytes / 3, rounded up."""
    return math.ceil(n_bytes / 3)


def _json(value: Any) -> str:
    """As ``HTTPBackend.body_text`` serializes a body."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)


# -- the replayed loop -------------------------------------------------------------------


def project(seed: int = 12) -> dict[str, list[str]]:
    """``FILES`` files of 2-6 KB of code-like lines, by path."""
    rng = random.Random(seed)
    files: dict[str, list[str]] = {}
    for i in range(FILES):
        lines: list[str] = []
        size, target = 0, rng.randint(2_000, 6_000)
        while size < target:
            indent = "    " * rng.randint(0, 3)
            words = " ".join(rng.choice(WORDS) for _ in range(rng.randint(3, 9)))
            lines.append(f"{indent}{words}({rng.randint(0, 999)})")
            size += len(lines[-1]) + 8
        files[f"{CWD}/src/pkg{i % 6}/module_{i}.py"] = lines
    return files


def tool_loop(turns: int, width: int = 1, seed: int = 12) -> Iterator[list[Message]]:
    """The history each of ``turns`` requests is built from (the same list, growing);
    each turn reads ``width`` files in parallel."""
    files = project(seed)
    order = list(files)
    random.Random(seed).shuffle(order)
    history = [user("The tests in src/ fail since the refactoring. Read the modules and fix it.")]
    for turn in range(turns):
        yield history
        paths = [order[(turn * width + i) % len(order)] for i in range(width)]
        calls = [
            ToolCallPart(f"toolu_{turn:04d}_{i}", "Read", {"file_path": path})
            for i, path in enumerate(paths)
        ]
        said = TextPart(f"Reading {', '.join(p.rsplit('/', 1)[1] for p in paths)} next.")
        history.append(Message("assistant", (said, *calls), "bench"))
        results = [
            ToolResultPart(c.id, "Read", numbered(files[p], 1, 2000))
            for c, p in zip(calls, paths, strict=True)
        ]
        history.append(Message("tool", tuple(results)))


def requests(turns: int, *, cache: bool, width: int = 1) -> Iterator[dict[str, Any]]:
    """The Messages API body of each request of the loop."""
    system = compose(CWD, (), "", plan=False)
    tools = tuple(tool_specs())
    for history in tool_loop(turns, width):
        request = ModelRequest(system, tuple(history), tools, max_tokens=8192, cache=cache)
        yield build_body(request, model=MODEL, backend="bench")


# -- the cache simulator ------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Usage:
    """One request as Anthropic would bill it (tokens) and what went over the wire."""

    read: int
    written: int
    uncached: int
    sent_bytes: int

    @property
    def prompt(self) -> int:
        return self.read + self.written + self.uncached

    @property
    def cost(self) -> float:
        """Input cost in units of uncached input tokens."""
        return self.uncached + READ_PRICE * self.read + WRITE_PRICE * self.written


class PromptCache:
    """Anthropic's prompt cache, as documented (module doc): hashes of written prefixes."""

    def __init__(self) -> None:
        self.entries: set[bytes] = set()

    def send(self, body: dict[str, Any]) -> Usage:
        blocks = _blocks(body)
        running = hashlib.sha256()
        prefixes: list[bytes] = []  # the hash of the prefix ending at each block
        totals: list[int] = []  # its tokens
        total = 0
        for _, text in blocks:
            running.update(text.encode())
            prefixes.append(running.digest())
            total += tokens(len(text.encode()))
            totals.append(total)
        marks = [i for i, (marked, _) in enumerate(blocks) if marked]
        hit = -1
        for mark in marks:
            for i in range(mark, max(mark - LOOKBACK, 0) - 1, -1):
                if prefixes[i] in self.entries:
                    hit = max(hit, i)
                    break
        read = totals[hit] if hit >= 0 else 0
        written_to = read
        for mark in marks:
            if totals[mark] >= MIN_CACHEABLE and mark > hit:
                self.entries.add(prefixes[mark])
                written_to = max(written_to, totals[mark])
        sent = len(_json(body).encode())
        return Usage(read, written_to - read, total - written_to, sent)


def _blocks(body: dict[str, Any]) -> list[tuple[bool, str]]:
    """Each block in cache order: whether it is a breakpoint, and its content's JSON."""
    out: list[tuple[bool, str]] = []

    def add(where: str, block: dict[str, Any]) -> None:
        content = {k: v for k, v in block.items() if k != "cache_control"}
        out.append(("cache_control" in block, where + _json(content)))

    for tool in body.get("tools", []):
        add("tool:", tool)
    system = body.get("system")
    if isinstance(system, str):
        system = [{"type": "text", "text": system}]
    for block in system or []:
        add("system:", block)
    for n, message in enumerate(body["messages"]):
        for block in message["content"]:
            add(f"{n}:{message['role']}:", block)
    return out


# -- PART 1: prompt caching -------------------------------------------------------------


def part1_prompt_caching(turns: int) -> None:
    """The tool loop with breakpoints and without, through ``PromptCache``."""
    with_marks = PromptCache()
    cached = [with_marks.send(body) for body in requests(turns, cache=True)]
    without = PromptCache()
    plain = [without.send(body) for body in requests(turns, cache=False)]
    print(f"### Prompt caching: a {turns}-turn Read loop, Anthropic's cache rules simulated\n")
    print(
        "| turn | prompt tokens | cache read | cache write | uncached | read / prompt "
        "| read / prompt, no breakpoints | input cost vs no cache | bytes sent | bytes sent, "
        "no breakpoints |"
    )
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    rows = [(str(t), cached[t - 1], plain[t - 1]) for t in SHOWN if t <= turns]
    rows.append(("total", _sum(cached), _sum(plain)))
    for label, c, p in rows:
        print(
            f"| {label} | {c.prompt:,} | {c.read:,} | {c.written:,} | {c.uncached:,} "
            f"| {_pct(c.read, c.prompt)} | {_pct(p.read, p.prompt)} | {_pct(c.cost, p.cost)} "
            f"| {c.sent_bytes:,} | {p.sent_bytes:,} |"
        )
    misses = [n for n, u in enumerate(cached[1:], start=2) if u.read == 0]
    print(f"\nRequests after the first that read nothing from the cache: {len(misses)}.")
    _strategies(turns)


# Which breakpoints a request keeps: (name, a filter of the marked messages' indices).
STRATEGIES: list[tuple[str, Callable[[int, int], bool] | None]] = [
    ("none", None),
    ("tools + system", lambda index, count: False),
    ("+ the last message", lambda index, count: index == count - 1),
    ("+ the user message before it (toolwire)", lambda index, count: True),
]


def _strategies(turns: int) -> None:
    """Totals for each breakpoint strategy, with one Read per turn and with 12 in parallel
    (25 new blocks per turn: past the 20-block lookback of a single rolling mark)."""
    wide = max(1, turns // 5)
    loops = [(f"{turns} turns, 1 Read each", turns, 1), (f"{wide} turns, 12 Reads each", wide, 12)]
    print(
        "\n| breakpoints | "
        + " | ".join(f"{name}: read / prompt, cost" for name, *_ in loops)
        + " |"
    )
    print("|---|" + "---:|" * len(loops))
    for name, keep in STRATEGIES:
        cells = []
        for _, count, width in loops:
            cache, baseline = PromptCache(), 0.0
            used = []
            for body in requests(count, cache=keep is not None, width=width):
                _unmark(body, keep)
                used.append(cache.send(body))
                baseline += used[-1].prompt
            total = _sum(used)
            cells.append(f"{_pct(total.read, total.prompt)}, {_pct(total.cost, baseline)}")
        print(f"| {name} | " + " | ".join(cells) + " |")
    print("\ncost: input cost over the loop against no breakpoints (reads 0.1x, writes 1.25x).")


def _unmark(body: dict[str, Any], keep: Callable[[int, int], bool] | None) -> None:
    """Take the marks ``keep`` refuses off the body's messages."""
    messages = body["messages"]
    for index, message in enumerate(messages):
        if keep is not None and not keep(index, len(messages)):
            for block in message["content"]:
                block.pop("cache_control", None)


def _sum(usages: list[Usage]) -> Usage:
    return Usage(
        sum(u.read for u in usages),
        sum(u.written for u in usages),
        sum(u.uncached for u in usages),
        sum(u.sent_bytes for u in usages),
    )


def _pct(part: float, whole: float) -> str:
    return f"{100 * part / whole:.1f}%" if whole else "-"


# -- PART 2: compaction under a 32k window ------------------------------------------------


def part2_compaction(turns: int) -> None:
    """``bench/context_loop.py``: the agent against a fake server enforcing a 32k window
    (its own 200 turns; ``turns`` is not passed on)."""
    del turns
    # bench/ is not a package: load the sibling script by its path, whichever way this
    # one was started (``python bench/context.py`` or ``python -m bench.context``).
    path = Path(__file__).with_name("context_loop.py")
    spec = importlib.util.spec_from_file_location("context_loop", path)
    assert spec is not None
    assert spec.loader is not None
    loop = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = loop  # dataclasses look their module up while defined
    spec.loader.exec_module(loop)
    bodies: list[dict[str, Any]] = []
    print("\n### Compaction: " + "\n".join(loop.table(bodies)))
    cache = PromptCache()
    usages = [cache.send(body) for body in bodies]
    total = _sum(usages)
    after = [u for body, u in zip(bodies, usages, strict=True) if _first_after(body, bodies)]
    print(
        f"\nThe same {len(bodies)} requests through the prompt-cache simulator: "
        f"{_pct(total.read, total.prompt)} of prompt tokens read from cache, input cost "
        f"{_pct(total.cost, total.prompt)} of uncached; the {len(after)} requests right "
        f"after a compaction read {_pct(_sum(after).read, _sum(after).prompt)} "
        "(tools and system prompt: the compacted block is new to the cache once)."
    )


def _first_after(body: dict[str, Any], bodies: list[dict[str, Any]]) -> bool:
    """Whether ``body`` is the first request with its compaction block."""
    text = _json(body["messages"][0])
    index = next(i for i, b in enumerate(bodies) if b is body)
    return "[TOOLWIRE" in text and (index == 0 or _json(bodies[index - 1]["messages"][0]) != text)


PARTS: dict[str, Callable[[int], None]] = {
    "caching": part1_prompt_caching,
    "compaction": part2_compaction,
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=TURNS)
    parser.add_argument("--part", choices=sorted(PARTS), action="append", help="default: all")
    opts = parser.parse_args()
    for name in opts.part or PARTS:
        PARTS[name](opts.turns)


if __name__ == "__main__":
    main()
