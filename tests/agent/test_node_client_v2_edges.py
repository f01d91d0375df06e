"""The edges of ACP v2 through the TypeScript SDK's v2 client (``client_v2_edges.mjs``).

One ``toolwire acp`` process, one connection: the client's ``auth.terminal`` and
``elicitation.form`` are kept (``login`` offered, an MCP server's question asked), the
``initialize`` answer comes before the SDK has loaded (as v1's does), a short command's
output reaches the client once, ``session/resume`` with an unknown ``replayFrom`` cursor
is -32602, and ``auth/logout`` forgets the keys ``toolwire login`` stored. Every line the
agent wrote is checked against the v2 draft schema.
"""

from __future__ import annotations

import base64
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests import acp_check_v2
from tests.agent.support import answer, environment, project
from tests.agent.test_node_client import NODE_DIR, _node_sdk
from tests.mcp.support import EDGE
from toolwire.config.keys import keys_path, stored_names
from toolwire.testing import streams

pytestmark = [pytest.mark.e2e, pytest.mark.slow]  # Node, the SDK, an MCP server: ~10 s

OUTPUT = "hello-short-output"
COMMAND = "printf '%s-%s\\n' hello short-output"  # its text is not its output
MCP_TOOL = "mcp__edge__ask_name"
#: What the v1 ``initialize`` answer takes on this machine is well under this; before the
#: v2 answer was given early it took 1.6-4 s (the SDK's models and the schema loading).
EARLY_MS = 1000


def _drive(tmp_path: Path) -> tuple[dict[str, Any], dict[str, str]]:
    node = _node_sdk()
    acp_check_v2.schema()  # skips before anything starts when the package is absent
    root = project(tmp_path)
    bash = {"command": COMMAND}
    bodies = [
        streams.anthropic_sse(answer(("tool", MCP_TOOL, {}, "toolu_ask")), message_id="m0"),
        streams.anthropic_sse(answer(("tool", "Bash", bash, "toolu_echo")), message_id="m1"),
        streams.anthropic_sse(answer(("text", "Hello, Ada.")), message_id="m2"),
    ]
    cassette = streams.write_cassette(tmp_path / "edges.jsonl", bodies)
    (tmp_path / "config.toml").write_text("[acp]\nv2 = true\n", encoding="utf-8")
    env = environment(tmp_path, TOOLWIRE_CONFIG=str(tmp_path / "config.toml"))
    env["TOOLWIRE_KEYRING"] = "off"
    stored = keys_path(env)
    stored.parent.mkdir(parents=True, exist_ok=True)
    stored.write_text(json.dumps({"ANTHROPIC_API_KEY": {"value": "sk-ant-stored-0123"}}))
    args = ["--backend", f"replay:{cassette}", "--mode", "accept-edits"]
    done = subprocess.run(
        [node, str(NODE_DIR / "client_v2_edges.mjs"), sys.executable, str(root), str(EDGE), *args],
        cwd=NODE_DIR,
        env=env,
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    result: dict[str, Any] = json.loads(done.stdout.splitlines()[-1])
    asked = {
        e["msg"]["id"]: e["msg"]["method"]
        for e in result["wire"]
        if e["dir"] == "in" and "method" in e["msg"] and "id" in e["msg"]
    }
    sent = [e["msg"] for e in result["wire"] if e["dir"] == "out"]
    # The answers to the resume and the logout are checked by their own tests.
    own = ("session/resume", "auth/logout")
    answered = [m for m in sent if "error" not in m or asked.get(m.get("id")) not in own]
    assert acp_check_v2.check_wire(answered, asked) > 10
    return result, env


@pytest.fixture(scope="module")
def driven(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[str, Any], dict[str, str]]:
    return _drive(tmp_path_factory.mktemp("edges"))


def test_the_clients_capabilities_are_kept(driven: tuple[dict[str, Any], dict[str, str]]) -> None:
    result, _ = driven
    methods = {m["methodId"]: m for m in result["initialize"]["authMethods"]}
    assert methods["login"]["type"] == "terminal"  # auth.terminal advertised
    [asked] = result["elicitations"]  # elicitation.form advertised: asked, not declined
    assert asked["message"] == "Which name should the greeting use?"
    cards = [u for u in result["updates"] if u.get("toolCallId") == "toolu_ask"]
    assert "accepted: Ada" in json.dumps(cards)


def test_initialize_is_answered_before_the_sdk_loads(
    driven: tuple[dict[str, Any], dict[str, str]],
) -> None:
    result, _ = driven
    print(f"v2 initialize answered in {result['initializeMs']:.0f} ms")
    assert result["initialize"]["protocolVersion"] == 2
    assert result["initializeMs"] < EARLY_MS


def test_short_output_reaches_the_client_once(
    driven: tuple[dict[str, Any], dict[str, str]],
) -> None:
    result, _ = driven
    turn = result["updates"][: result["turnUpdates"]]
    chunks = [u["data"] for u in turn if u["sessionUpdate"] == "terminal_output_chunk"]
    assert b"".join(base64.b64decode(c) for c in chunks) == f"{OUTPUT}\n".encode()
    card = [u for u in turn if u.get("toolCallId") == "toolu_echo"]
    assert OUTPUT not in json.dumps(card)  # not in rawOutput, not in a content chunk


def test_an_unknown_replay_cursor_is_invalid_params(
    driven: tuple[dict[str, Any], dict[str, str]],
) -> None:
    result, _ = driven
    assert result["resume"]["error"]["code"] == -32602


def test_logout_forgets_the_stored_keys(driven: tuple[dict[str, Any], dict[str, str]]) -> None:
    result, env = driven
    assert result["logout"] == {}
    assert stored_names(env) == []
