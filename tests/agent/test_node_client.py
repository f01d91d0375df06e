"""``toolwire acp`` driven by the official TypeScript SDK (``@agentclientprotocol/sdk`` 2.x).

``tests/node/client.mjs`` spawns the agent, runs initialize -> session/new -> prompt on
a replay cassette and prints what it received; here we check it. The SDK is installed
from ``tests/node/package-lock.json`` (``make node-deps``, or by this test on first run).
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.agent.support import APP, check_update, environment, full_turn_cassette, project
from tests.npm import npm_installed

pytestmark = [pytest.mark.e2e, pytest.mark.slow]  # Node and the SDK client: 7-11 s

NODE_DIR = Path(__file__).parents[1] / "node"


def _node_sdk() -> str:
    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not installed: the TypeScript SDK client test needs Node.js >= 20")
    sdk = NODE_DIR / "node_modules" / "@agentclientprotocol" / "sdk"
    npm_installed(NODE_DIR, sdk, "make node-deps", timeout=300)
    return node


def test_typescript_sdk_client_runs_a_turn(tmp_path: Path) -> None:
    node = _node_sdk()
    root = project(tmp_path)
    cassette = full_turn_cassette(tmp_path)
    env = environment(tmp_path)
    done = subprocess.run(
        [node, str(NODE_DIR / "client.mjs"), sys.executable, str(cassette), str(root)],
        cwd=NODE_DIR,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout.splitlines()[-1])
    assert result["stopReason"] == "end_turn"
    updates = result["updates"]
    for update in updates:
        check_update(result["sessionId"], update)
    kinds = [u["sessionUpdate"] for u in updates]
    assert kinds[0] == "config_option_update"
    assert {"agent_thought_chunk", "agent_message_chunk", "tool_call", "tool_call_update"} <= set(
        kinds
    )
    ended = {u["toolCallId"]: u["status"] for u in updates if u.get("status") == "completed"}
    assert set(ended) == {"toolu_read", "toolu_edit", "toolu_bash"}
    assert result["permissions"] == ["toolu_edit", "toolu_bash"]
    assert (root / "app.py").read_text(encoding="utf-8") == APP.replace("'hi'", "'hello'")
