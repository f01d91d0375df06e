"""Specs from the editor's mcpServers and from the config's tables."""

from __future__ import annotations

from pathlib import Path

from acp.schema import EnvVariable, HttpHeader, HttpMcpServer, McpServerStdio, SseMcpServer

from toolwire.config import load_config
from toolwire.mcp import ServerSpec, specs_from_acp, specs_from_config


def test_the_editors_servers_of_each_transport() -> None:
    specs = specs_from_acp(
        [
            McpServerStdio(
                name="fs",
                command="/usr/bin/fs-mcp",
                args=["--root", "/w"],
                env=[EnvVariable(name="A", value="1")],
            ),
            HttpMcpServer(
                type="http",
                name="web",
                url="http://127.0.0.1:9/mcp",
                headers=[HttpHeader(name="Authorization", value="Bearer t")],
            ),
            SseMcpServer(type="sse", name="old", url="http://127.0.0.1:9/sse", headers=[]),
        ]
    )
    assert [(s.name, s.transport, s.source) for s in specs] == [
        ("fs", "stdio", "client"),
        ("web", "http", "client"),
        ("old", "sse", "client"),
    ]
    assert specs[0].args == ("--root", "/w")
    assert dict(specs[0].env) == {"A": "1"}
    assert dict(specs[1].headers) == {"Authorization": "Bearer t"}
    assert specs[0].trusted is False


def test_config_tables_become_specs_with_variables_expanded(tmp_path: Path) -> None:
    file = tmp_path / "config.toml"
    file.write_text(
        """
[mcp_servers.db]
command = "db-mcp"
args = ["--ro"]
env = { DB_TOKEN = "${SECRET_DB}" }
timeout = 5
tools = { allow = ["read_*"], deny = ["read_secrets"] }
trusted = true

[mcp_servers.gh]
url = "https://mcp.example/"
headers = { Authorization = "Bearer ${GH_TOKEN}" }

[mcp_servers.off]
command = "x"
enabled = false
""",
        encoding="utf-8",
    )
    config = load_config(file, environ={})
    specs = specs_from_config(config, environ={"SECRET_DB": "s3", "GH_TOKEN": "tok"})
    assert [s.name for s in specs] == ["db", "gh"]
    db, gh = specs
    assert db == ServerSpec(
        name="db",
        transport="stdio",
        command="db-mcp",
        args=("--ro",),
        env=db.env,
        timeout=5,
        tools_allow=("read_*",),
        tools_deny=("read_secrets",),
        trusted=True,
    )
    assert dict(db.env) == {"DB_TOKEN": "s3"}
    assert (gh.transport, gh.url, dict(gh.headers)) == (
        "http",
        "https://mcp.example/",
        {"Authorization": "Bearer tok"},
    )
    unset = specs_from_config(config, environ={"SECRET_DB": "s3"})[1]
    assert unset.problem == (
        "header Authorization names ${GH_TOKEN}, which is not set; "
        "export GH_TOKEN before starting toolwire"
    )
