"""Whether the sandbox can run here, and with what: decided once, at start-up.

bubblewrap first: it is on ``PATH`` and a trial run of the launcher inside it works
(user namespaces, libseccomp and ``pyseccomp`` all in order). Else Landlock, where the
kernel has it (containers often refuse user namespaces but allow Landlock). Else
nothing, and ``Probe.reason`` says why and what to install, in one line.
"""

from __future__ import annotations

import functools
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from toolwire.config.sandbox import SandboxConfig
from toolwire.sandbox.launch import landlock_abi
from toolwire.sandbox.wrap import Layout, bwrap_argv

Mechanism = Literal["bwrap", "landlock"]
_TRIAL_S = 10.0
INSTALL = "install bubblewrap (apt-get install bubblewrap) and pyseccomp"
#: The session's notice where Landlock is the only mechanism (docs/sandbox.md).
LANDLOCK_ONLY = (
    "Commands run under Landlock only (bubblewrap cannot run here): their writes are "
    "confined, but reads (deny_read) and the network are not, so Bash still asks."
)


@dataclass(frozen=True, slots=True)
class Probe:
    """What runs the sandbox (None: nothing can), and why not when nothing can."""

    mechanism: Mechanism | None
    reason: str = ""


def _trial(argv: list[str]) -> str | None:
    """None when ``argv`` ran and exited 0; else the first line of what went wrong."""
    try:
        done = subprocess.run(argv, capture_output=True, timeout=_TRIAL_S, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return str(exc)
    if done.returncode == 0:
        return None
    lines = done.stderr.decode(errors="replace").strip().splitlines()
    return lines[-1] if lines else f"exit code {done.returncode}"


def _seccomp_missing() -> str | None:
    try:
        import pyseccomp  # type: ignore[import-untyped]  # noqa: F401
    except (ImportError, OSError, RuntimeError) as exc:  # the package, or libseccomp itself
        return f"seccomp is unavailable ({exc}): install pyseccomp and libseccomp2"
    return None


def probe_now() -> Probe:
    """Try bubblewrap, then Landlock (module doc)."""
    missing = _seccomp_missing()
    if missing is not None:
        return Probe(None, missing)
    why = "bwrap is not on PATH"
    if shutil.which("bwrap") is not None:
        layout = Layout(roots=(), home=Path("/nonexistent"))
        argv = bwrap_argv(SandboxConfig(deny_read=[]), layout, ["true"], Path("/"))
        failed = _trial(argv)
        if failed is None:
            return Probe("bwrap")
        why = f"bwrap cannot start a sandbox here ({failed})"
    if landlock_abi() >= 1:
        return Probe("landlock")
    return Probe(None, f"{why} and the kernel has no Landlock: {INSTALL}")


@functools.cache
def probe() -> Probe:
    """``probe_now``, once per process."""
    return probe_now()


__all__ = ["INSTALL", "LANDLOCK_ONLY", "Mechanism", "Probe", "probe", "probe_now"]
