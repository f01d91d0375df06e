"""``toolwire client -- toolwire acp``: the agent it starts gets the user's environment
(the ACP SDK's default passes only HOME, PATH and a few more, so the agent saw no key and
no config and replayed the bundled demo)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tests.agent.support import response
from tests.fakes.http import FakeServer, Received, Reply
from toolwire.cli import app

pytestmark = pytest.mark.e2e

KEY = "sk-ant-user-0123456789abcdef"


def _ok(request: Received) -> Reply:
    return Reply(chunks=[response(("text", "hello from the fake provider")).encode()])


def test_the_agent_gets_the_users_key_and_config(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    project = tmp_path / "project"
    project.mkdir()
    (tmp_path / "home").mkdir()
    with FakeServer(respond=_ok) as server:
        config = tmp_path / "xdg" / "toolwire" / "config.toml"
        config.parent.mkdir(parents=True)
        config.write_text(
            'default_backend = "claude"\n[backends.claude]\nprovider = "anthropic"\n'
            f'model = "claude-test"\nbase_url = "{server.url}"\n'
            'api_key_env = "ANTHROPIC_API_KEY"\n'
        )
        monkeypatch.setenv("HOME", str(tmp_path / "home"))
        monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
        monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
        monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
        command = ["client", "--cwd", str(project), "--prompt", "hi", "--plain", "--"]
        command += [sys.executable, "-m", "toolwire", "acp"]
        result = CliRunner().invoke(app, command)
    assert result.exit_code == 0, result.stdout
    assert "hello from the fake provider" in result.stdout
    assert len(server.requests) == 1
    assert server.requests[0].headers["x-api-key"] == KEY
