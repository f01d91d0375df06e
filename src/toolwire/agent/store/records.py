"""A stored session's row as ``SessionRecord``, and the error for an id with no row."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from toolwire.config.choices import MODES, Mode, one_of
from toolwire.errors import UsageError


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

    @property
    def updated_at_iso(self) -> str:
        """``updated_at`` in ISO 8601 (UTC, ``Z``), as ACP ``session/list`` gives it."""
        moment = datetime.fromtimestamp(self.updated_at, UTC)
        return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def session_record(row: tuple[Any, ...]) -> SessionRecord:
    sid, cwd, dirs, created, updated, title, backend, mode, config = row
    return SessionRecord(
        sid,
        cwd,
        tuple(json.loads(dirs)),
        created,
        updated,
        title,
        backend,
        one_of(MODES, mode),  # a mode this version does not know reads as None
        json.loads(config),
    )


__all__ = ["SessionNotFoundError", "SessionRecord", "session_record"]
