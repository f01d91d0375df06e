"""``toolwire acp``: a ``Bash`` command run by the agent does not see the keys.

The configured backends' ``api_key_env`` and the providers' well-known key variables are
left out of a command's environment, so a key never reaches the editor, the session
database or the next model request; ``[tools] env_allow`` lets a named one through.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from acp import text_block

from tests.agent.support import (
    ScriptedClient,
    agent,
    calls_by_id,
    environment,
    project,
    response,
    start,
    write_config,
)
from toolwire.agent.store.database import SessionDatabase
from toolwire.testing.streams import write_cassette

SECRETS = {
    "GATEWAY_KEY": "gw-secret-0123456789",  # a configured backend's api_key_env
    "ANTHROPIC_API_KEY": "sk-ant-secret-0123456789",  # well known
    "OPENAI_API_KEY": "sk-openai-allowed-0123456789",  # well known, but allowed
}
COMMAND = 'echo "[$GATEWAY_KEY|$ANTHROPIC_API_KEY|$OPENAI_API_KEY|$PLAIN]"'


def test_bash_in_the_agent_gets_no_key(tmp_path: Path) -> None:
    root = project(tmp_path)
    cassette = write_cassette(
        tmp_path / "turn.jsonl",
        [
            response(("tool", "Bash", {"command": COMMAND}, "toolu_env")),
            response(("text", "Done."), n=1),
        ],
    )
    config = write_config(
        tmp_path,
        f'default_backend = "tape"\n[backends.tape]\nprovider = "replay"\ncassette = "{cassette}"\n'
        '[backends.gateway]\nprovider = "openai-chat"\nmodel = "m"\n'
        'base_url = "http://127.0.0.1:9/v1"\napi_key_env = "GATEWAY_KEY"\n'
        '[tools]\nenv_allow = ["OPENAI_API_KEY"]\n',
    )
    env = environment(tmp_path, PLAIN="plain-value", **SECRETS)
    client = ScriptedClient(answers=["allow_once"])

    async def scenario() -> str:
        async with agent(tmp_path, client, "--config", str(config), env=env) as run:
            sid = await start(run.conn, root)
            result = await run.conn.prompt(session_id=sid, prompt=[text_block("env?")])
            assert result.stop_reason == "end_turn"
            call = calls_by_id(run.notifications())["toolu_env"]
            assert call["rawOutput"]["exit_code"] == 0
            shown = json.dumps(run.notifications())
            assert f"[||{SECRETS['OPENAI_API_KEY']}|plain-value]" in shown
            for name in ("GATEWAY_KEY", "ANTHROPIC_API_KEY"):
                assert SECRETS[name] not in shown
            return sid

    sid = asyncio.run(scenario())
    with SessionDatabase(tmp_path / "data" / "toolwire" / "sessions.db") as db:
        stored = json.dumps(db.updates(sid)) + repr(db.messages(sid))
    assert "plain-value" in stored
    assert SECRETS["GATEWAY_KEY"] not in stored
    assert SECRETS["ANTHROPIC_API_KEY"] not in stored
