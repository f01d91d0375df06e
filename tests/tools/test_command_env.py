"""Commands never see the API keys: not the configured backends', not the providers'.

``Bash`` passed the agent's whole environment, so ``echo $ANTHROPIC_API_KEY`` put the
key in the editor, the session database and the next model request. A command now gets
the environment without ``KEY_VARIABLES`` and without every configured backend's
``api_key_env``; ``[tools] env_allow`` lets named ones through.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.tools.support import run
from toolwire.tools import LocalTerminal, ToolContext, get_tool
from toolwire.tools.terminal import KEY_VARIABLES, command_env, hidden_variables

NAMES = st.from_regex(r"[A-Z_][A-Z0-9_]{0,12}", fullmatch=True)
VALUES = st.text(st.characters(codec="utf-8", exclude_characters="\0"), max_size=10)


@settings(max_examples=40)
@given(
    plain=st.dictionaries(NAMES, VALUES, max_size=8),
    keys=st.dictionaries(st.sampled_from(sorted(KEY_VARIABLES)), VALUES, max_size=6),
    configured=st.dictionaries(NAMES, VALUES, max_size=3),
    allow=st.lists(st.sampled_from(sorted(KEY_VARIABLES)), max_size=3),
)
def test_a_command_sees_every_variable_but_the_keys(
    plain: dict[str, str],
    keys: dict[str, str],
    configured: dict[str, str],
    allow: list[str],
) -> None:
    environ = plain | keys | configured
    hidden = hidden_variables(configured, allow)
    env = command_env(hidden, environ=environ)
    for name, value in environ.items():
        secret = name in configured or (name in KEY_VARIABLES and name not in allow)
        if secret:
            assert name not in env
        elif name not in ("PAGER", "GIT_PAGER", "GIT_TERMINAL_PROMPT"):
            assert env[name] == value
    assert env["GIT_TERMINAL_PROMPT"] == "0"


def test_bash_does_not_echo_a_key(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-secret-one")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-openai-secret-two")
    monkeypatch.setenv("MY_GATEWAY_KEY", "gateway-secret-three")
    monkeypatch.setenv("TOOLWIRE_TEST_PLAIN", "plain-value")
    (tmp_path / "p").mkdir()
    command = 'echo "[$ANTHROPIC_API_KEY|$OPENAI_API_KEY|$MY_GATEWAY_KEY|$TOOLWIRE_TEST_PLAIN]"'
    default = ToolContext.create(tmp_path / "p")  # the library's default terminal
    shown = run("Bash", {"command": command}, default).content
    assert shown == "[||gateway-secret-three|plain-value]"  # not a well-known name
    terminal = LocalTerminal(hidden=hidden_variables(["MY_GATEWAY_KEY"], ["OPENAI_API_KEY"]))
    configured = ToolContext.create(tmp_path / "p", terminal=terminal)
    shown = run("Bash", {"command": command}, configured).content
    assert shown == "[|sk-openai-secret-two||plain-value]"

    async def in_background() -> str:
        args = {"command": command + "; sleep 60", "run_in_background": True}
        result = await get_tool("Bash").run(args, configured)  # type: ignore[union-attr]
        assert result.raw_output is not None
        log = Path(result.raw_output["log_path"])
        for _ in range(100):
            if log.read_text():
                break
            await asyncio.sleep(0.02)
        await terminal.aclose()
        text = log.read_text()
        log.unlink()
        return text

    assert asyncio.run(in_background()) == "[|sk-openai-secret-two||plain-value]\n"
