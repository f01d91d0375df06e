"""A benchmark harness drives toolwire the way Harbor (the Terminal-Bench harness) drives
any registry agent: it launches the agent with a provider's key in the environment, signs
in with the ``env_var`` auth method whose variables it has, picks ``-m provider/model``
among the values of the config option whose ``category`` is ``model``, then prompts.
The client here is the official ACP SDK's, as the harness's is."""

from __future__ import annotations

from pathlib import Path

import pytest
from acp import PROTOCOL_VERSION
from acp.exceptions import RequestError
from acp.schema import AuthCapabilities, ClientCapabilities, EnvVarAuthMethod, Implementation

from tests.agent.pair import AgentUnderTest, agent_under_test
from tests.agent.support import check_wire, text_of

pytestmark = pytest.mark.anyio

#: The key the harness launches the agent with (not the fixture's TEST_KEY).
HARNESS_KEY = "sk-harness-9f8e7d6c5b4a39281706"
#: An Anthropic backend read from $ANTHROPIC_API_KEY, beside the fixture's default one.
ANTHROPIC = (
    '\n[backends.anthropic]\nprovider = "anthropic"\nmodel = "claude-harbor"\n'
    'base_url = "http://anthropic.test"\napi_key_env = "ANTHROPIC_API_KEY"\n'
)


async def _initialize(acp: AgentUnderTest) -> list[EnvVarAuthMethod]:
    """``initialize`` as the harness sends it (no terminal sign-in); its env_var methods."""
    init = await acp.run.conn.initialize(
        protocol_version=PROTOCOL_VERSION,
        client_capabilities=ClientCapabilities(auth=AuthCapabilities(terminal=False)),
        client_info=Implementation(name="harbor-shaped", version="0"),
    )
    return [m for m in init.auth_methods or () if isinstance(m, EnvVarAuthMethod)]


async def test_a_harness_signs_in_with_its_key_and_picks_provider_slash_model(
    tmp_path: Path,
) -> None:
    env = {"ANTHROPIC_API_KEY": HARNESS_KEY}
    async with agent_under_test(tmp_path, config=ANTHROPIC, env=env) as acp:
        acp.model.function = lambda request: "Benchmark answer."
        # The first env_var method all of whose required variables the harness has set.
        usable = [
            m
            for m in await _initialize(acp)
            if all(env.get(v.name) for v in m.vars if not v.optional)
        ]
        assert [m.id for m in usable] == ["anthropic"]
        assert await acp.run.conn.authenticate(method_id=usable[0].id) is not None
        session = await acp.run.conn.new_session(cwd=str(acp.root), mcp_servers=[])
        model = next(o for o in session.config_options or () if o.category == "model")
        values = [choice.value for choice in model.options]
        # `-m anthropic/claude-harbor`: offered as is; the default backend's too.
        assert "anthropic/claude-harbor" in values
        assert "fake/claude-test" in values
        await acp.run.conn.set_config_option(
            config_id=model.id, session_id=session.session_id, value="anthropic/claude-harbor"
        )
        done = await acp.prompt(session.session_id, "Solve the task.")
        assert done.stop_reason == "end_turn"
        assert text_of(acp.run.notifications()).endswith("Benchmark answer.")
        # The request went to the chosen model, with the key the harness launched it with.
        assert acp.model.bodies[-1]["model"] == "claude-harbor"
        assert acp.model.headers[-1]["host"] == "anthropic.test"
        assert acp.model.headers[-1]["x-api-key"] == HARNESS_KEY
        check_wire(acp.run.wire)


async def test_the_env_var_method_names_its_variable_when_it_is_unset(tmp_path: Path) -> None:
    async with agent_under_test(tmp_path, env={"OPENAI_API_KEY": ""}) as acp:
        methods = {m.id: [v.name for v in m.vars] for m in await _initialize(acp)}
        assert methods["openai"] == ["OPENAI_API_KEY"]
        with pytest.raises(RequestError) as caught:
            await acp.run.conn.authenticate(method_id="openai")
        assert caught.value.code == -32000  # Authentication required
        assert "OPENAI_API_KEY" in str(caught.value.data)
        # The backend name alone still picks a model, as editors and /model send it.
        sid = (await acp.run.conn.new_session(cwd=str(acp.root), mcp_servers=[])).session_id
        await acp.run.conn.set_config_option(config_id="model", session_id=sid, value="fake")
        check_wire(acp.run.wire)
