"""``plan`` and ``bypass`` modes, and "always reject" for the rest of the session."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.agent.pair import agent_under_test
from tests.agent.support import APP, ScriptedClient, answer, calls_by_id, check_wire, write_config
from toolwire.agent.features.plan import GO_AHEAD
from toolwire.config import ConfigError, load_config
from toolwire.testing.function import Answer

pytestmark = pytest.mark.anyio

EDIT = {"file_path": "app.py", "old_string": "'hi'", "new_string": "'bye'"}
BASH = {"command": "echo ran > ran.txt"}


async def _run(
    tmp_path: Path, replies: list[Answer], answers: list[str], mode: str, prompts: int = 1
) -> tuple[list[dict[str, Any]], ScriptedClient, list[dict[str, Any]], Path]:
    """``prompts`` prompts in ``mode``: the bodies the model was sent, the client, the
    notifications, the project."""
    async with agent_under_test(tmp_path) as acp:
        acp.model.script(*replies)
        acp.client.answers = answers
        sid = await acp.start()
        await acp.run.conn.set_session_mode(session_id=sid, mode_id=mode)
        for n in range(prompts):
            result = await acp.prompt(sid, f"p{n}")
            assert result.stop_reason == "end_turn"
        check_wire(acp.run.wire)
    return acp.model.bodies, acp.client, acp.run.notifications(), acp.root


def _tool_results(body: dict[str, Any]) -> list[dict[str, Any]]:
    return [b for m in body["messages"] for b in m["content"] if b["type"] == "tool_result"]


@pytest.mark.parametrize("choice", ["plan_go", "plan_stay"])
async def test_plan_refuses_edits_then_asks_to_go(tmp_path: Path, choice: str) -> None:
    replies: list[Answer] = [
        answer(("tool", "Edit", EDIT, "toolu_e1")),
        "Plan: change greet to say bye.",
        answer(("tool", "Edit", EDIT, "toolu_e2")),
        "Done.",
    ]
    sent, client, notes, root = await _run(tmp_path, replies, [choice], "plan")
    first = sent[0]
    assert "plan mode" in first["system"][0]["text"]
    (refused,) = _tool_results(sent[1])
    assert refused["is_error"] is True
    assert "plan mode" in refused["content"]
    (asked,) = client.permissions  # only the plan question: the Edit was refused outright
    assert asked.kind == "switch_mode"
    kinds = [u["update"]["sessionUpdate"] for u in (n["params"] for n in notes)]
    if choice == "plan_stay":
        assert len(sent) == 2
        assert (root / "app.py").read_text(encoding="utf-8") == APP
        assert "current_mode_update" not in kinds[kinds.index("tool_call") :]
        return
    assert len(sent) == 4
    go = sent[2]
    assert go["messages"][-1]["content"][-1]["text"] == GO_AHEAD
    assert "plan mode" not in go["system"][0]["text"]
    assert "bye" in (root / "app.py").read_text(encoding="utf-8")  # accept-edits: no ask
    modes = [n["params"]["update"] for n in notes]
    switched = [u for u in modes if u["sessionUpdate"] == "current_mode_update"]
    assert switched[-1]["currentModeId"] == "accept-edits"
    options = [u for u in modes if u["sessionUpdate"] == "config_option_update"]
    mode = next(o for o in options[-1]["configOptions"] if o["id"] == "mode")
    assert mode["currentValue"] == "accept-edits"


async def test_bypass_never_asks(tmp_path: Path) -> None:
    replies: list[Answer] = [
        answer(("tool", "Edit", EDIT, "toolu_e"), ("tool", "Bash", BASH, "toolu_b")),
        "Both done.",
    ]
    sent, client, notes, root = await _run(tmp_path, replies, [], "bypass")
    assert client.permissions == []
    assert "bye" in (root / "app.py").read_text(encoding="utf-8")
    assert (root / "ran.txt").exists()
    assert all(not r.get("is_error") for r in _tool_results(sent[1]))
    assert calls_by_id(notes)["toolu_b"]["status"] == "completed"


def test_bypass_is_never_the_default(tmp_path: Path) -> None:
    path = write_config(tmp_path, 'mode = "bypass"\n')
    with pytest.raises(ConfigError, match="cannot be the default"):
        load_config(path, environ={})
    with pytest.raises(ConfigError, match="cannot be the default"):
        load_config(None, environ={"TOOLWIRE_MODE": "bypass", "XDG_CONFIG_HOME": str(tmp_path)})


async def test_reject_always_refuses_later_calls_without_asking(tmp_path: Path) -> None:
    replies: list[Answer] = [
        answer(("tool", "Bash", BASH, "toolu_1")),
        answer(("tool", "Bash", BASH, "toolu_2")),
        "I will stop.",
        answer(("tool", "Bash", BASH, "toolu_3")),
        "Still refused.",
    ]
    sent, client, notes, root = await _run(tmp_path, replies, ["reject_always"], "ask", prompts=2)
    assert len(client.permissions) == 1  # asked once, for the first call
    assert not (root / "ran.txt").exists()
    (first,) = _tool_results(sent[1])
    assert first["content"].startswith("The user rejected this Bash call")
    second = _tool_results(sent[2])[-1]
    assert "always reject Bash" in second["content"]
    third = _tool_results(sent[4])[-1]
    assert "always reject Bash" in third["content"]
    assert calls_by_id(notes)["toolu_3"]["status"] == "failed"
