"""A stored session's row as ``SessionRecord``, and the error for an id with no row.

A row is read field by field: one that does not hold what it should (``additional_dirs``
or ``config`` that is not JSON, a title that is not text, a time that is not a number)
is read as its default and the record says so in ``damaged``, with a log line. So one
bad row costs that session its bad fields only: ``session/list`` still answers (the
session listed and marked damaged), and the session still loads.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from toolwire.config.choices import MODES, Mode, one_of
from toolwire.errors import UsageError

log = logging.getLogger("toolwire.agent")


class SessionNotFoundError(UsageError):
    """No session has that id."""


@dataclass(frozen=True, slots=True)
class SessionRecord:
    """A stored session's fields (not its history). Times are Unix seconds."""

    id: str
    cwd: str
    additional_dirs: tuple[str, ...]
    created_at: float
    updated_at: float
    title: str | None
    backend: str | None
    mode: Mode | None
    config: Mapping[str, Any]
    damaged: str | None = None
    """What could not be read from the row (those fields hold their defaults)."""

    @property
    def updated_at_iso(self) -> str:
        """``updated_at`` in ISO 8601 (UTC, ``Z``), as ACP ``session/list`` gives it."""
        moment = datetime.fromtimestamp(self.updated_at, UTC)
        return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def session_record(row: tuple[Any, ...]) -> SessionRecord:
    """The record of a ``sessions`` row; what cannot be read is named in ``damaged``."""
    sid, cwd, dirs, created, updated, title, backend, mode, config = row
    bad: list[str] = []
    record = SessionRecord(
        str(sid),
        _read(cwd, "cwd", _text, "", bad),
        _read(dirs, "additional_dirs", _paths, (), bad),
        _read(created, "created_at", _number, 0.0, bad),
        _read(updated, "updated_at", _number, 0.0, bad),
        _read(title, "title", _text, None, bad),
        _read(backend, "backend", _text, None, bad),
        one_of(MODES, mode) if isinstance(mode, str) else None,  # unknown: None
        _read(config, "config", _object, {}, bad),
        "; ".join(bad) or None,
    )
    if record.damaged:
        log.warning("session %s: its stored row is damaged (%s)", record.id, record.damaged)
    return record


def _read(value: Any, name: str, read: Callable[[Any], Any], default: Any, bad: list[str]) -> Any:
    if value is None and default is None:
        return None
    try:
        return read(value)
    except (TypeError, ValueError, RecursionError) as exc:
        bad.append(f"{name}: {exc}")
        return default


def _text(value: Any) -> str:
    if not isinstance(value, str):
        raise TypeError(f"{type(value).__name__}, not text")
    return value


def _number(value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise TypeError(f"{type(value).__name__}, not a number")
    return float(value)


def _paths(value: Any) -> tuple[str, ...]:
    paths = json.loads(_text(value))  # JSONDecodeError is a ValueError
    if not isinstance(paths, list) or not all(isinstance(p, str) for p in paths):
        raise ValueError("not a JSON list of paths")
    return tuple(paths)


def _object(value: Any) -> dict[str, Any]:
    found = json.loads(_text(value))
    if not isinstance(found, dict):
        raise ValueError("not a JSON object")
    return found


__all__ = ["SessionNotFoundError", "SessionRecord", "session_record"]
