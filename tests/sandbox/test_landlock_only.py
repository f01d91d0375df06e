"""Where Landlock is the only mechanism: ``Bash`` keeps asking in ``ask`` mode, and the
session says, in one line, what is confined and what is not (reads and the network are
not: a command there could read ``~/.ssh`` and send it anywhere)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.agent.pair import agent_under_test
from tests.agent.support import answer
from tests.sandbox.support import WHY_NOT
from toolwire.agent import factory
from toolwire.sandbox.launch import landlock_abi
from toolwire.sandbox.probe import Probe, probe

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.skipif(landlock_abi() < 1, reason="the kernel has no Landlock"),
]
ON = {"TOOLWIRE_SANDBOX": "workspace-write"}


@pytest.mark.parametrize(("mechanism", "questions"), [("landlock", 1), ("bwrap", 0)])
async def test_bash_asks_under_landlock_alone_and_the_session_says_why(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, mechanism: str, questions: int
) -> None:
    if mechanism == "bwrap" and probe().mechanism != "bwrap":
        pytest.skip(f"no bubblewrap sandbox here ({WHY_NOT})")
    monkeypatch.setattr(factory, "probe", lambda: Probe(mechanism))  # type: ignore[arg-type]
    async with agent_under_test(tmp_path, env=ON) as acp:
        bash = {"command": "echo hi > note.txt"}
        acp.model.script(answer(("tool", "Bash", bash, "toolu_1")), "Done.")
        acp.client.answers = ["allow_once"]
        sid = await acp.start()
        assert (await acp.prompt(sid, "write the note")).stop_reason == "end_turn"
        assert len(acp.client.permissions) == questions
        assert (acp.root / "note.txt").read_text() == "hi\n"
        said = json.dumps(acp.run.notifications())
    told = "Landlock only" in said and "reads (deny_read) and the network are not" in said
    assert told == (mechanism == "landlock"), said[:2000]
