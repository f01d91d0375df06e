"""``toolwire proxy keys``, ``budget`` and ``spend`` on a SQLite store and ledger."""

from __future__ import annotations

import time
from pathlib import Path

from typer.testing import CliRunner

from tests.proxy.people_support import priced_config
from toolwire.cli._app import app
from toolwire.proxy.people.accounts import SQLiteAccounts
from toolwire.proxy.people.keys import KEY_PREFIX, digest
from toolwire.proxy.people.ledger import LedgerRow, SQLiteLedger


def _config(tmp_path: Path) -> Path:
    extra = f'store = "{tmp_path / "store.db"}"\nledger = "{tmp_path / "spend.db"}"'
    return priced_config(tmp_path, "http://127.0.0.1:9", extra)


def _run(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(app, ["proxy", *args])
    return result.exit_code, result.output


def test_keys_add_prints_the_key_once_as_its_last_line_and_list_never(tmp_path: Path) -> None:
    config = str(_config(tmp_path))
    code, out = _run("keys", "add", "--user", "alice", "--team", "eng", "--budget", "50usd/30d",
                     "--models", "glm*,claude-*", "--config", config)  # fmt: skip
    assert code == 0, out
    secret = out.splitlines()[-1]
    assert secret.startswith(KEY_PREFIX)
    assert out.count(secret) == 1
    stored = SQLiteAccounts(tmp_path / "store.db").find(digest(secret))
    assert stored is not None
    assert (stored.user, stored.team, stored.models) == ("alice", "eng", ("glm*", "claude-*"))
    assert secret.encode() not in (tmp_path / "store.db").read_bytes()
    code, listed = _run("keys", "list", "--config", config)
    assert code == 0
    assert secret not in listed
    assert secret[len(KEY_PREFIX) : len(KEY_PREFIX) + 8] not in listed
    (row,) = [line for line in listed.splitlines() if "alice" in line]
    assert row.split()[:6] == [
        stored.id,
        "alice",
        "eng",
        "50usd/30d",
        "glm*,claude-*",
        "person",
    ]
    assert row.split()[-1] == "active"


def test_keys_revoke_marks_the_key_and_an_unknown_id_fails(tmp_path: Path) -> None:
    config = str(_config(tmp_path))
    _, out = _run("keys", "add", "--user", "bob", "--config", config)
    secret = out.splitlines()[-1]
    record = SQLiteAccounts(tmp_path / "store.db").find(digest(secret))
    assert record is not None
    assert _run("keys", "revoke", record.id, "--config", config)[0] == 0
    revoked = SQLiteAccounts(tmp_path / "store.db").find(digest(secret))
    assert revoked is not None
    assert revoked.revoked
    assert "revoked" in _run("keys", "list", "--config", config)[1]
    code, said = _run("keys", "revoke", "key_nope", "--config", config)
    assert code != 0
    assert "no key 'key_nope'" in said


def test_keys_add_refuses_a_budget_it_cannot_read_and_the_memory_store(tmp_path: Path) -> None:
    code, said = _run("keys", "add", "--user", "a", "--budget", "50", "--config",
                      str(_config(tmp_path)))  # fmt: skip
    assert code != 0
    assert "AMOUNT/PERIOD" in said
    memory = priced_config(tmp_path, "http://127.0.0.1:9")
    code, said = _run("keys", "add", "--user", "a", "--config", str(memory))
    assert code != 0
    assert "[proxy] store" in said


def test_spend_prints_one_row_per_user_and_team(tmp_path: Path) -> None:
    config = str(_config(tmp_path))
    ledger = SQLiteLedger(tmp_path / "spend.db")
    now = time.time()
    row = LedgerRow(now, "alice", "eng", "s1", "claude", "m", 100, 20, 300, 40, 0.25, "ok")
    old = LedgerRow(now - 10 * 86400, "alice", "eng", "s0", "claude", "m", 1, 1, 1, 1, 9.0, "ok")
    bob = LedgerRow(now, "bob", "ops", "s2", "glm", "m", 5, 6, 0, 0, 0.75, "ok")
    refused = LedgerRow(now, "alice", "eng", "s1", "", "", 0, 0, 0, 0, 0.0, "refused")
    ledger.write([row, row, old, bob, refused])
    ledger.close()
    code, out = _run("spend", "--since", "7d", "--config", config)
    assert code == 0, out
    lines = out.splitlines()
    assert lines[0].split()[:4] == ["user", "team", "served", "refused"]
    # The largest spender first; a request refused over budget is counted apart.
    assert lines[1].split() == ["bob", "ops", "1", "0", "5", "6", "0", "0", "$0.750000"]
    assert lines[2].split() == ["alice", "eng", "2", "1", "200", "40", "600", "80", "$0.500000"]
    _, alice = _run("spend", "--user", "alice", "--config", config)
    assert alice.splitlines()[1].split()[2:4] == ["3", "1"]
    _, ops = _run("spend", "--team", "ops", "--config", config)
    assert len(ops.splitlines()) == 2
