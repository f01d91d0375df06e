"""Benchmark: decoding one large tool call in every text format.

A ``Write``-style call whose ``content`` is 1 MB of code-like text (quotes, newlines, tabs,
non-ASCII: toolwire's own sources) is written in each format of the registry
(``toolwire.decode.textformats``) by that format's own ``render``, as the model's chat
template writes it, and fed to the format's decoder in 20-character deltas, with the tool
declared. The table gives the best of five rounds and the ratio to the Hermes decoder (the
target: every format within 2x of it). Each run checks that the call decodes back to the
arguments it was rendered from. Beside each, the format's reference reader: a regular
expression over the whole text once, as a non-streaming server parser reads it.
"""

from __future__ import annotations

import argparse
import ast
import gc
import json
import re
import time
from collections.abc import Callable
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


# Each format read the way a non-streaming server parser reads it: a regular expression
# over the complete text, then json.loads or ast.literal_eval of what it captured. Run
# once on the finished text, it is a lower bound of a parser that re-reads the
# accumulated text at every delta (the reference where vLLM cannot be installed).
S = re.S
_QWEN_FN = re.compile(r"<function=([^>\n]+)>(.*?)</function>", S)
_QWEN_PARAM = re.compile(r"<parameter=([^>\n]+)>\n?(.*?)\n?</parameter>", S)
_SEED_PARAM = re.compile(r"<parameter=([^>\n]+)>(.*?)</parameter>", S)
_XML = re.compile(r"<tool_name>(.*?)</tool_name>\s*<arguments>(.*)</arguments>", S)
_XML_ARG = re.compile(r"<(\w+)>(?:<!\[CDATA\[(.*?)\]\]>|(.*?))</\1>", S)
_HERMES = re.compile(r"<tool_call>\s*(.*?)\s*</tool_call>", S)
_GLM = re.compile(r"<arg_key>(.*?)</arg_key>\s*<arg_value>(.*?)</arg_value>", S)
_MINIMAX = re.compile(r'<parameter name="([^"]+)">(.*?)</parameter>', S)
_KIMI = re.compile(r"<\|tool_call_argument_begin\|>(.*?)<\|tool_call_end\|>", S)
_HARMONY = re.compile(r"to=functions\.\S+.*?<\|message\|>(.*?)<\|call\|>", S)
_DS_V3 = re.compile(r"<｜tool▁sep｜>[^\n]*\n```json\n(.*?)\n```<｜tool▁call▁end｜>", S)
_DS_V31 = re.compile(r"<｜tool▁sep｜>(.*?)<｜tool▁call▁end｜>", S)
_MISTRAL = re.compile(r"\[TOOL_CALLS\][^\[{]*\[ARGS\](.*)", S)
_GRANITE = re.compile(r"<\|tool_call\|>(.*)", S)
_PHI = re.compile(r"functools\[(.*)\]", S)


def _first(pattern: re.Pattern[str], text: str) -> str:
    found = pattern.search(text)
    if found is None:
        raise ValueError("no call")
    return found.group(1)


def _pairs(pattern: re.Pattern[str], text: str) -> dict[str, Any]:
    return {key: value for key, value in pattern.findall(text)}


def _xml(text: str) -> dict[str, Any]:
    found = _XML.search(text)
    if found is None:
        raise ValueError("no call")
    return {k: cdata or plain for k, cdata, plain in _XML_ARG.findall(found.group(2))}


def _hermes(text: str) -> dict[str, Any]:
    return dict(json.loads(_first(_HERMES, text))["arguments"])


def _qwen(text: str) -> dict[str, Any]:
    found = _QWEN_FN.search(text)
    if found is None:
        raise ValueError("no call")
    return _pairs(_QWEN_PARAM, found.group(2))


def _pythonic(text: str) -> dict[str, Any]:
    call = ast.parse(text.strip(), mode="eval").body
    first = call.elts[0] if isinstance(call, ast.List) and call.elts else None
    if not isinstance(first, ast.Call):
        raise ValueError("no call")
    return {kw.arg or "": ast.literal_eval(kw.value) for kw in first.keywords}


def _list_args(pattern: re.Pattern[str]) -> Callable[[str], dict[str, Any]]:
    def read(text: str) -> dict[str, Any]:
        calls = json.loads(_first(pattern, text).strip().removeprefix("[").removesuffix("]"))
        return dict(calls["arguments"])

    return read


