"""``toolwire config`` shows an MCP server's command line and environment without the
keys people pass there (``--api-key sk-...``, ``--token=...``, a bare token)."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from toolwire.cli import app
from toolwire.config.mcp import mask_args

OPENAI = "sk-proj-4fQ9xLm2Zt7Rb1Kc8Vn3Hw6Yd"
GITHUB = "ghp_Ab12Cd34Ef56Gh78Ij90Kl12Mn34Op56Qr78"
SLACK = "xoxb-1234567890-0987654321-AbCdEfGhIjKlMnOp"
AWS = "AKIAIOSFODNN7EXAMPLE"
RANDOM = "q8ZtR2vLx9PmK4wN7bYc1HdJ6sFg"
SECRETS = (OPENAI, GITHUB, SLACK, AWS, RANDOM, "hunter2-but-longer")


@pytest.mark.parametrize(
    ("args", "kept"),
    [
        (["--api-key", OPENAI], ["--api-key"]),
        ([f"--token={GITHUB}"], ["--token="]),
        (["--password", "hunter2-but-longer"], ["--password"]),
        (["serve", SLACK], ["serve"]),
        (["--aws", AWS, "--region", "eu-west-1"], ["--aws", "--region", "eu-west-1"]),
        (["-H", f"Authorization: Bearer {RANDOM}"], ["-H", "Authorization: Bearer "]),
        (["--secret", "x"], ["--secret"]),
        ([RANDOM], []),
    ],
)
def test_keys_in_args_are_masked_and_the_rest_kept(args: list[str], kept: list[str]) -> None:
    shown = mask_args(args)
    assert len(shown) == len(args)
    text = " ".join(shown)
    for secret in SECRETS:
        assert secret not in text
    for part in kept:
        assert part in text


@pytest.mark.parametrize(
    "args",
    [
        ["-y", "@modelcontextprotocol/server-filesystem", "/home/ada/projects/inventory-2024"],
        ["--db", "/srv/data/inventory.sqlite", "--port", "8080", "--name", "inventory-service"],
        ["run", "--rm", "-i", "ghcr.io/github/github-mcp-server:v0.4.0"],
    ],
)
def test_ordinary_args_are_shown_as_they_are(args: list[str]) -> None:
    assert mask_args(args) == args


def test_toolwire_config_masks_keys_in_args_and_env(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    path.write_text(
        f"""
[mcp_servers.gh]
command = "gh-mcp"
args = ["--api-key", "{OPENAI}", "--token={GITHUB}", "--verbose"]
env = {{ GH_HOST = "github.example", LINK = "${{HOME}}/{RANDOM}" }}
""",
        encoding="utf-8",
    )
    result = CliRunner().invoke(app, ["config", "--config", str(path)], env={"HOME": "/h"})
    assert result.exit_code == 0, result.output
    for secret in SECRETS:
        assert secret not in result.output
    assert '"--api-key"' in result.output
    assert '"--verbose"' in result.output


def test_a_start_failure_line_does_not_repeat_a_key_from_the_args() -> None:
    from toolwire.mcp import ServerSpec
    from toolwire.mcp.reasons import start_failure

    spec = ServerSpec(name="gh", transport="stdio", command="gh-mcp", args=("--token", GITHUB))
    line = start_failure(spec, TimeoutError(), None)
    assert GITHUB not in line
    assert "`gh-mcp --token " in line
