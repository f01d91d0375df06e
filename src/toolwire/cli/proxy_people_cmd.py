"""``toolwire proxy keys`` (add, list, revoke), ``toolwire proxy budget`` and
``toolwire proxy spend``: people's keys and budgets in the proxy's store, and the ledger.

They read ``[proxy] store`` and ``[proxy] ledger`` from the config and talk to those
directly (no running proxy needed): every proxy on the same store sees a new key or a
revocation within a second.
"""

from __future__ import annotations

import re
import time
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Annotated

import typer

from toolwire.cli._io import fail

if TYPE_CHECKING:
    from toolwire.proxy.people import Accounts

_CONFIG = typer.Option("--config", metavar="FILE", help="Config file.", show_default=False)
_USER = typer.Option("--user", metavar="NAME", help="Whose key it is.", show_default=False)
_TEAM = typer.Option("--team", metavar="NAME", help="The person's team.", show_default=False)
_BUDGET = typer.Option(
    "--budget", metavar="AMOUNT/PERIOD", help="The user's budget, e.g. 50usd/30d."
)
_MODELS = typer.Option(
    "--models", metavar="PATTERN,...", help="Backends or models the key may use (fnmatch)."
)
_ADMIN = typer.Option(
    "--admin", help="A named admin's key: switches anyone's session, reads /metrics."
)
_RELATIVE = re.compile(r"(\d+)([smhd])")
_SECONDS = {"s": 1, "m": 60, "h": 3600, "d": 86400}

keys = typer.Typer(name="keys", help="People's keys to the proxy.", add_completion=False)


def _accounts(config: str | None) -> Accounts:
    from toolwire.config.schema import ConfigError
    from toolwire.proxy import load_settings
    from toolwire.proxy.people import open_accounts

    try:
        settings = load_settings(config)
    except ConfigError as e:
        fail(str(e))
    if settings.store == "memory":
        fail(
            "keys live in the proxy's store: set [proxy] store to a SQLite file or a "
            "redis:// URL (the memory store is the running process's own)"
        )
    return open_accounts(settings.store)


@keys.command("add")
def add(
    user: Annotated[str, _USER],
    team: Annotated[str | None, _TEAM] = None,
    budget: Annotated[str | None, _BUDGET] = None,
    models: Annotated[str | None, _MODELS] = None,
    admin: Annotated[bool, _ADMIN] = False,
    config: Annotated[str | None, _CONFIG] = None,
) -> None:
    """Make a key for USER; the key itself is the last line, shown this once."""
    from toolwire.proxy.people.accounts import issue

    patterns = tuple(p.strip() for p in (models or "").split(",") if p.strip())
    accounts = _accounts(config)
    try:
        record, secret = issue(
            accounts, user, team=team, budget=budget, models=patterns, admin=admin
        )
    except ValueError as e:
        fail(str(e))
    role = ", admin" if admin else ""
    typer.echo(f"{record.id}: user {user}" + (f", team {team}" if team else "") + role)
    typer.echo(f"budget {budget or 'none'}, models {', '.join(patterns) or 'any'}")
    typer.echo("the key follows; it is not stored and will not be shown again:")
    typer.echo(secret)


@keys.command("list")
def list_keys(config: Annotated[str | None, _CONFIG] = None) -> None:
    """Every key: its id, user, team, budget, models, role and state (never the key)."""
    rows: list[tuple[str, ...]] = [
        ("id", "user", "team", "budget", "models", "role", "created", "state")
    ]
    for r in _accounts(config).records():
        created = datetime.fromtimestamp(r.created, UTC).strftime("%Y-%m-%d %H:%M")
        state = "revoked" if r.revoked else "active"
        models = ",".join(r.models) or "any"
        role = "admin" if r.admin else "person"
        rows.append((r.id, r.user, r.team or "-", r.budget or "-", models, role, created, state))
    _table(rows)


@keys.command("revoke")
def revoke(
    key_id: Annotated[str, typer.Argument(metavar="KEY_ID", help="The key's id (keys list).")],
    config: Annotated[str | None, _CONFIG] = None,
) -> None:
    """Refuse KEY_ID from now on (every proxy on the store within a second)."""
    if not _accounts(config).revoke(key_id):
        fail(f"no key {key_id!r}; `toolwire proxy keys list` shows them")
    typer.echo(f"{key_id} revoked")


def budget(
    amount: Annotated[str, typer.Argument(metavar="AMOUNT/PERIOD", help="e.g. 500usd/30d.")],
    user: Annotated[str | None, _USER] = None,
    team: Annotated[str | None, _TEAM] = None,
    config: Annotated[str | None, _CONFIG] = None,
) -> None:
    """Set a user's or a team's budget; its periods run from now."""
    from toolwire.proxy.people.keys import parse_budget

    if (user is None) == (team is None):
        fail("name one of --user NAME or --team NAME")
    try:
        parsed = parse_budget(amount, time.time())
    except ValueError as e:
        fail(str(e))
    subject = f"user:{user}" if user is not None else f"team:{team}"
    _accounts(config).set_budget(subject, parsed)
    typer.echo(f"{subject.replace(':', ' ', 1)}: {amount}")


def spend(
    user: Annotated[str | None, _USER] = None,
    team: Annotated[str | None, _TEAM] = None,
    since: Annotated[
        str | None, typer.Option("--since", help="A date (2026-11-01) or an age (7d, 12h).")
    ] = None,
    config: Annotated[str | None, _CONFIG] = None,
) -> None:
    """What each user and team spent, from the ledger ([proxy] ledger)."""
    from toolwire.config.schema import ConfigError
    from toolwire.proxy import load_settings
    from toolwire.proxy.people import open_ledger

    try:
        settings = load_settings(config)
    except ConfigError as e:
        fail(str(e))
    if not settings.ledger:
        fail("no ledger: set [proxy] ledger to a SQLite file or a postgresql:// URL")
    ledger = open_ledger(settings.ledger)
    try:
        found = ledger.spend(user=user, team=team, since=_since(since))
    finally:
        ledger.close()
    rows: list[tuple[str, ...]] = [
        ("user", "team", "requests", "input", "output", "cache read", "cache write", "cost")
    ]
    for who, group, count, *tokens, cost in found:
        rows.append((who or "-", group or "-", str(count), *map(str, tokens), f"${cost:.6f}"))
    _table(rows)


def _since(text: str | None) -> float | None:
    if text is None:
        return None
    relative = _RELATIVE.fullmatch(text.strip())
    if relative:
        return time.time() - int(relative.group(1)) * _SECONDS[relative.group(2)]
    try:
        when = datetime.fromisoformat(text)
    except ValueError:
        fail(f"--since {text!r}: a date (2026-11-01) or an age (7d, 12h)")
    return (when if when.tzinfo else when.replace(tzinfo=UTC)).timestamp()


def _table(rows: list[tuple[str, ...]]) -> None:
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    for row in rows:
        typer.echo("  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip())


__all__ = ["budget", "keys", "spend"]
