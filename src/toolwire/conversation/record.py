"""The stored form of a ``Conversation``: one typed, versioned, JSON-able record.

The agent keeps it in a session's config values under ``RECORD_KEY``; the JSON form
(``to_json``/``from_json``) is plain lists, numbers and strings, so any store that keeps
JSON (SQLite, Redis, memory) keeps it as is. A session stored before the record existed
kept its points under three keys of their own (``LEGACY_KEYS``); ``from_config`` reads
them when the record is absent, so such a session still loads. The proxy keeps the same
record for a session's switch point and for each backend's compaction
(``toolwire.proxy.state``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from toolwire.context.point import Point, PointKind
from toolwire.errors import UsageError

VERSION: Final = 1
RECORD_KEY: Final = "conversation"
LEGACY_KEYS: Final = ("cleared_at", "handoff_switch_at", "compaction")
"""Where sessions stored before version 1 kept the clear, switch and compaction points."""


@dataclass(frozen=True, slots=True)
class ConversationRecord:
    """``cleared``: stored messages before the last ``/clear``; ``point``: the current
    switch or compaction (indices into the history since the clear); ``ratio``: the
    meter's correction of the token estimate, learned on backend ``metered`` (None: by
    an older version, on the backend that answers). ``legacy_switch``: a switch
    point stored without its block by an older version (rebuilt offline on load)."""

    cleared: int = 0
    point: Point | None = None
    ratio: float | None = None
    metered: str | None = None
    legacy_switch: int | None = None
    version: int = VERSION

    def to_json(self) -> dict[str, Any]:
        point = self.point
        return {
            "version": self.version,
            "cleared": self.cleared,
            "point": None
            if point is None
            else {
                "kind": point.kind,
                "at": point.at,
                "tail_from": point.tail_from,
                "block": point.block,
                "target": point.target,
                "cuts": [list(c) for c in point.cuts],
                **({} if point.head is None else {"head": point.head}),
            },
            "ratio": self.ratio,
            "metered": self.metered,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> ConversationRecord:
        """The record ``to_json`` wrote; ``UsageError`` for anything else."""
        try:
            if data["version"] != VERSION:
                raise UsageError(f"conversation record version {data['version']} is unknown")
            stored = data["point"]
            point = None
            if stored is not None:
                kind = stored["kind"]
                if kind not in ("switch", "compaction"):
                    raise UsageError(f"unknown point kind {kind!r}")
                target = stored["target"]
                point = Point(
                    kind,
                    int(stored["at"]),
                    int(stored["tail_from"]),
                    str(stored["block"]),
                    None if target is None else str(target),
                    tuple((int(m), int(p), int(c)) for m, p, c in stored["cuts"]),
                    None if stored.get("head") is None else str(stored["head"]),
                )
            ratio, metered = data["ratio"], data["metered"]
            return cls(
                int(data["cleared"]),
                point,
                None if ratio is None else float(ratio),
                None if metered is None else str(metered),
            )
        except (KeyError, TypeError, ValueError) as exc:
            raise UsageError(f"not a conversation record: {exc!r}") from None

    @classmethod
    def from_config(cls, config: Mapping[str, Any]) -> ConversationRecord:
        """The record in a session's config values, or the one its legacy keys make."""
        stored = config.get(RECORD_KEY)
        if isinstance(stored, Mapping):
            return cls.from_json(stored)
        return _legacy(config)


def _legacy(config: Mapping[str, Any]) -> ConversationRecord:
    """The points of a session stored before ``VERSION`` 1, best effort: a malformed one
    is left out (the model then sees the raw history since the clear, as before)."""
    cleared, switch_at, compaction = (config.get(k) for k in LEGACY_KEYS)
    cleared = cleared if isinstance(cleared, int) and cleared >= 0 else 0
    point, ratio = None, None
    if isinstance(compaction, Mapping):
        try:
            point = Point(
                "compaction",
                int(compaction["at"]),
                int(compaction["tail_from"]),
                str(compaction["block"]),
                None,
                tuple((int(m), int(p), int(c)) for m, p, c in compaction.get("cuts", [])),
            )
            raw = compaction.get("ratio")
            ratio = float(raw) if isinstance(raw, int | float) else None
        except (KeyError, TypeError, ValueError):
            point = None
    legacy_switch = switch_at if isinstance(switch_at, int) and point is None else None
    return ConversationRecord(cleared, point, ratio, None, legacy_switch)


__all__ = ["LEGACY_KEYS", "RECORD_KEY", "VERSION", "ConversationRecord", "Point", "PointKind"]
