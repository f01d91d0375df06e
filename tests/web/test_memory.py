"""A 50 MB body without ``Content-Length`` stops at ``max_bytes``, and reading it grows
memory by less than twice ``max_bytes`` (measured in a process of its own:
tests/web/rss_probe.py). Decoding then makes the text, a second copy while it is made."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.web.rss_probe import MAX_BYTES

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="reads /proc/self/status")
def test_a_huge_body_is_cut_at_max_bytes_and_never_held() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "tests.web.rss_probe"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    found = json.loads(done.stdout)
    assert found["kept"] == MAX_BYTES
    assert found["truncated"] is True
    assert found["body"] < 2 * MAX_BYTES, f"peak RSS grew {found['body']:,} bytes reading"
    assert found["total"] < 2.5 * MAX_BYTES, f"peak RSS grew {found['total']:,} bytes"
