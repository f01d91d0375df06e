"""A plain ``toolwire decode`` or ``toolwire acp`` command line, run without typer.

``route(argv)`` reads only the forms these commands are given in practice: their own
options as ``--name VALUE``, ``--name=VALUE`` or ``-f VALUE``, the one FILE of ``decode``,
and ``--``. Anything else (``--help``, an unknown option, a repeated or missing
argument, a value that starts with ``-``, a number typer would refuse, shell completion)
returns ``None`` and the typer application parses the line as it always has, so help
and error texts stay typer's own. A routed command ends as typer would end it: status
130 on Ctrl-C, a quiet status 1 when standard output is a closed pipe.
"""

from __future__ import annotations

import errno
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

_DECODE = {
    "--format": "fmt",
    "-f": "fmt",
    "--chunk-size": "chunk_size",
    "--only": "only",
    "--tools": "tools",
}
_ACP = {
    "--config": "config_file",
    "--backend": "backend",
    "--mode": "mode",
    "--record": "record",
    "--log-file": "log_file",
}
_PATHS = {"config_file", "record", "log_file"}


def route(argv: list[str]) -> Callable[[], None] | None:
    """The command to run for ``argv`` (the arguments after ``toolwire``), or ``None``
    when typer must read it."""
    if not argv or os.environ.get("_TOOLWIRE_COMPLETE"):
        return None
    command, rest = argv[0], argv[1:]
    if command == "decode":
        parsed = _parse(rest, _DECODE, positionals=1)
        if parsed is None or not _whole_number(parsed, "chunk_size"):
            return None
        values, files = parsed
        values["file"] = files[0] if files else None
        return lambda: _run(_decode, values)
    if command == "acp":
        parsed = _parse(rest, _ACP, positionals=0)
        if parsed is None:
            return None
        values = {k: Path(v) if k in _PATHS and v else v for k, v in parsed[0].items()}
        return lambda: _run(_acp, values)
    return None


def _parse(
    args: list[str], options: dict[str, str], positionals: int
) -> tuple[dict[str, Any], list[str]] | None:
    values: dict[str, Any] = dict.fromkeys(options.values())
    seen: set[str] = set()
    found: list[str] = []
    rest = iter(args)
    for arg in rest:
        if arg == "--":
            found.extend(rest)
            break
        if arg == "-" or not arg.startswith("-"):
            found.append(arg)
            continue
        name, eq, value = arg.partition("=") if arg.startswith("--") else (arg, "", "")
        if name not in options or options[name] in seen:
            return None
        if not eq:
            value = next(rest, "")
        if not value or value.startswith("-"):
            return None
        seen.add(options[name])
        values[options[name]] = value
    if len(found) > positionals:
        return None
    return values, found


def _whole_number(parsed: tuple[dict[str, Any], list[str]], key: str) -> bool:
    """Converts ``key`` as typer would (``int``, at least 1); ``False`` where typer would
    refuse it, so that typer says why."""
    values = parsed[0]
    if values[key] is None:
        return True
    try:
        values[key] = int(values[key])
    except ValueError:
        return False
    return bool(values[key] >= 1)


def _decode(values: dict[str, Any]) -> None:
    from toolwire.cli._decode_run import decode_stream

    decode_stream(
        values["file"], values["fmt"], values["chunk_size"], values["only"], values["tools"]
    )


def _acp(values: dict[str, Any]) -> None:
    from toolwire.cli._acp_run import serve_acp

    serve_acp(**values)


def _run(command: Callable[[dict[str, Any]], None], values: dict[str, Any]) -> None:
    try:
        command(values)
    except KeyboardInterrupt:
        raise SystemExit(130) from None
    except OSError as exc:
        if exc.errno != errno.EPIPE:
            raise
        # The reader went away (``| head``): nothing more can be said to it, and the
        # interpreter's last flush must not print a traceback either.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        raise SystemExit(1) from None


__all__ = ["route"]
