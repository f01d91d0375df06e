"""Credentials inside URLs (``http://user:PASSWORD@host``, ``?key=...``, an MCP server's
URL) never show: not in what the editor is told when the provider or the server cannot
be reached, not in the transcript stored in ``sessions.db``, not in ``toolwire config``.
The official SDK client drives the agent; nothing listens on the configured port."""

from __future__ import annotations

import asyncio
import socket
from pathlib import Path

import pytest
from acp import text_block

from tests.agent.support import (
    KEY,
    ScriptedClient,
    agent,
    check_wire,
    environment,
    response,
    spawn_agent,
    start,
    text_of,
)
from tests.fakes.http import FakeServer, Reply
from toolwire.cli.config_cmd import render as render_config
from toolwire.config import load_config
from toolwire.secrets import mask_urls

PASSWORD = "SECRETPW-4d1e"
QUERY_KEY = "SECRETKEY-88b0"


def _closed_port() -> int:
    """A loopback port nothing listens on (bound, then released)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
    return port


def _config(tmp_path: Path) -> tuple[Path, int]:
    port = _closed_port()
    path = tmp_path / "config.toml"
    path.write_text(
        'default_backend = "locked"\n'
        "[backends.locked]\n"
        'provider = "anthropic"\nmodel = "claude-test"\napi_key_env = "TEST_KEY"\n'
        f'base_url = "http://alice:{PASSWORD}@127.0.0.1:{port}"\n'
        "[backends.keyed]\n"
        'provider = "openai-chat"\nmodel = "m"\n'
        f'base_url = "http://127.0.0.1:{port}/v1?api-version=2&key={QUERY_KEY}"\n'
        "[mcp_servers.remote]\n"
        f'url = "http://bob:{PASSWORD}@127.0.0.1:{port}/mcp?token={QUERY_KEY}"\n'
        "timeout = 5\n"
    )
    return path, port


@pytest.mark.anyio
async def test_the_editor_and_the_store_never_see_url_credentials(tmp_path: Path) -> None:
    # Its own agent, not the acp fixture's: the connection must really fail (a closed
    # port), where the fixture's model would answer any URL.
    config, port = _config(tmp_path)
    root = tmp_path / "project"
    root.mkdir()
    env = environment(tmp_path, TEST_KEY=KEY)
    async with agent(tmp_path, ScriptedClient(), "--config", str(config), env=env) as run:
        await run.conn.initialize(protocol_version=1)
        session = await run.conn.new_session(cwd=str(root), mcp_servers=[])
        sid = session.session_id
        await run.conn.prompt(session_id=sid, prompt=[text_block("hi")])
        check_wire(run.wire)
        said = text_of(run.notifications())
    assert f"127.0.0.1:{port}" in said  # the user still learns which server failed
    assert "MCP server 'remote' did not start" in said
    assert PASSWORD not in said
    assert QUERY_KEY not in said
    stored = b"".join(p.read_bytes() for p in (tmp_path / "data").rglob("*") if p.is_file())
    assert b"127.0.0.1" in stored  # the failure was recorded
    assert PASSWORD.encode() not in stored
    assert QUERY_KEY.encode() not in stored


@pytest.mark.e2e
@pytest.mark.slow
def test_the_log_file_never_sees_url_credentials(tmp_path: Path) -> None:
    """The log file takes every library's lines at DEBUG; httpx's name the URL."""
    root = tmp_path / "project"
    root.mkdir()
    log = tmp_path / "toolwire.log"
    with FakeServer() as server:
        server.script(Reply(chunks=[response(("text", "ok")).encode()]))
        config = tmp_path / "config.toml"
        host = server.url.removeprefix("http://")
        config.write_text(
            'default_backend = "fake"\n[backends.fake]\nprovider = "anthropic"\n'
            f'model = "claude-test"\nbase_url = "http://alice:{PASSWORD}@{host}"\n'
            'api_key_env = "TEST_KEY"\n'
        )
        env = environment(tmp_path, TEST_KEY=KEY)

        async def scenario() -> None:
            options = ("--config", str(config), "--log-file", str(log))
            async with spawn_agent(tmp_path, ScriptedClient(), *options, env=env) as run:
                sid = await start(run.conn, root)
                done = await run.conn.prompt(session_id=sid, prompt=[text_block("hi")])
                assert done.stop_reason == "end_turn"

        asyncio.run(scenario())
    assert len(server.requests) == 1
    written = log.read_text()
    assert host in written  # the request was logged
    assert PASSWORD not in written


def test_toolwire_config_shows_the_urls_without_their_credentials(tmp_path: Path) -> None:
    config, port = _config(tmp_path)
    env = {"TEST_KEY": KEY}
    lines = render_config(load_config(config, environ=env), env)
    text = "\n".join(lines)
    assert PASSWORD not in text
    assert QUERY_KEY not in text
    assert f"http://alice:[REDACTED]@127.0.0.1:{port}" in text
    assert "/v1?api-version=2&key=[REDACTED]" in text
    assert f"http://bob:[REDACTED]@127.0.0.1:{port}/mcp?token=[REDACTED]" in text


def test_mask_urls_hides_credentials_and_keeps_the_rest() -> None:
    cases = {
        "cannot connect to http://u:pw@h:1/v1: refused": "http://u:[REDACTED]@h:1/v1",
        "https://TOKEN@github.com/a.git": "https://[REDACTED]@github.com/a.git",
        "http://u:p@ss@h/x": "http://u:[REDACTED]@h/x",
        "wss://h/x?mode=a&access_token=T&b=1": "wss://h/x?mode=a&access_token=[REDACTED]&b=1",
        "https://s/o?X-Amz-Signature=abc&sig=d&apikey=e": (
            "https://s/o?X-Amz-Signature=[REDACTED]&sig=[REDACTED]&apikey=[REDACTED]"
        ),
        "https://h/cb#access_token=T": "https://h/cb#access_token=[REDACTED]",
    }
    for text, shown in cases.items():
        assert shown in mask_urls(text)
    for plain in ("mail a@b.com", "http://h:8080/v1?model=x&stream=true", "git@github.com:o/r"):
        assert mask_urls(plain) == plain
