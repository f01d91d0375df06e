"""What a tool runs with: the session's directories, its ports, and its limits."""

from __future__ import annotations

import asyncio
import os
import weakref
from collections.abc import AsyncIterator, Iterable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING

from toolwire.config.choices import DEFAULT_COMMAND_TIMEOUT, DEFAULT_MAX_TOOL_OUTPUT_BYTES
from toolwire.errors import UsageError
from toolwire.tools.fs import FileSystem, LocalFileSystem
from toolwire.tools.paths import resolve_path, resolve_root
from toolwire.tools.terminal import LocalTerminal, OutputCallback, Terminal
from toolwire.updates.titles import display_path

if TYPE_CHECKING:  # the schema loads pydantic; the tools do not need it to run
    from toolwire.config.schema import LimitsConfig
    from toolwire.tools.search_port import SearchPort
    from toolwire.tools.web_port import WebPort


class PathLocks:
    """One ``asyncio.Lock`` per path, dropped once nobody holds or waits for it.

    ``Write`` and ``Edit`` hold a path's lock for the whole read-modify-write, so two
    calls the model makes in parallel on one file apply in turn instead of one being lost.
    """

    def __init__(self) -> None:
        self._locks: weakref.WeakValueDictionary[Path, asyncio.Lock] = weakref.WeakValueDictionary()

    @asynccontextmanager
    async def hold(self, path: Path) -> AsyncIterator[None]:
        """Hold the lock of ``path`` for the duration of the block."""
        lock = self._locks.get(path)
        if lock is None:
            lock = self._locks[path] = asyncio.Lock()
        async with lock:
            yield


@dataclass(frozen=True, slots=True)
class ToolLimits:
    """Bounds on what tools read and return (the config may override them)."""

    read_max_lines: int = 2000
    """Lines ``Read`` returns when the model gives no ``limit``."""
    read_max_chars: int = 100_000
    """Characters of one ``Read`` result; the rest is left for a later ``offset``."""
    line_max_chars: int = 2000
    """Longer lines are cut in ``Read`` and ``Grep`` results."""
    max_file_bytes: int = 10_000_000
    """``Read`` and ``Edit`` refuse larger files; ``Grep`` skips them."""
    output_max_bytes: int = DEFAULT_MAX_TOOL_OUTPUT_BYTES
    """UTF-8 bytes of command output and search results given to the model (head + tail)."""
    search_max_results: int = 200
    """Paths (``Glob``, ``Grep`` file lists) or matching lines (``Grep`` content)."""
    bash_default_timeout_s: float = DEFAULT_COMMAND_TIMEOUT
    bash_max_timeout_s: float = 600.0

    @classmethod
    def from_config(cls, limits: LimitsConfig) -> ToolLimits:
        """The limits ``[limits]`` sets (``max_tool_output_bytes``, ``command_timeout``);
        the others as above."""
        return cls(
            output_max_bytes=limits.max_tool_output_bytes,
            bash_default_timeout_s=limits.command_timeout,
        )


@dataclass(frozen=True, slots=True)
class ToolContext:
    """A session's view for tools; one per session, with ``on_output`` set per call.

    ``cwd`` and ``roots`` are resolved on construction (absolute, symlinks followed);
    ``roots`` always contains ``cwd``. ``on_output`` receives ``Bash`` output chunks as
    they arrive, in order (the update engine bounds and throttles what it shows).
    """

    cwd: Path
    roots: tuple[Path, ...] = ()
    fs: FileSystem = field(default_factory=LocalFileSystem)
    terminal: Terminal = field(default_factory=LocalTerminal)
    limits: ToolLimits = field(default_factory=ToolLimits)
    on_output: OutputCallback | None = None
    web: WebPort | None = None
    """Where ``WebFetch`` gets pages (``toolwire.web.Fetcher``); None: it is refused."""
    search: SearchPort | None = None
    """Where ``WebSearch`` searches (``toolwire.web.Searcher``); None: no provider."""
    locks: PathLocks = field(default_factory=PathLocks, compare=False, repr=False)
    """Serializes read-modify-write of one file across parallel calls (shared by copies)."""

    def __post_init__(self) -> None:
        if not os.path.isabs(self.cwd):
            raise UsageError(f"the session cwd must be an absolute path, got {self.cwd!s}")
        cwd = resolve_root(self.cwd)
        roots = [cwd]
        for root in map(resolve_root, self.roots):
            if root not in roots:
                roots.append(root)
        # A frozen dataclass normalizes its own fields this way, once, at construction.
        object.__setattr__(self, "cwd", cwd)
        object.__setattr__(self, "roots", tuple(roots))

    @classmethod
    def create(
        cls,
        cwd: str | os.PathLike[str],
        additional_dirs: Iterable[str | os.PathLike[str]] = (),
        *,
        fs: FileSystem | None = None,
        terminal: Terminal | None = None,
        limits: ToolLimits | None = None,
        web: WebPort | None = None,
        search: SearchPort | None = None,
    ) -> ToolContext:
        """A context for a session in ``cwd`` (absolute) with extra directories."""
        return cls(
            cwd=Path(cwd),
            roots=tuple(Path(d) for d in additional_dirs),
            fs=fs or LocalFileSystem(),
            terminal=terminal or LocalTerminal(),
            limits=limits or ToolLimits(),
            web=web,
            search=search,
        )

    def with_output(self, on_output: OutputCallback | None) -> ToolContext:
        """The same context with a per-call output callback."""
        return replace(self, on_output=on_output)

    def resolve(self, raw: str) -> Path:
        """``raw`` as a real absolute path inside the roots; ``PathRefusedError`` if not."""
        return resolve_path(raw, self.cwd, self.roots)

    def show(self, path: Path) -> str:
        """``path`` as the model reads it: relative to cwd when under it."""
        return display_path(str(path), str(self.cwd))


__all__ = ["PathLocks", "ToolContext", "ToolLimits"]
