"""``toolwire acp``: a ``Bash`` command run by the agent does not see the keys.

The configured backends' ``api_key_env`` and the providers' well-known key variables are
left out of a command's environment, so a key never reaches the editor, the session
database or the next model request; ``[tools] env_allow`` lets a named one through.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.agent.pair import agent_under_test
from tests.agent.support import answer, calls_by_id
from toolwire.agent.store.database import SessionDatabase

pytestmark = pytest.mark.anyio

SECRETS = {
    "GATEWAY_KEY": "gw-secret-0123456789",  # a configured backend's api_key_env
    "ANTHROPIC_API_KEY": "sk-ant-secret-0123456789",  # well known
    "OPENAI_API_KEY": "sk-openai-allowed-0123456789",  # well known, but allowed
}
COMMAND = 'echo "[$GATEWAY_KEY|$ANTHROPIC_API_KEY|$OPENAI_API_KEY|$PLAIN]"'
GATEWAY = (
    '\n[backends.gateway]\nprovider = "openai-chat"\nmodel = "m"\n'
    'base_url = "http://127.0.0.1:9/v1"\napi_key_env = "GATEWAY_KEY"\n'
    '[tools]\nenv_allow = ["OPENAI_API_KEY"]\n'
)


async def test_bash_in_the_agent_gets_no_key(tmp_path: Path) -> None:
    env = {"PLAIN": "plain-value", **SECRETS}
    async with agent_under_test(tmp_path, config=GATEWAY, env=env) as acp:
        acp.model.script(answer(("tool", "Bash", {"command": COMMAND}, "toolu_env")), "Done.")
        acp.client.answers = ["allow_once"]
        sid = await acp.start()
        assert (await acp.prompt(sid, "env?")).stop_reason == "end_turn"
        call = calls_by_id(acp.run.notifications())["toolu_env"]
        assert call["rawOutput"]["exit_code"] == 0
        shown = json.dumps(acp.run.notifications())
        assert f"[||{SECRETS['OPENAI_API_KEY']}|plain-value]" in shown
        for name in ("GATEWAY_KEY", "ANTHROPIC_API_KEY"):
            assert SECRETS[name] not in shown
        # What the model is sent next: the command's output, without the keys.
        sent = json.dumps(acp.model.bodies[1]["messages"][-1])
        assert "plain-value" in sent
        assert SECRETS["GATEWAY_KEY"] not in sent
        assert SECRETS["ANTHROPIC_API_KEY"] not in sent
    with SessionDatabase(tmp_path / "data" / "toolwire" / "sessions.db") as db:
        stored = json.dumps(db.updates(sid)) + repr(db.messages(sid))
    assert "plain-value" in stored
    assert SECRETS["GATEWAY_KEY"] not in stored
    assert SECRETS["ANTHROPIC_API_KEY"] not in stored
