"""Which project hook files the user trusted, by content hash, and a session's hook state.

A project's settings file runs commands on the user's machine, so its hooks run only
once the user said yes to that exact content: the answer is kept as the file's SHA-256
in ``$XDG_DATA_HOME/toolwire/hooks-trust.json`` (by default under
``~/.local/share``), so a changed file asks again and an unchanged one never does.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path

from toolwire.hooks.settings import Source
from toolwire.safe_read import MAX_STATE_BYTES, read_file


def default_trust_path() -> Path:
    """``$XDG_DATA_HOME/toolwire/hooks-trust.json``."""
    base = os.environ.get("XDG_DATA_HOME", "")
    # The XDG spec says a relative value is invalid and must be ignored.
    root = Path(base) if os.path.isabs(base) else Path.home() / ".local" / "share"
    return root / "toolwire" / "hooks-trust.json"


class TrustStore:
    """The trusted content hash of each project settings file, on disk."""

    def __init__(self, path: Path | None = None) -> None:
        self.path = path or default_trust_path()

    def trusted(self, source: Source) -> bool:
        """The user's own file, or a project file whose content the user trusted."""
        return source.trusted or self._read().get(str(source.path)) == source.digest

    def remember(self, source: Source) -> None:
        """Trust this content of ``source`` from now on (replacing an older content's)."""
        known = self._read()
        known[str(source.path)] = source.digest
        self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        temporary = self.path.with_suffix(".tmp")
        temporary.write_text(json.dumps(known, indent=1, sort_keys=True), encoding="utf-8")
        temporary.replace(self.path)  # another window may read it at the same time

    def _read(self) -> dict[str, str]:
        try:
            data = json.loads(read_file(self.path, MAX_STATE_BYTES))
        except (OSError, ValueError):
            return {}
        if not isinstance(data, dict):
            return {}
        return {k: v for k, v in data.items() if isinstance(v, str)}


@dataclass(slots=True)
class HookState:
    """A session's memory of its hooks: the contents the user declined this session
    (not asked again until they change) and whether ``SessionStart`` ran."""

    declined: set[str] = field(default_factory=set)
    started: bool = False


__all__ = ["HookState", "TrustStore", "default_trust_path"]
