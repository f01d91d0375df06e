"""``Sandbox``: one session's sandbox, as the terminals use it.

``wrap(argv, cwd)`` is the command line that runs ``argv`` inside it (bubblewrap or the
Landlock launcher, ``toolwire.sandbox.wrap``); the first command of a session whose
network is a list starts its allow-list proxy, and ``aclose`` stops it.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path

from toolwire.config.sandbox import SandboxConfig
from toolwire.sandbox.probe import Mechanism
from toolwire.sandbox.proxy import AllowListProxy, Resolver, resolve
from toolwire.sandbox.refusals import refused
from toolwire.sandbox.wrap import (
    Layout,
    bwrap_argv,
    denied_paths,
    landlock_argv,
    placeholders,
    writable_paths,
)


def toolwire_dirs(environ: Mapping[str, str]) -> tuple[Path, ...]:
    """toolwire's own data and config directories (sessions, keys' names, checkpoints)."""
    home = Path(environ.get("HOME") or Path.home())
    found = []
    for variable, fallback in (("XDG_DATA_HOME", ".local/share"), ("XDG_CONFIG_HOME", ".config")):
        base = environ.get(variable, "")
        root = Path(base) if base and os.path.isabs(base) else home / fallback
        found.append(root / "toolwire")
    return tuple(found)


class Sandbox:
    """The sandbox of one session's commands (module doc)."""

    def __init__(
        self,
        config: SandboxConfig,
        roots: Sequence[Path],
        mechanism: Mechanism,
        *,
        environ: Mapping[str, str] | None = None,
        resolver: Resolver = resolve,
    ) -> None:
        env = os.environ if environ is None else environ
        self.config = config
        self.mechanism = mechanism
        self._layout = Layout(
            roots=tuple(Path(os.path.realpath(r)) for r in roots),
            home=Path(env.get("HOME") or Path.home()),
            hidden=toolwire_dirs(env),
        )
        self._resolver = resolver
        self._placeholders: set[Path] = set()
        self._proxy: AllowListProxy | None = None
        self._lock = asyncio.Lock()

    @property
    def confined_network(self) -> bool:
        return self.config.network != "full" and self.mechanism == "bwrap"

    async def wrap(self, argv: Sequence[str], cwd: Path) -> list[str]:
        """The command line that runs ``argv`` in ``cwd`` inside the sandbox."""
        if self.mechanism == "landlock":
            return landlock_argv(self.config, self._layout, argv)
        layout = self._layout
        self._placeholders.update(placeholders(writable_paths(self.config, layout), layout))
        if isinstance(self.config.network, list):
            layout = Layout(
                roots=layout.roots,
                home=layout.home,
                hidden=layout.hidden,
                bridge=(await self._started()).path,
            )
        return bwrap_argv(self.config, layout, argv, cwd)

    def refused(self, output: str, exit_code: int | None) -> str | None:
        """What the sandbox refused a failed command (``toolwire.sandbox.refusals``)."""
        found = refused(output, exit_code, network=self.confined_network)
        home = str(self._layout.home)
        if found is not None and home != "/":  # the user's home as they write it
            found = found.replace(home + "/", "~/")
        return found

    def hidden_path(self, output: str, command: str) -> str | None:
        """The ``deny_read`` path (as ``~/...`` under the home) that ``command`` or its
        ``output`` names, or None. Only bubblewrap hides them (Landlock cannot)."""
        if self.mechanism != "bwrap":
            return None
        home = self._layout.home
        for path in denied_paths(self.config, self._layout):
            shown = f"~/{path.relative_to(home)}" if home in path.parents else str(path)
            if str(path) in output or str(path) in command or shown in command:
                return shown
        return None

    async def _started(self) -> AllowListProxy:
        async with self._lock:
            if self._proxy is None:
                assert isinstance(self.config.network, list)
                where = Path(tempfile.mkdtemp(prefix="toolwire-net-")) / "proxy.sock"
                proxy = AllowListProxy(self.config.network, where, self._resolver)
                await proxy.start()
                self._proxy = proxy
            return self._proxy

    async def aclose(self) -> None:
        """Stop the proxy, if it started; remove the empty ``.git`` placeholders the
        sandbox left (``wrap.placeholders``), not one that has anything in it now."""
        for path in self._placeholders:
            with contextlib.suppress(OSError):
                path.rmdir()
        self._placeholders.clear()
        proxy, self._proxy = self._proxy, None
        if proxy is not None:
            await proxy.aclose()
            shutil.rmtree(proxy.path.parent, ignore_errors=True)


__all__ = ["Sandbox", "toolwire_dirs"]