def _json_of(pattern: re.Pattern[str]) -> Callable[[str], dict[str, Any]]:
    def read(text: str) -> dict[str, Any]:
        return dict(json.loads(_first(pattern, text)))

    return read


REFERENCE: dict[str, Callable[[str], dict[str, Any]]] = {
    "xml-tags": _xml,
    "hermes": _hermes,
    "qwen3-coder": _qwen,
    "llama3_json": lambda text: dict(json.loads(text)["parameters"]),
    "pythonic": _pythonic,
    "mistral": _json_of(_MISTRAL),
    "deepseek_v3": _json_of(_DS_V3),
    "deepseek_v31": _json_of(_DS_V31),
    "granite": _list_args(_GRANITE),
    "phi4_mini": _list_args(_PHI),
    "glm45": lambda text: _pairs(_GLM, text),
    "kimi_k2": _json_of(_KIMI),
    "minimax_m2": lambda text: _pairs(_MINIMAX, text),
    "openai_harmony": _json_of(_HARMONY),
    "seed_oss": lambda text: _pairs(_SEED_PARAM, text),
    "qwen3_xml": _qwen,
}
"""Format name -> the first call's arguments read from the complete text."""


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
    parser.add_argument(
        "--stream-size", type=int, default=32_000, help="bytes for the re-reading reference"
    )
    args = parser.parse_args()
    mb = args.size / 1e6
    print(f"{mb:g} MB argument in {DELTA}-character deltas, best of {args.runs}\n")
    print("| format | time | MB/s | vs hermes | regex, whole text once |")
    print("|---|---:|---:|---:|---:|")
    best, regex = measure(args.size, args.runs, once=True)
    for fmt, secs in best.items():
        print(
            f"| {fmt} | {secs * 1000:.0f} ms | {mb / secs:.1f} "
            f"| {secs / best['hermes']:.2f}x | {regex[fmt] * 1000:.1f} ms |"
        )
    kb = args.stream_size // 1000
    print(f"\n{kb} KB argument in {DELTA}-character deltas: the decoder against the regex")
    print("re-run on the text so far at every delta (a streaming parser that re-reads)\n")
    print("| format | decoder | regex re-read per delta | ratio |")
    print("|---|---:|---:|---:|")
    best, regex = measure(args.stream_size, args.runs, once=False)
    for fmt, secs in best.items():
        ref = regex[fmt]
        print(f"| {fmt} | {secs * 1000:.1f} ms | {ref * 1000:.0f} ms | {ref / secs:.1f}x |")


def measure(size: int, runs: int, *, once: bool) -> tuple[dict[str, float], dict[str, float]]:
    """Each format's best decoder time and its reference reader's (``once``: on the whole
    text; else re-run on the text so far at every delta)."""
    want = {"file_path": "src/generated.py", "content": code_text(size)}
    inputs = {}
    for fmt in TEXT_FORMATS:
        text = renderer(fmt)("Write", want)
        inputs[fmt] = [text[i : i + DELTA] for i in range(0, len(text), DELTA)]
    best = dict.fromkeys(TEXT_FORMATS, float("inf"))
    for _ in range(runs):  # rounds over every format: a busy moment hits them all
        for fmt, pieces in inputs.items():
            best[fmt] = min(best[fmt], run_once(fmt, pieces, want))
    regex = {
        fmt: reference_time(fmt, pieces, want, runs, once=once) for fmt, pieces in inputs.items()
    }
    return best, regex


def reference_time(
    fmt: str, pieces: list[str], want: dict[str, Any], runs: int, *, once: bool
) -> float:
    """The best time of the format's reference reader on ``pieces``; it must read the
    call's arguments in the end."""
    read = REFERENCE[fmt]
    best, got = float("inf"), None
    for _ in range(runs if once else 1):
        start = time.perf_counter()
        if once:
            got = read("".join(pieces))
        else:
            so_far = ""
            for piece in pieces:
                so_far += piece
                try:
                    got = read(so_far)
                except (ValueError, SyntaxError, KeyError, IndexError):
                    got = None
        best = min(best, time.perf_counter() - start)
    if got != want:
        raise SystemExit(f"{fmt}: the reference reader did not read the call's arguments")
    return best


if __name__ == "__main__":
    main()
