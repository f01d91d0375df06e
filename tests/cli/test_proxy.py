"""``toolwire proxy``: a command group with ``serve`` (also the default) and ``switch``."""

from __future__ import annotations

import socket
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from toolwire.cli import app
from toolwire.proxy.serving import GuardedProtocol

runner = CliRunner()


@pytest.fixture
def served(monkeypatch: pytest.MonkeyPatch) -> list[dict[str, Any]]:
    """Where the proxy would listen and what uvicorn would serve there, instead of
    binding and serving."""
    import uvicorn

    from toolwire.proxy import startup

    calls: list[dict[str, Any]] = []

    def listen(host: str, port: int) -> socket.socket:
        calls.append({"host": host, "port": port})
        return socket.socket()

    def run(server: uvicorn.Server, sockets: list[socket.socket]) -> None:
        config = server.config
        calls[-1].update(log_level=config.log_level, timeout_keep_alive=config.timeout_keep_alive)
        calls[-1]["http"] = config.http
        for sock in sockets:
            sock.close()

    monkeypatch.setattr(startup, "listen", listen)
    monkeypatch.setattr(uvicorn.Server, "run", run)
    return calls


def _config(tmp_path: Path) -> str:
    path = tmp_path / "config.toml"
    path.write_text("", encoding="utf-8")
    return str(path)


def test_help_lists_serve_and_switch() -> None:
    result = runner.invoke(app, ["proxy", "--help"])
    assert result.exit_code == 0
    assert "serve" in result.stdout
    assert "switch" in result.stdout


def test_switch_help_is_the_switch_help() -> None:
    result = runner.invoke(app, ["proxy", "switch", "--help"])
    assert result.exit_code == 0
    assert "BACKEND" in result.stdout
    assert "--session" in result.stdout
    assert "Address to bind" not in result.stdout


@pytest.mark.parametrize(
    ("argv", "host", "port"),
    [
        ([], "127.0.0.1", 8787),
        (["--port", "8788"], "127.0.0.1", 8788),
        (["serve", "--host", "::1", "--port", "9000"], "::1", 9000),
    ],
)
def test_proxy_with_no_command_serves(
    tmp_path: Path, served: list[dict[str, Any]], argv: list[str], host: str, port: int
) -> None:
    result = runner.invoke(app, ["proxy", *argv, "--config", _config(tmp_path)])
    assert result.exit_code == 0, result.output
    (options,) = served
    http = options.pop("http")
    assert options == {"host": host, "port": port, "log_level": "warning", "timeout_keep_alive": 5}
    # The read deadlines and connection cap of [proxy] (tests/proxy/test_limits.py).
    assert issubclass(http, GuardedProtocol)
    assert (http.header_timeout, http.max_connections) == (10.0, 256)


def test_serve_warns_when_bound_beyond_loopback_without_a_token(
    tmp_path: Path, served: list[dict[str, Any]]
) -> None:
    result = runner.invoke(app, ["proxy", "--host", "0.0.0.0", "--config", _config(tmp_path)])
    assert result.exit_code == 0
    assert "without [proxy] token" in result.stderr


def test_switch_without_a_running_proxy_says_so(tmp_path: Path) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = str(s.getsockname()[1])
    argv = ["proxy", "switch", "local", "--port", port, "--config", _config(tmp_path)]
    result = runner.invoke(app, argv)
    assert result.exit_code == 2
    assert "cannot reach the proxy" in result.stderr
    assert "is `toolwire proxy` running?" in result.stderr


def test_switch_needs_a_backend() -> None:
    result = runner.invoke(app, ["proxy", "switch"])
    assert result.exit_code == 2
