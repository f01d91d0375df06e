"""The keeper of stdio servers (``toolwire/mcp/guard.py``) run on its own."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import toolwire.mcp

GUARD = Path(toolwire.mcp.__file__).with_name("guard.py")


def test_a_keeper_that_does_not_lead_its_group_kills_only_its_server() -> None:
    # The shell leads the group and is not the pid the keeper was given, as when someone
    # runs the keeper by hand: the keeper stops its server, never its caller's group.
    script = f'"{sys.executable}" -I -S "{GUARD}" 1 sleep 30; echo "kept $?"'
    done = subprocess.run(
        ["sh", "-c", script], start_new_session=True, capture_output=True, text=True, timeout=20
    )
    assert done.stdout.strip() == "kept 137"


def test_the_keeper_exits_with_its_servers_status() -> None:
    script = f'"{sys.executable}" -I -S "{GUARD}" $$ sh -c "exit 7"; echo "status $?"'
    done = subprocess.run(
        ["sh", "-c", script], start_new_session=True, capture_output=True, text=True, timeout=20
    )
    assert done.stdout.strip() == "status 7"
