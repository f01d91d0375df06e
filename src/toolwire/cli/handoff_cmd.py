"""``toolwire handoff``: a transcript in, the block a new backend would receive out.

The transcript is an Anthropic Messages request body or message list, an OpenAI Chat
message list, or toolwire's own history JSON; the format is detected. Limits default to
the ``[handoff]`` section of the configuration. ``--summarizer`` picks how the Summary
section is written: ``extractive`` (the default, offline), ``none`` (left out), or the
name of a configured backend, which is then called once (on failure the extractive
summary stands in and a one-line warning says why). The output is what the new backend
receives: the block, then the last turns it gets verbatim (a short transcript has no
block, only those turns). ``--json`` prints every tool item with its key and fate, the
block and the tail instead.
"""

from __future__ import annotations

import json
import sys
from typing import TYPE_CHECKING, Annotated, Any

import typer

from toolwire.cli._io import fail, open_input

if TYPE_CHECKING:
    from toolwire.config import Config
    from toolwire.handoff import Handoff, ItemReport, Transcript

_TRANSCRIPT = typer.Argument(
    metavar="TRANSCRIPT",
    help="Transcript file (JSON or JSON lines); - reads standard input.",
    show_default=False,
)


def handoff(
    transcript: Annotated[str, _TRANSCRIPT],
    budget: Annotated[
        int | None,
        typer.Option("--budget", min=0, help="max_tool_context_chars (default: from config)."),
    ] = None,
    keep_last: Annotated[
        int | None,
        typer.Option("--keep-last", min=0, help="Turns passed verbatim (default: from config)."),
    ] = None,
    summarizer: Annotated[
        str,
        typer.Option(
            "--summarizer",
            metavar="NAME",
            help="none, extractive, or a configured backend's name.",
        ),
    ] = "extractive",
    as_json: Annotated[
        bool, typer.Option("--json", help="Print every tool item and what became of it.")
    ] = False,
    cwd: Annotated[
        str | None,
        typer.Option("--cwd", help="Session directory that relative paths resolve against."),
    ] = None,
    config_file: Annotated[
        str | None,
        typer.Option("--config", metavar="FILE", help="Read this config file instead."),
    ] = None,
) -> None:
    """Print what a new backend would receive for TRANSCRIPT: the block, then the last turns."""
    cfg = _config(config_file)
    loaded = _load(transcript)
    result = _make(loaded, summarizer, cfg, _limits(cfg, cwd, budget, keep_last))
    if as_json:
        typer.echo(json.dumps(report(loaded, result), indent=2, ensure_ascii=False))
    else:
        _print(result)


def _config(config_file: str | None) -> Config:
    """The configuration, or the command fails with the reason."""
    from toolwire.config import ConfigError, load_config

    try:
        return load_config(config_file)
    except ConfigError as e:
        fail(str(e))


def _limits(
    cfg: Config, cwd: str | None, budget: int | None, keep_last: int | None
) -> dict[str, Any]:
    """The handoff's limits: the options given, else the ``[handoff]`` configuration."""
    return {
        "cwd": cwd,
        "max_tool_context_chars": cfg.handoff.max_tool_context_chars if budget is None else budget,
        "max_tool_result_chars": cfg.handoff.max_tool_result_chars,
        "keep_last": cfg.handoff.keep_last if keep_last is None else keep_last,
    }


def _print(result: Handoff) -> None:
    """What the new backend receives, for a person; on standard error, why it is empty
    or has no block."""
    received = received_text(result)
    if not received:
        typer.echo(
            "toolwire: nothing to hand over: no summary, no tool context, no turns", err=True
        )
        return
    if not result.block:
        typer.echo(
            "toolwire: no handoff block: the whole transcript is in the last turns, "
            "which the new backend receives as they are",
            err=True,
        )
    sys.stdout.write(received)


def received_text(made: Handoff) -> str:
    """What the new backend receives, for a person: the block, then the verbatim tail.

    The block opens the tail's first user message (docs/handoff.md, "What the new backend
    receives"); a short transcript has no block, only the tail, and that is still what
    the new backend gets.
    """
    from toolwire.handoff.render import render_messages

    return made.block + render_messages(made.tail)


def _load(path: str) -> Transcript:
    from toolwire.handoff import TranscriptError, load_transcript

    with open_input(path, "") as (stream, name):
        try:
            data = stream.read()
        except OSError as e:
            fail(f"cannot read {name}: {e.strerror or e}")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        fail(f"{name} is not UTF-8 text; give a JSON transcript")
    try:
        return load_transcript(text)
    except TranscriptError as e:
        fail(f"{name}: {e}")


def _make(loaded: Transcript, summarizer: str, cfg: Config, limits: dict[str, Any]) -> Handoff:
    import asyncio

    from toolwire.backends import create_backend
    from toolwire.config import ConfigError
    from toolwire.handoff import build_handoff, prepare_handoff

    history = list(loaded.messages)
    if summarizer in ("none", "extractive"):
        return build_handoff(history, summary=summarizer == "extractive", **limits)
    try:
        backend = create_backend(cfg.backend(summarizer), cfg.limits)
    except ConfigError as e:
        fail(f"--summarizer: {e}")
    made = asyncio.run(prepare_handoff(history, summarizer=backend, **limits))
    if made.summary is not None and made.summary.error is not None:
        typer.echo(
            f"toolwire: the summarizer {summarizer!r} failed ({made.summary.error}); "
            "the extractive summary was used",
            err=True,
        )
    return made


def report(loaded: Transcript, made: Handoff) -> dict[str, Any]:
    """What ``--json`` prints: the format, the stats, every item, the block and the tail."""
    from toolwire.history.jsonform import message_to_dict

    summary = made.summary
    return {
        "format": loaded.format,
        "messages": len(loaded.messages),
        "tail_start": made.tail_start,
        "summary": None
        if summary is None
        else {"source": summary.source, "summarizer": summary.summarizer, "error": summary.error},
        "stats": _stats(made),
        "items": [_item(r) for r in made.items],
        "block": made.block,
        "tail": [message_to_dict(m) for m in made.tail],
    }


def _stats(made: Handoff) -> dict[str, int]:
    s = made.stats
    return {
        "files_read": s.files_read,
        "files_changed": s.files_changed,
        "commands": s.commands,
        "other_tools": s.other_tools,
        "dropped": s.dropped,
        "truncated": s.truncated,
        "block_chars": s.block_chars,
    }


def _item(r: ItemReport) -> dict[str, Any]:
    item = r.item
    return {
        "seq": item.seq,
        "tool": item.tool,
        "category": item.category,
        "key": list(item.key),
        "label": item.label,
        "status": r.status,
        "reason": r.reason,
        "stale": r.stale,
        "error": item.is_error,
        "interrupted": item.interrupted,
        "command": None if item.command is None else item.command.kind,
        "omitted_chars": r.omitted_chars,
        "chars": r.chars,
    }


__all__ = ["handoff", "received_text", "report"]
