"""``toolwire proxy serve`` says what it serves before serving, and a port it cannot
serve on is one line naming it (real processes: the line a user sees in a terminal)."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx2
import pytest

from tests.proxy.people_support import priced_config
from toolwire.proxy.people.accounts import SQLiteAccounts, issue

pytestmark = pytest.mark.e2e  # real `toolwire proxy serve` processes


def _serve(config: Path, *args: str) -> subprocess.Popen[str]:
    argv = [sys.executable, "-m", "toolwire", "proxy", "serve", "--config", str(config), *args]
    env = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_")}
    env["TW_TEST_ADMIN"] = "admin-secret-value"
    return subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=env)  # fmt: skip


def _refused(config: Path, *args: str) -> str:
    """What a serve that must not start printed (it must exit within 20 s)."""
    process = _serve(config, *args)
    try:
        _, err = process.communicate(timeout=20)
    except subprocess.TimeoutExpired:
        process.kill()
        process.communicate()
        raise AssertionError("the proxy started instead of refusing the port") from None
    assert process.returncode != 0
    return err


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def test_a_port_out_of_range_is_one_line_naming_it(tmp_path: Path) -> None:
    err = _refused(priced_config(tmp_path, "http://127.0.0.1:9"), "--port", "99999")
    assert err.strip().count("\n") == 0, err
    assert "99999" in err
    assert "1 to 65535" in err


def test_a_port_in_use_is_one_line_naming_it(tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        err = _refused(priced_config(tmp_path, "http://127.0.0.1:9"), "--port", str(port))
    assert err.strip().count("\n") == 0, err
    assert f"--port {port} is in use" in err
    assert "Traceback" not in err
    assert "ERROR" not in err


@contextmanager
def _running(config: Path, port: int) -> Iterator[tuple[subprocess.Popen[str], str]]:
    process = _serve(config, "--port", str(port))
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 30
        while True:
            assert process.poll() is None, "the proxy exited"
            assert time.monotonic() < deadline, "the proxy did not start in 30 s"
            try:
                if httpx2.get(f"{url}/healthz", timeout=1).status_code == 200:
                    break
            except httpx2.TransportError:
                time.sleep(0.05)
        yield process, url
    finally:
        process.terminate()
        process.wait(timeout=15)


def test_the_start_up_block_names_address_backends_store_ledger_guard(tmp_path: Path) -> None:
    store, ledger = tmp_path / "store.db", tmp_path / "spend.db"
    extra = f'store = "{store}"\nledger = "{ledger}"\nadmin_token_env = "TW_TEST_ADMIN"'
    config = priced_config(tmp_path, "http://127.0.0.1:9", extra)
    text = config.read_text().replace(
        'model = "claude-up"', 'model = "claude-up"\nfallbacks = ["other"]'
    )
    config.write_text(text)
    _, secret = issue(SQLiteAccounts(store), "alice", team="eng")
    port = _free_port()
    with _running(config, port) as (process, _):
        process.terminate()
        _, err = process.communicate(timeout=15)
    block = err.split("\n")
    assert block[0] == f"toolwire proxy listening on http://127.0.0.1:{port}"
    assert "    claude (default): anthropic claude-up; fails over: other" in block
    assert "    other: anthropic other-up; fails over: no failover" in block
    assert f"  session store: SQLite {store}" in block
    assert f"  ledger: SQLite {ledger}" in block
    assert "  guarded by: people's keys (1 active)" in block
    assert "  admin: the admin token in $TW_TEST_ADMIN, or admin keys" in block
    assert block[block.index("  admin: the admin token in $TW_TEST_ADMIN, or admin keys") + 1] == (
        "  telemetry: off (set OTEL_EXPORTER_OTLP_ENDPOINT to export spans)"
    )
    assert secret not in err
    assert "admin-secret-value" not in err


def test_the_block_says_when_nothing_guards_the_proxy(tmp_path: Path) -> None:
    port = _free_port()
    with _running(priced_config(tmp_path, "http://127.0.0.1:9"), port) as (process, url):
        assert httpx2.get(f"{url}/healthz").status_code == 200
        process.terminate()
        _, err = process.communicate(timeout=15)
    assert "  guarded by: nothing: anyone who can reach it may use it" in err.split("\n")
    assert "  session store: memory (this process only; keys need a shared store)" in err
    assert "  ledger: none (set [proxy] ledger to record spend)" in err
