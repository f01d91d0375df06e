"""Benchmark: the Berkeley Function Calling Leaderboard's calls in every text format.

Each ground-truth call of BFCL's categories simple, multiple, parallel and parallel
multiple (``bfcl-eval``'s data, read where pip installed it: ``uv pip install --no-deps
bfcl-eval``) is written in each format of the registry as that model family's template
writes it, several calls as the format writes several (``render_many``), then decoded with
the case's tools declared: whole, cut at every byte boundary (every case, or every Nth with
``--every-cut-step N``; every case takes about 12 minutes of one core), and in five
random chunkings. A case agrees when every way gives
the ground truth. The table is agree / total per format and category; then every miss, by
its documented reason (docs/decoding.md), and the negative corpus's count of false calls
(tests/decode/negative: whole, byte by byte, three random chunkings).
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parents[1]))  # the tests' data and harness

from tests.decode.bfcl_support import CATEGORIES, KNOWN, Case, cases, data_dir, known_reason, miss
from tests.decode.negative.corpus import TOOLS, corpus
from tests.helpers import split_at

from toolwire.decode import TEXT_FORMATS, decoder_for
from toolwire.events import ToolCallEnd, ToolCallStart

Miss = tuple[str, str, str, str | None]
"""A miss: format, case id, what was decoded, the documented reason's label (or None)."""


def measure(every: dict[str, list[Case]], step: int) -> tuple[Counter[tuple[str, str]], list[Miss]]:
    """Agreeing cases per (format, category), and the misses (format, id, what, reason)."""
    agree: Counter[tuple[str, str]] = Counter()
    misses: list[Miss] = []
    for fmt in TEXT_FORMATS:
        for category, group in every.items():
            for n, case in enumerate(group):
                what = miss(fmt, case, n, every_cut=n % step == 0)
                if what is None:
                    agree[fmt, category] += 1
                else:
                    misses.append((fmt, case.id, what, known_reason(fmt, case.id)))
    return agree, misses


def print_table(every: dict[str, list[Case]], agree: Counter[tuple[str, str]]) -> None:
    print("| format | " + " | ".join(every) + " | all |")
    print("|---|" + "---:|" * (len(every) + 1))
    total = sum(len(group) for group in every.values())
    for fmt in TEXT_FORMATS:
        cells = [f"{agree[fmt, c]}/{len(g)}" for c, g in every.items()]
        ok = sum(agree[fmt, c] for c in every)
        print(f"| {fmt} | " + " | ".join(cells) + f" | {ok}/{total} ({100 * ok / total:.1f}%) |")


def print_misses(misses: list[Miss]) -> None:
    print(f"\nmisses: {len(misses)}")
    for label, (why, _) in KNOWN.items():
        mine = [f"{fmt} {case}" for fmt, case, _, reason in misses if reason == label]
        if mine:
            print(f"- {label} ({len(mine)}): {why}\n    " + ", ".join(mine))
    for fmt, case, what, reason in misses:
        if reason is None:
            print(f"- UNEXPLAINED {fmt} {case}: {what}")


def false_calls(text: str, seed: int) -> int:
    data, rng = text.encode(), random.Random(seed)
    ways = [[data], [data[i : i + 1] for i in range(len(data))]]
    ways += [split_at(data, rng.sample(range(1, len(data)), min(len(data) - 1, 25))) for _ in "abc"]
    found = 0
    for fmt in TEXT_FORMATS:
        for pieces in ways:
            decoder = decoder_for(fmt, TOOLS)
            events = [ev for piece in pieces for ev in decoder.feed(piece)] + decoder.close()
            names = {ev.id: ev.name for ev in events if isinstance(ev, ToolCallStart)}
            ends = [ev for ev in events if isinstance(ev, ToolCallEnd) and ev.ok]
            found += sum(names[ev.id] in TOOLS for ev in ends)
    return found


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--every-cut-step", type=int, default=1, help="cut every Nth case at every byte"
    )
    args = parser.parse_args()
    root = data_dir()
    if root is None:
        print("bfcl-eval is not installed: uv pip install --no-deps bfcl-eval")
        return 1
    start = time.perf_counter()
    every = {category: cases(root, category) for category in CATEGORIES}
    agree, misses = measure(every, args.every_cut_step)
    step = "every case" if args.every_cut_step == 1 else f"every {args.every_cut_step}th case"
    print(f"BFCL ({root.parent.name}): whole, cut at every byte ({step}), 5 random chunkings\n")
    print_table(every, agree)
    print_misses(misses)
    texts = corpus()
    found = sum(false_calls(text, n) for n, text in enumerate(texts.values()))
    print(
        f"\nnegative corpus: {len(texts)} texts x {len(TEXT_FORMATS)} formats x 5 chunkings: "
        f"{found} false calls"
    )
    print(f"({time.perf_counter() - start:.0f} s)")
    return 0 if all(reason for *_, reason in misses) and not found else 1


if __name__ == "__main__":
    sys.exit(main())
