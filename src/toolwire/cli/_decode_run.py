"""The work of ``toolwire decode``, with no typer in sight.

``decode`` sits in pipes, started once per stream, so ``toolwire.cli._route`` calls
``decode_stream`` straight from the console script for a plain command line; the typer
command (``decode_cmd``) calls it for everything else.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from toolwire.cli._io import fail, provider_input
from toolwire.decode import decoder_for
from toolwire.decode.textformats import canonical
from toolwire.events import EVENT_TYPES, Event, event_to_dict

_TOOLS_SHAPE = (
    'write a JSON list of tools, each {"name": ..., "parameters": {...}} (OpenAI\'s '
    '{"type": "function", "function": {...}} and Anthropic\'s "input_schema" are read too)'
)


def decode_stream(
    file: str | None,
    fmt: str | None,
    chunk_size: int | None,
    only: str | None,
    tools: str | None = None,
) -> None:
    """Decode a provider stream; print one JSON object per event with its byte offset."""
    wanted = _parse_only(only)
    declared = None if tools is None else read_tools(tools)
    with provider_input(file, fmt, chunk_size, "decoding") as (wire_format, pieces):
        if declared is not None and canonical(wire_format) is None:
            fail(f"--tools: {wire_format} streams carry their own calls; use a text format")
        decoder = decoder_for(wire_format, declared)
        offset = 0
        for piece in pieces:
            offset += len(piece)
            _print(decoder.feed(piece), offset, wanted)
        _print(decoder.close(), offset, wanted)


def read_tools(path: str) -> dict[str, Any]:
    """The declared tools of ``--tools FILE``: name -> parameters schema."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except OSError as e:
        fail(f"--tools: cannot read {path}: {e.strerror or e}; check the path")
    except ValueError as e:
        fail(f"--tools: {path} is not JSON ({e}); {_TOOLS_SHAPE}")
    if not isinstance(data, list):
        fail(f"--tools: {path} holds no list; {_TOOLS_SHAPE}")
    tools: dict[str, Any] = {}
    for i, item in enumerate(data, 1):
        spec = item.get("function", item) if isinstance(item, dict) else None
        name = spec.get("name") if isinstance(spec, dict) else None
        if not isinstance(spec, dict) or not isinstance(name, str) or not name:
            fail(f"--tools: item {i} of {path} has no name; {_TOOLS_SHAPE}")
        schema = spec.get("parameters", spec.get("input_schema", {}))
        if not isinstance(schema, dict):
            fail(f"--tools: the parameters of {name!r} in {path} are not an object; {_TOOLS_SHAPE}")
        tools[name] = schema
    return tools


def _parse_only(only: str | None) -> frozenset[str] | None:
    if only is None:
        return None
    wanted = frozenset(t.strip() for t in only.split(",") if t.strip())
    unknown = sorted(wanted - set(EVENT_TYPES))
    if unknown:
        fail(f"--only: unknown event type {', '.join(unknown)}; use {', '.join(EVENT_TYPES)}")
    return wanted


def _print(events: list[Event], offset: int, wanted: frozenset[str] | None) -> None:
    """Write the events as JSON lines and flush, so a pipe sees each chunk's events live."""
    for ev in events:
        if wanted is not None and ev.type not in wanted:
            continue
        row = event_to_dict(ev)
        row["offset"] = offset
        sys.stdout.write(json.dumps(row, ensure_ascii=False) + "\n")
    sys.stdout.flush()


__all__ = ["decode_stream", "read_tools"]
