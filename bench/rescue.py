"""Benchmark: what watching for leaked tool calls costs (``toolwire.decode.rescue``).

Two streams in 20-character text deltas, each fed to ``Rescue`` (every candidate format
reads the text until a call is taken) and to one text decoder alone, for scale:

(a) prose     250 KB of an answer with no call at all, against the Hermes decoder alone
(b) a call    a Qwen3-Coder ``Write`` call with a 1 MB argument, leaked without its
              opening ``<tool_call>``, against the Qwen3-Coder decoder alone

Each row is the best of ``--repeat`` runs.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from typing import Any

from toolwire.decode.rescue import CANDIDATES, Rescue
from toolwire.decode.tags import HermesDecoder, Qwen3CoderDecoder
from toolwire.events import MessageEnd, TextDelta

TOOLS: dict[str, Any] = {
    "Write": {
        "type": "object",
        "properties": {"file_path": {"type": "string"}, "content": {"type": "string"}},
    }
}
PROSE = "Plain words of an answer, with `code` and a < sign in them now and then.\n" * 3400
CODE = "x = 1  # a line of code\n" * (1_000_000 // 24)
CALL = (
    "<function=Write>\n<parameter=file_path>\na.py\n</parameter>\n<parameter=content>\n"
    f"{CODE}</parameter>\n</function>\n</tool_call>"
)


def _pieces(text: str, size: int = 20) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), size)]


def _rescue(pieces: list[str]) -> None:
    rescue = Rescue(TOOLS)
    for piece in pieces:
        rescue.events([TextDelta(piece)])
    rescue.events([MessageEnd("end_turn")])


def _alone(make: Callable[[], Any]) -> Callable[[list[str]], None]:
    def run(pieces: list[str]) -> None:
        decoder = make()
        for piece in pieces:
            decoder.feed(piece)
        decoder.close()

    return run


def _best(run: Callable[[list[str]], None], pieces: list[str], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        run(pieces)
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    repeat = parser.parse_args().repeat
    rows = [
        ("(a) prose", PROSE, _alone(HermesDecoder), "hermes alone"),
        ("(b) a call", CALL, _alone(lambda: Qwen3CoderDecoder(TOOLS)), "qwen3-coder alone"),
    ]
    print(f"candidates: {', '.join(name for name, _ in CANDIDATES)}")
    print("| stream | size | rescue | one decoder | ratio |")
    print("|---|---|---|---|---|")
    for label, text, alone, name in rows:
        pieces = _pieces(text)
        ours = _best(_rescue, pieces, repeat)
        base = _best(alone, pieces, repeat)
        size = f"{len(text) / 1000:.0f} KB"
        print(f"| {label} | {size} | {ours:.3f} s | {base:.3f} s ({name}) | {ours / base:.1f}x |")


if __name__ == "__main__":
    main()
