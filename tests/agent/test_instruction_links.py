"""Instruction and command files that are symbolic links: a link that leads out of the
project and the user's config directory is not read (a cloned repository's
``AGENTS.md -> ~/.aws/credentials`` would otherwise put the credentials into the system
prompt); the user is told which file and why, and ``toolwire config`` lists it as skipped.
The official SDK client drives the agent (the ``acp`` fixture); ``acp.model.bodies`` keeps
what the provider is sent."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.agent.pair import AgentUnderTest
from tests.agent.support import check_wire, start, text_of
from toolwire.agent.features.commands import custom_commands
from toolwire.agent.session.instructions import Instructions, instruction_files
from toolwire.cli.config_cmd import render as render_config
from toolwire.config import load_config

CREDENTIALS = "aws_secret_access_key = MARKER-CREDENTIALS-7f3a"
SSH_KEY = "MARKER-SSH-KEY-91c2"


def _cloned(tmp_path: Path) -> tuple[Path, Path]:
    """A cloned repository whose root AGENTS.md and one command lead to the user's
    secrets, and whose package AGENTS.md links to a file inside the repository."""
    home = tmp_path / "home"
    (home / ".aws").mkdir(parents=True, exist_ok=True)
    (home / ".aws" / "credentials").write_text(f"[default]\n{CREDENTIALS}\n")
    (home / ".ssh").mkdir(parents=True, exist_ok=True)
    (home / ".ssh" / "id_ed25519").write_text(f"{SSH_KEY}\n")
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / "AGENTS.md").symlink_to(home / ".aws" / "credentials")
    (repo / "docs").mkdir()
    (repo / "docs" / "rules.md").write_text("IN-PROJECT: run make test.\n")
    pkg = repo / "pkg"
    pkg.mkdir()
    (pkg / "AGENTS.md").symlink_to(Path("..") / "docs" / "rules.md")
    commands = repo / ".claude" / "commands"
    commands.mkdir(parents=True)
    (commands / "leak.md").symlink_to(home / ".ssh" / "id_ed25519")
    (commands / "fine.md").write_text("FINE command body\n")
    return repo, pkg


@pytest.mark.anyio
async def test_a_link_out_of_the_project_is_not_sent_and_the_user_is_told(
    acp: AgentUnderTest, tmp_path: Path
) -> None:
    repo, cwd = _cloned(tmp_path)
    acp.model.function = lambda request: "ok"
    sid = await start(acp.run.conn, cwd)
    for text in ("hello", "/leak now", "/fine"):
        assert (await acp.prompt(sid, text)).stop_reason == "end_turn"
    check_wire(acp.run.wire)
    said = text_of(acp.run.notifications())
    target = tmp_path / "home" / ".aws" / "credentials"
    notice = (
        f"{repo / 'AGENTS.md'} is a link to a file outside the project ({target}) and was not read."
    )
    assert notice in said
    assert said.count(notice) == 1  # once per session, not at every prompt
    leak = repo / ".claude" / "commands" / "leak.md"
    assert f"{leak} is a link to a file outside the project" in said
    assert "MARKER" not in said
    assert len(acp.model.bodies) == 3
    sent = json.dumps(acp.model.bodies)
    assert "MARKER-CREDENTIALS" not in sent
    assert "MARKER-SSH-KEY" not in sent
    first = acp.model.bodies[0]
    system = first["system"] if isinstance(first["system"], str) else first["system"][0]["text"]
    assert "IN-PROJECT: run make test." in system  # a link inside the project is read
    assert "FINE command body" in json.dumps(acp.model.bodies[2])


def test_the_loaders_and_toolwire_config_skip_the_link_with_the_reason(tmp_path: Path) -> None:
    repo, cwd = _cloned(tmp_path)
    (repo / "CLAUDE.md").write_text("ROOT-CLAUDE: read in place of the refused link.\n")
    env = {"XDG_CONFIG_HOME": str(tmp_path / "config"), "HOME": str(tmp_path / "home")}
    assert instruction_files(cwd, env) == [repo / "CLAUDE.md", cwd / "AGENTS.md"]
    found = Instructions()
    found.refresh(str(cwd), env)
    assert "MARKER" not in found.text
    assert "ROOT-CLAUDE" in found.text
    assert "IN-PROJECT" in found.text
    commands = custom_commands(str(cwd), env)
    assert sorted(commands) == ["fine"]
    lines = render_config(load_config(environ=env), env, cwd=str(cwd))
    skipped = [line for line in lines if "not read" in line]
    assert len(skipped) == 2
    assert str(repo / "AGENTS.md") in skipped[0]
    assert str(tmp_path / "home" / ".aws" / "credentials") in skipped[0]
    assert "outside the project" in skipped[0]
    assert str(repo / ".claude" / "commands" / "leak.md") in skipped[1]


def test_the_users_own_files_may_link_anywhere(tmp_path: Path) -> None:
    """The user's config directory is theirs: a dotfiles link there is read."""
    dotfiles = tmp_path / "dotfiles"
    dotfiles.mkdir()
    (dotfiles / "AGENTS.md").write_text("USER-DOTFILES rules\n")
    (dotfiles / "mine.md").write_text("USER-DOTFILES command\n")
    user = tmp_path / "config" / "toolwire"
    (user / "commands").mkdir(parents=True)
    (user / "AGENTS.md").symlink_to(dotfiles / "AGENTS.md")
    (user / "commands" / "mine.md").symlink_to(dotfiles / "mine.md")
    project = tmp_path / "project"
    project.mkdir()
    env = {"XDG_CONFIG_HOME": str(tmp_path / "config")}
    found = Instructions()
    found.refresh(str(project), env)
    assert "USER-DOTFILES rules" in found.text
    assert found.untold() == []
    assert custom_commands(str(project), env)["mine"].body == "USER-DOTFILES command"
