"""The Berkeley Function Calling Leaderboard's calls, in every text format.

BFCL's data comes with the ``bfcl-eval`` package and is read in place, from where it is
installed (never copied here). Each case of the categories simple, multiple, parallel and
parallel multiple gives the tools the model was offered and the acceptable values of each
argument of each call it should make: the ground truth is the first acceptable value of
each argument, an optional argument whose first acceptable value is ``""`` (left out)
being left out. Its calls are written in a text format as that model family's template
writes them (the registry's ``render_many``) and decoded with the tools declared: the
calls decoded must equal the ground truth, whole, cut at a byte boundary, and in random
chunks.

BFCL writes its tools' parameter types in its own vocabulary (``dict``, ``float``,
``tuple``, ``any``); a server gives a model's template JSON Schema, so the types are
mapped first, as an OpenAI-compatible request carries them (``json_schema``).
"""

from __future__ import annotations

import importlib.util
import json
import random
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.helpers import split_at
from toolwire.decode import TextStream
from toolwire.decode.textformats import render_many, text_decoder
from toolwire.events import ToolCallEnd, ToolCallStart

CATEGORIES: dict[str, str] = {
    "simple": "simple_python",
    "multiple": "multiple",
    "parallel": "parallel",
    "parallel multiple": "parallel_multiple",
}
"""The categories measured, by the name of their data files."""

_TYPES = {
    "dict": "object",
    "float": "number",
    "double": "number",
    "tuple": "array",
    "list": "array",
    "int": "integer",
    "bool": "boolean",
    "str": "string",
}

Call = tuple[str, dict[str, Any]]


@dataclass(frozen=True, slots=True)
class Case:
    id: str
    tools: dict[str, Any]
    """Name -> parameters schema (JSON Schema)."""
    calls: list[Call]


def data_dir() -> Path | None:
    """Where the installed ``bfcl-eval`` keeps its data, or None when it is not installed.

    Found without importing the package: its ``__init__`` pulls in its own dependencies,
    which the tests do not need (it is installed with ``--no-deps``)."""
    spec = importlib.util.find_spec("bfcl_eval")
    if spec is None or not spec.submodule_search_locations:
        return None
    path = Path(next(iter(spec.submodule_search_locations))) / "data"
    return path if path.is_dir() else None


def json_schema(schema: Any) -> Any:
    """A BFCL parameter schema in JSON Schema's type names (``any`` has no type)."""
    if isinstance(schema, list):
        return [json_schema(item) for item in schema]
    if not isinstance(schema, dict):
        return schema
    out = {k: json_schema(v) for k, v in schema.items() if k != "type"}
    kind = schema.get("type")
    if isinstance(kind, str) and kind != "any":
        out["type"] = _TYPES.get(kind, kind)
    if "properties" in schema:
        out["properties"] = {k: json_schema(v) for k, v in schema["properties"].items()}
    return out


def first_value(acceptable: list[Any]) -> Any:
    """The first acceptable value; a dict's own members (in a list too) are lists of
    acceptable values."""
    return _settled(acceptable[0])


def _settled(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: first_value(v) for k, v in value.items() if v and v[0] != ""}
    if isinstance(value, list):
        return [_settled(item) if isinstance(item, dict) else item for item in value]
    return value


def ground_truth(answer: Mapping[str, Any]) -> list[Call]:
    calls: list[Call] = []
    for call in answer["ground_truth"]:
        ((name, params),) = call.items()
        calls.append((name, {k: first_value(v) for k, v in params.items() if v[0] != ""}))
    return calls


def _lines(path: Path) -> Iterator[dict[str, Any]]:
    with path.open(encoding="utf-8") as f:
        for line in f:
            if line.strip():
                yield json.loads(line)


def cases(root: Path, category: str) -> list[Case]:
    """The cases of one category, with their ground truth."""
    stem = f"BFCL_v4_{CATEGORIES[category]}.json"
    answers = {a["id"]: a for a in _lines(root / "possible_answer" / stem)}
    out: list[Case] = []
    for entry in _lines(root / stem):
        tools = {f["name"]: json_schema(f["parameters"]) for f in entry["function"]}
        out.append(Case(entry["id"], tools, ground_truth(answers[entry["id"]])))
    return out


def rendered(fmt: str, case: Case) -> str:
    return render_many(fmt)(case.calls)


def decoded(fmt: str, tools: Mapping[str, Any], pieces: Iterable[bytes]) -> list[Call]:
    """The calls that ended normally, fed as bytes (a cut may split a UTF-8 character)."""
    stream = TextStream(text_decoder(fmt, tools))
    events = [ev for piece in pieces for ev in stream.feed(piece)] + stream.close()
    names = {ev.id: ev.name for ev in events if isinstance(ev, ToolCallStart)}
    ends = [ev for ev in events if isinstance(ev, ToolCallEnd)]
    return [(names[ev.id], dict(ev.arguments or {})) for ev in ends if ev.ok]


def chunkings(data: bytes, seed: int, *, every_cut: bool) -> Iterator[list[bytes]]:
    """The whole text, then every single cut (or none), then five random chunkings."""
    yield [data]
    if every_cut:
        for i in range(1, len(data)):
            yield [data[:i], data[i:]]
    rng = random.Random(seed)
    for _ in range(5):
        cuts = rng.sample(range(1, len(data)), min(len(data) - 1, rng.randint(1, 30)))
        yield split_at(data, cuts)


def miss(fmt: str, case: Case, seed: int, *, every_cut: bool) -> str | None:
    """None when every chunking decodes to the ground truth, else what went wrong."""
    data = rendered(fmt, case).encode()
    for n, pieces in enumerate(chunkings(data, seed, every_cut=every_cut)):
        got = decoded(fmt, case.tools, pieces)
        if got != case.calls:
            how = "whole" if n == 0 else f"in {len(pieces)} pieces"
            return f"{how}: got {_short(got)}"
    return None


def _short(calls: list[Call]) -> str:
    text = json.dumps(calls, ensure_ascii=False, default=repr)
    return text if len(text) < 160 else text[:157] + "..."


_UNTYPED = (
    "an object argument whose schema lists no members: XML writes each member as text, "
    "and nothing says 90 is a number"
)
_STRING_FOR_ARRAY = (
    "BFCL's ground truth breaks its schema (a string for an array of numbers): XML's one "
    "element of an array parameter is a one-item list"
)
_UNDECLARED = (
    "BFCL's ground truth gives an argument its tool does not declare (`type` of "
    "bank.calculate_balance): a `</parameter>` counts only before a declared key, so the "
    "value runs on"
)
KNOWN: dict[str, tuple[str, frozenset[tuple[str, str]]]] = {
    "untyped object": (
        _UNTYPED,
        frozenset(
            ("xml-tags", case) for case in ("multiple_9", "parallel_29", "parallel_multiple_66")
        ),
    ),
    "string for array": (_STRING_FOR_ARRAY, frozenset({("xml-tags", "parallel_multiple_21")})),
    "undeclared argument": (
        _UNDECLARED,
        frozenset(
            (fmt, "parallel_multiple_26") for fmt in ("qwen3-coder", "qwen3_xml", "seed_oss")
        ),
    ),
}
"""Every miss, by a short label: why, and the (format, case id) pairs it explains."""


def known_reason(fmt: str, case_id: str) -> str | None:
    """The label of the documented reason for this miss, or None."""
    return next((label for label, (_, pairs) in KNOWN.items() if (fmt, case_id) in pairs), None)
