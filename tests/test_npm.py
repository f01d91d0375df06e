"""The npm packages of the real-client tests are installed once, however many workers ask.

Under ``pytest -n auto`` several workers reach the same missing package at once; two
``npm ci`` in one folder delete each other's ``node_modules`` mid-install. Here a fake
``npm`` (it logs each run, takes a while, then writes the package) stands in for the
real one, and four processes ask for the same package at the same time.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

from tests.helpers import REPO

FAKE_NPM = """\
#!/bin/sh
echo "$$" >> "$NPM_LOG"
sleep 0.5
mkdir -p node_modules/pkg && touch node_modules/pkg/index.js
"""


def test_parallel_workers_install_a_package_once(tmp_path: Path) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    npm = bin_dir / "npm"
    npm.write_text(FAKE_NPM, encoding="utf-8")
    npm.chmod(0o755)
    folder = tmp_path / "client"
    folder.mkdir()
    log = tmp_path / "npm.log"
    worker = textwrap.dedent(
        f"""
        from pathlib import Path
        from tests.npm import npm_installed
        folder = Path({str(folder)!r})
        npm_installed(folder, folder / "node_modules" / "pkg" / "index.js", "make deps")
        assert (folder / "node_modules" / "pkg" / "index.js").is_file()
        """
    )
    env = os.environ | {"PATH": f"{bin_dir}:{os.environ['PATH']}", "NPM_LOG": str(log)}
    workers = [
        subprocess.Popen([sys.executable, "-c", worker], cwd=REPO, env=env) for _ in range(4)
    ]
    assert [w.wait(timeout=60) for w in workers] == [0, 0, 0, 0]
    assert len(log.read_text(encoding="utf-8").splitlines()) == 1
