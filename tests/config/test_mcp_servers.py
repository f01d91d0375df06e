"""``[mcp_servers.NAME]``: checked in one line, shown by ``toolwire config`` masked."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from toolwire.cli import app
from toolwire.config import load_config
from toolwire.config.mcp import looks_secret
from toolwire.config.schema import ConfigError


def _file(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "config.toml"
    path.write_text(text, encoding="utf-8")
    return path


@pytest.mark.parametrize(
    ("table", "message"),
    [
        (
            'url = "https://x/mcp"\nheaders = { Authorization = "Bearer sk-live-123" }',
            "Authorization looks like a literal secret; do not put keys in the config file: "
            'export it and write "${VAR}" (e.g. "Bearer ${MY_TOKEN}")',
        ),
        ('command = "a"\nurl = "https://x"', 'set either command = "..." (stdio) or url'),
        ("trusted = true", 'set either command = "..." (stdio) or url'),
        ('command = "a"\ntransport = "sse"', 'transport = "sse" needs url, not command'),
        ('url = "https://x"\nargs = ["-v"]', "args, env and cwd apply to command servers"),
        ('command = "a"\ncomand = "b"', "unknown key 'comand' in [mcp_servers.db]; did you mean"),
    ],
)
def test_a_bad_table_is_one_line_naming_the_server(
    tmp_path: Path, table: str, message: str
) -> None:
    path = _file(tmp_path, f"[mcp_servers.db]\n{table}\n")
    with pytest.raises(ConfigError) as caught:
        load_config(path, environ={})
    line = str(caught.value)
    assert "\n" not in line
    assert str(path) in line
    assert message in line


def test_what_counts_as_a_literal_secret() -> None:
    assert looks_secret("Authorization", "Bearer sk-abc")
    assert looks_secret("X-Custom", "sk-proj-abcdefghijklmnop1234567")
    assert looks_secret("GITHUB_TOKEN", "ghp_1", shape=False)
    assert not looks_secret("Authorization", "Bearer ${TOKEN}")
    assert not looks_secret("Accept", "application/json")
    assert not looks_secret("GIT_AUTHOR_NAME", "Ada", shape=False)
    assert not looks_secret("DB_PATH", "/home/ada/projects/inventory/data.sqlite", shape=False)


def test_toolwire_config_shows_each_server_with_values_masked(tmp_path: Path) -> None:
    path = _file(
        tmp_path,
        """
[mcp_servers.db]
command = "db-mcp"
env = { DB_PATH = "/srv/data/inventory.sqlite", DB_TOKEN = "${DB_TOKEN}" }
tools = { deny = ["drop_*"] }
trusted = true

[mcp_servers.gh]
url = "https://mcp.example/"
headers = { Authorization = "Bearer ${GH_TOKEN}" }
enabled = false
""",
    )
    env = {"GH_TOKEN": "tok-secret-value", "ANTHROPIC_API_KEY": ""}
    result = CliRunner().invoke(app, ["config", "--config", str(path)], env=env)
    assert result.exit_code == 0, result.output
    out = result.output
    assert "[mcp_servers.db]" in out
    assert "[mcp_servers.gh]" in out
    assert "/srv/data/inventory.sqlite" not in out
    assert "tok-secret-value" not in out
    assert 'DB_PATH = "/srv…te"' in out
    assert 'DB_TOKEN = "${DB_TOKEN}" (not set: DB_TOKEN)' in out
    assert 'Authorization = "Bearer ${GH_TOKEN}"}' in out
    lines = [line for line in out.splitlines() if line.startswith(("enabled", "tools", "trusted"))]
    assert any("false" in line and f"({path})" in line for line in lines)
    assert any('deny = ["drop_*"]' in line for line in lines)
