"""The sandbox's cost: ``true`` run bare, and run inside each sandbox toolwire can use here.

What a ``Bash`` command pays before it starts: bubblewrap (the namespaces, the mounts of
``[tools.sandbox]``'s defaults) and the launcher (Python, the capability drop and the
seccomp filter), or the launcher alone with Landlock. Each is the command line the
session builds (``toolwire.sandbox.wrap``), spawned from this process as the terminal
does. The median and the 90th percentile of N runs each (``--runs``, default 50), after
one warm-up run of each, the cases taken in turn; the last column is the median's cost
over bare ``true``. A bare ``python -I -S`` is there for scale: most of the launcher's
cost is the interpreter's start.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from toolwire.config.sandbox import SandboxConfig
from toolwire.sandbox.launch import landlock_abi
from toolwire.sandbox.probe import probe
from toolwire.sandbox.wrap import Layout, bwrap_argv, landlock_argv


def _times(cases: list[tuple[str, list[str]]], runs: int) -> list[list[float]]:
    """The runs of each case, taken in turn (a busy moment costs every case alike)."""
    for _, argv in cases:
        subprocess.run(argv, check=True)  # warm-up: the page cache
    times: list[list[float]] = [[] for _ in cases]
    for _ in range(runs):
        for (_, argv), seen in zip(cases, times, strict=True):
            start = time.perf_counter()
            subprocess.run(argv, check=True)
            seen.append(time.perf_counter() - start)
    return times


def _p90(times: list[float]) -> float:
    return statistics.quantiles(times, n=10)[-1]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=50)
    runs = parser.parse_args().runs
    with tempfile.TemporaryDirectory(dir="/var/tmp") as where:
        project, home = Path(where, "project"), Path(where, "home")
        project.mkdir()
        home.mkdir()
        layout = Layout(roots=(project,), home=home)
        cases = [("true (no sandbox)", ["true"])]
        floor = [sys.executable, "-I", "-S", "-c", "pass"]
        cases.append(("python -I -S -c pass (the launcher's floor)", floor))
        if probe().mechanism == "bwrap":
            argv = bwrap_argv(SandboxConfig(), layout, ["true"], project)
            cases.append(("true in bubblewrap + launcher", argv))
        if landlock_abi() >= 1:
            cases.append(
                ("true under Landlock + launcher", landlock_argv(SandboxConfig(), layout, ["true"]))
            )
        rows = list(zip((name for name, _ in cases), _times(cases, runs), strict=True))
    bare = statistics.median(rows[0][1])
    print(f"{runs} runs each, Python {sys.version.split()[0]}, Landlock ABI {landlock_abi()}\n")
    print("| command | median ms | p90 ms | added at the median, ms |")
    print("| --- | ---: | ---: | ---: |")
    for name, times in rows:
        median = statistics.median(times)
        added = (median - bare) * 1000
        print(f"| {name} | {median * 1000:.1f} | {_p90(times) * 1000:.1f} | {added:+.1f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
