"""Benchmark: decoding one large tool call in every text format.

A ``Write``-style call whose ``content`` is 1 MB of code-like text (quotes, newlines, tabs,
non-ASCII: toolwire's own sources) is written in each format of the registry
(``toolwire.decode.textformats``) by that format's own ``render``, as the model's chat
template writes it, and fed to the format's decoder in 20-character deltas, with the tool
declared. The table gives the best of five rounds and the ratio to the Hermes decoder (the
target: every format within 2x of it). Each run checks that the call decodes back to the
arguments it was rendered from.
"""

from __future__ import annotations

import argparse
import gc
import time
from pathlib import Path
from typing import Any

from toolwire.decode.textformats import TEXT_FORMATS, renderer, text_decoder
from toolwire.events import ToolCallEnd

DELTA = 20
TOOLS: dict[str, Any] = {
    "Write": {
        "type": "object",
        "properties": {"file_path": {"type": "string"}, "content": {"type": "string"}},
    }
}


def code_text(size: int) -> str:
    """Deterministic code-like text: toolwire's sources, with non-ASCII comment lines.
    Not the decoders' own: they spell the formats' markup, which a format without escapes
    (GLM's ``</arg_value>`` then ``<arg_key>``) cannot carry inside a value."""
    root = Path(__file__).parents[1] / "src" / "toolwire"
    paths = [p for p in sorted(root.rglob("*.py")) if "decode" not in p.parts]
    bodies = [p.read_text(encoding="utf-8") for p in paths]
    extra = '# café «naïve» — 日本語 ✓ "quoted"\t\\ back\\slash\n'
    text = "".join(body + extra for body in bodies)
    return (text * (size // len(text) + 1))[:size]


def run_once(fmt: str, pieces: list[str], want: dict[str, Any]) -> float:
    gc.collect()
    start = time.perf_counter()
    decoder = text_decoder(fmt, TOOLS)
    ends = []
    for piece in pieces:
        for ev in decoder.feed(piece):
            if isinstance(ev, ToolCallEnd):
                ends.append(ev)
    ends += [ev for ev in decoder.close() if isinstance(ev, ToolCallEnd)]
    elapsed = time.perf_counter() - start
    if len(ends) != 1 or ends[0].arguments != want:
        raise SystemExit(f"{fmt}: the call did not decode back to its arguments")
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=1_000_000, help="bytes of content")
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    want = {"file_path": "src/generated.py", "content": code_text(args.size)}
    inputs = {}
    for fmt in TEXT_FORMATS:
        text = renderer(fmt)("Write", want)
        inputs[fmt] = [text[i : i + DELTA] for i in range(0, len(text), DELTA)]
    best = dict.fromkeys(TEXT_FORMATS, float("inf"))
    for _ in range(args.runs):  # rounds over every format: a busy moment hits them all
        for fmt, pieces in inputs.items():
            best[fmt] = min(best[fmt], run_once(fmt, pieces, want))
    base = best["hermes"]
    mb = args.size / 1e6
    print(f"{mb:g} MB argument in {DELTA}-character deltas, best of {args.runs}\n")
    print("| format | time | MB/s | vs hermes |")
    print("|---|---:|---:|---:|")
    for fmt, secs in best.items():
        print(f"| {fmt} | {secs * 1000:.0f} ms | {mb / secs:.1f} | {secs / base:.2f}x |")


if __name__ == "__main__":
    main()
