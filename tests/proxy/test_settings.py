"""Every key of the ``[proxy]`` table reaches ``ProxySettings``, and a setting left out of
the file has the table's default (``ProxySettings.from_config``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.proxy.support import write_config
from toolwire.proxy.rules import Rule
from toolwire.proxy.settings import ProxySettings, ProxyTable, load_settings


def _other(name: str, default: Any) -> Any:
    """A valid value for ``name`` that is not its default."""
    if isinstance(default, bool):
        return not default
    if isinstance(default, int):
        return default + 1
    if isinstance(default, float):
        return default + 1.5
    values = {"token": "s3cret", "store": "sessions.db", "ledger": "spend.db"}
    values |= {"ledger_spool": "spool", "admin_token_env": "TOOLWIRE_ADMIN_TOKEN"}
    return values.get(name)


def test_every_proxy_key_reaches_the_settings(tmp_path: Path) -> None:
    chosen = {
        name: _other(name, info.default)
        for name, info in ProxyTable.model_fields.items()
        # write_config sets default_backend; store_ttl needs a Redis store
        if name not in ("default_backend", "models", "store_ttl", "aliases", "routes", "limits")
    }
    lines = [
        f"{k} = {str(v).lower() if isinstance(v, bool) else repr(v)}" for k, v in chosen.items()
    ]
    lines.append('models = { "claude-opus-5-5" = "claude,claude-up" }')
    lines.append('aliases = { "claude-up-alias" = "claude" }')
    lines.append('routes = [{ image = true, backend = "claude" }]')
    lines.append("limits = { requests_per_minute = 7, team_tokens_per_minute = 9 }")
    config = write_config(tmp_path, "http://127.0.0.1:9", "http://127.0.0.1:9", "\n".join(lines))
    settings = load_settings(config)
    assert {k: getattr(settings, k) for k in chosen} == chosen
    assert settings.models == {"claude-opus-5-5": "claude,claude-up"}
    assert settings.aliases == {"claude-up-alias": "claude"}
    assert settings.routes == (Rule("claude", image=True),)
    limits = settings.limits
    assert (limits.requests_per_minute, limits.team_tokens_per_minute) == (7, 9)
    assert limits.tokens_per_minute == 0


def test_defaults_are_the_tables(tmp_path: Path) -> None:
    settings = load_settings(write_config(tmp_path, "http://127.0.0.1:9", "http://127.0.0.1:9"))
    table = ProxyTable()
    for name in ProxyTable.model_fields:
        if name not in ("default_backend", "models", "routes"):
            assert getattr(settings, name) == getattr(table, name), name
    bare = ProxySettings(settings.config, "local")
    assert all(getattr(bare, n) == getattr(settings, n) for n in ProxyTable.model_fields)
