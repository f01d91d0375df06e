"""``toolwire acp`` driven by the TypeScript SDK's ACP v2 client, on the demo cassette.

``tests/node/client_v2.mjs`` asks for protocol version 2, runs the demo's turn (the
same cassette ``toolwire demo`` plays), then resumes the session with replay in a new
agent process; every line each agent wrote is checked against the v2 draft schema.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests import acp_check_v2
from tests.agent.support import environment
from tests.agent.test_node_client import NODE_DIR, _node_sdk
from toolwire.samples import DEMO_CASSETTE, copy_demo_project

pytestmark = [pytest.mark.e2e, pytest.mark.slow]  # Node, the SDK, two agents: ~25 s


def _drive(tmp_path: Path, config: str) -> tuple[dict[str, Any], Path]:
    node = _node_sdk()
    acp_check_v2.schema()  # skips before anything starts when the package is absent
    root = copy_demo_project(tmp_path / "project")
    (tmp_path / "config.toml").write_text(config, encoding="utf-8")
    env = environment(tmp_path, TOOLWIRE_CONFIG=str(tmp_path / "config.toml"))
    # The cassette's Bash step runs `python`: this interpreter, as `toolwire demo` does.
    env["PATH"] = f"{Path(sys.executable).parent}:{env['PATH']}"
    args = ["--backend", f"replay:{DEMO_CASSETTE}", "--mode", "accept-edits"]
    done = subprocess.run(
        [node, str(NODE_DIR / "client_v2.mjs"), sys.executable, str(root), *args],
        cwd=NODE_DIR,
        env=env,
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.splitlines()[-1]), root


def _check_wire(wire: list[dict[str, Any]]) -> int:
    """Every line each agent wrote, valid for v2 (answers by the method asked)."""
    checked = 0
    for conn in {entry["conn"] for entry in wire}:
        asked = {
            e["msg"]["id"]: e["msg"]["method"]
            for e in wire
            if e["conn"] == conn and e["dir"] == "in" and "method" in e["msg"] and "id" in e["msg"]
        }
        sent = [e["msg"] for e in wire if e["conn"] == conn and e["dir"] == "out"]
        checked += acp_check_v2.check_wire(sent, asked)
    return checked


def test_typescript_v2_client_runs_the_demo_and_resumes_it(tmp_path: Path) -> None:
    result, root = _drive(tmp_path, "[acp]\nv2 = true\n")
    assert result["initialize"]["protocolVersion"] == 2
    assert _check_wire(result["wire"]) > 50
    updates = result["updates"]
    kinds = [u["sessionUpdate"] for u in updates]
    # The prompt, accepted under the id the answer names, then the turn's states.
    accepted = updates[kinds.index("user_message")]
    assert accepted["messageId"] == result["messageId"]
    assert accepted["content"] == [{"type": "text", "text": "Fix the failing test"}]
    states = [u["state"] for u in updates if u["sessionUpdate"] == "state_update"]
    assert states == ["running", "requires_action", "running", "idle"]
    assert updates[-1] == {
        "sessionUpdate": "state_update",
        "state": "idle",
        "stopReason": "end_turn",
    }
    # v1's kinds never appear: cards are upserts, the plan is a plan_update.
    assert not {"tool_call", "plan", "current_mode_update"} & set(kinds)
    assert {"tool_call_update", "tool_call_content_chunk", "plan_update"} <= set(kinds)
    ended = {u["toolCallId"] for u in updates if u.get("status") == "completed"}
    assert len(ended) == 8
    asked = result["permissions"]
    assert [p["subject"]["type"] for p in asked] == ["tool_call"]
    assert asked[0]["title"] == "python -m unittest -q"
    # The demo's fix is on disk, as with the v1 client.
    assert "ascii_text.lower()" in (root / "textkit" / "slugify.py").read_text(encoding="utf-8")
    # session/resume with replay: the stored turn comes back in v2 form.
    replayed = [u["sessionUpdate"] for u in result["replayed"]]
    assert replayed[0] == "user_message_chunk"
    assert {"tool_call_update", "plan_update", "agent_message_chunk"} <= set(replayed)


def test_v2_off_answers_protocol_version_one(tmp_path: Path) -> None:
    done = _drive_initialize_only(tmp_path)
    assert done["protocolVersion"] == 1


def _drive_initialize_only(tmp_path: Path) -> dict[str, Any]:
    """``initialize`` asking for 2 with ``[acp] v2 = false``: the answer (no Node needed)."""
    (tmp_path / "config.toml").write_text("[acp]\nv2 = false\n", encoding="utf-8")
    env = environment(tmp_path, TOOLWIRE_CONFIG=str(tmp_path / "config.toml"))
    ask = {
        "jsonrpc": "2.0",
        "id": 0,
        "method": "initialize",
        "params": {"protocolVersion": 2, "info": {"name": "t", "version": "0"}, "capabilities": {}},
    }
    done = subprocess.run(
        [sys.executable, "-m", "toolwire", "acp", "--backend", f"replay:{DEMO_CASSETTE}"],
        input=json.dumps(ask) + "\n",
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    answer: dict[str, Any] = json.loads(done.stdout.splitlines()[0])
    result: dict[str, Any] = answer["result"]
    return result
