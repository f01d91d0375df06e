"""Run every benchmark and print their tables (``make bench``)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).parent
SUITES = [
    "startup.py",
    "images.py",
    "decode_args.py",
    "decode_formats.py",
    "acp_updates.py",
    "handoff.py",
    "proxy.py",
    "ledger.py",
    "context.py",
    "checkpoints.py",
    "sandbox.py",
]


def main() -> int:
    status = 0
    for name in SUITES:
        script = HERE / name
        if not script.exists():
            continue
        print(f"## {name}\n", flush=True)
        status |= subprocess.call([sys.executable, str(script)])
        print(flush=True)
    return status


if __name__ == "__main__":
    sys.exit(main())
