"""``toolwire proxy keys`` (add, list, revoke, rotate), ``toolwire proxy budget`` (set,
show) and ``toolwire proxy spend``: people's keys and budgets in the proxy's store, and
the ledger.

They read ``[proxy] store`` and ``[proxy] ledger`` from the config and talk to those
directly (no running proxy needed): every proxy on the same store sees a new key or a
revocation within a second.
"""

from __future__ import annotations

import re
import time
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Annotated, Any

import typer
from typer.core import TyperGroup

from toolwire.cli._io import fail

if TYPE_CHECKING:
    from toolwire.proxy.people import Accounts, KeyRecord

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
_EXPIRES = typer.Option(
    "--expires", metavar="AGE", help="The key stops working after AGE (90d, 12h)."
)
_GRACE = typer.Option("--grace", metavar="AGE", help="How long the old key keeps working.")
_BY = typer.Option("--by", metavar="GROUP,...", help="Group by user, team, model and/or day.")
_MODEL = typer.Option("--model", metavar="NAME", help="Only this model's requests.")
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
    expires: Annotated[str | None, _EXPIRES] = None,
    config: Annotated[str | None, _CONFIG] = None,
) -> None:
    """Make a key for USER; the key itself is the last line, shown this once."""
    from toolwire.proxy.people.accounts import issue

    patterns = tuple(p.strip() for p in (models or "").split(",") if p.strip())
    until = None if expires is None else time.time() + _age(expires, "--expires")
    accounts = _accounts(config)
    try:
        record, secret = issue(
            accounts, user, team=team, budget=budget, models=patterns, admin=admin, expires=until
        )
    except ValueError as e:
        fail(str(e))
    role = ", admin" if admin else ""
    typer.echo(f"{record.id}: user {user}" + (f", team {team}" if team else "") + role)
    typer.echo(f"budget {budget or 'none'}, models {', '.join(patterns) or 'any'}, "
               f"expires {_when(until)}")  # fmt: skip
    _secret(secret)


def _secret(secret: str) -> None:
    typer.echo("the key follows; it is not stored and will not be shown again:")
    typer.echo(secret)


@keys.command("rotate")
def rotate(
    key_id: Annotated[str, typer.Argument(metavar="KEY_ID", help="The key to replace.")],
    grace: Annotated[str, _GRACE] = "1d",
    expires: Annotated[str | None, _EXPIRES] = None,
    config: Annotated[str | None, _CONFIG] = None,
) -> None:
    """A new key for KEY_ID's person; KEY_ID keeps working for --grace, then expires."""
    from toolwire.proxy.people.accounts import rotate as rotated

    seconds = _age(grace, "--grace")
    until = None if expires is None else time.time() + _age(expires, "--expires")
    try:
        record, secret, old = rotated(_accounts(config), key_id, seconds, expires=until)
    except KeyError:
        fail(f"no usable key {key_id!r}; `toolwire proxy keys list` shows them")
    typer.echo(f"{record.id}: replaces {old.id} (user {old.user}), expires {_when(until)}")
    typer.echo(f"{old.id} keeps working until {_when(old.expires)}")
    _secret(secret)


@keys.command("list")
def list_keys(config: Annotated[str | None, _CONFIG] = None) -> None:
    """Every key: id, user, team, budget, models, role, the user's spend this period and
    what is left, expiry and state (never the key)."""
    rows: list[tuple[str, ...]] = [("id", "user", "team", "budget", "models", "role", "spent",
                                    "left", "expires", "created", "state")]  # fmt: skip
    accounts, now = _accounts(config), time.time()
    for r in accounts.records():
        rows.append(_key_row(accounts, r, now))
    _table(rows)


def _key_row(accounts: Accounts, r: KeyRecord, now: float) -> tuple[str, ...]:
    from toolwire.proxy.people.keys import dollars
    from toolwire.proxy.people.standing import standings

    found = standings(accounts, [f"user:{r.user}"])
    spent, left = (dollars(found[0].spent), dollars(found[0].left)) if found else ("-", "-")
    created = _stamp(r.created)
    models, role = ",".join(r.models) or "any", "admin" if r.admin else "person"
    expires = "-" if r.expires is None else _stamp(r.expires)
    return (r.id, r.user, r.team or "-", r.budget or "-", models, role, spent, left,
            expires, created, r.state(now))  # fmt: skip


@keys.command("revoke")
def revoke(
    key_id: Annotated[str, typer.Argument(metavar="KEY_ID", help="The key's id (keys list).")],
    config: Annotated[str | None, _CONFIG] = None,
) -> None:
    """Refuse KEY_ID from now on (every proxy on the store within a second)."""
    if not _accounts(config).revoke(key_id):
        fail(f"no key {key_id!r}; `toolwire proxy keys list` shows them")
    typer.echo(f"{key_id} revoked")


class _SetByDefault(TyperGroup):
    """``toolwire proxy budget AMOUNT --user NAME`` is ``budget set AMOUNT --user NAME``."""

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        if args and args[0] not in ("set", "show", *ctx.help_option_names):
            args = ["set", *args]
        return super().parse_args(ctx, args)


budget = typer.Typer(
    cls=_SetByDefault, name="budget", help="Users' and teams' budgets.", add_completion=False
)


@budget.command("set")
def set_budget(
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


@budget.command("show")
def show_budget(
    user: Annotated[str | None, _USER] = None,
    team: Annotated[str | None, _TEAM] = None,
    config: Annotated[str | None, _CONFIG] = None,
) -> None:
    """A user's or a team's budget: spent this period, what is left, when it resets."""
    from toolwire.proxy.people.keys import dollars
    from toolwire.proxy.people.standing import standings

    if (user is None) == (team is None):
        fail("name one of --user NAME or --team NAME")
    subject = f"user:{user}" if user is not None else f"team:{team}"
    found = standings(_accounts(config), [subject])
    who = subject.replace(":", " ", 1)
    if not found:
        fail(f"{who} has no budget; `toolwire proxy budget AMOUNT/PERIOD` sets one")
    (s,) = found
    typer.echo(f"{who}: {dollars(s.budget.limit)} per {_period(s.budget.period)}")
    typer.echo(f"spent {dollars(s.spent)}, left {dollars(s.left)}, resets {_when(s.resets)}")


def spend(
    user: Annotated[str | None, _USER] = None,
    team: Annotated[str | None, _TEAM] = None,
    since: Annotated[
        str | None, typer.Option("--since", help="A date (2026-11-01) or an age (7d, 12h).")
    ] = None,
    by: Annotated[str, _BY] = "user,team",
    model: Annotated[str | None, _MODEL] = None,
    config: Annotated[str | None, _CONFIG] = None,
) -> None:
    """What was spent, from the ledger ([proxy] ledger): requests served and refused
    apart, tokens, cost; grouped by user and team unless --by says otherwise."""
    from toolwire.proxy.people.spending import Question

    groups = tuple(g.strip() for g in by.split(",") if g.strip())
    try:
        question = Question(groups, user, team, model, _since(since)).check()
    except ValueError as e:
        fail(f"--by {by!r}: {e}")
    found = _ledger_spend(config, question)
    rows: list[tuple[str, ...]] = [(*groups, "served", "refused", "input", "output",
                                    "cache read", "cache write", "cost")]  # fmt: skip
    for s in found:
        tokens = (s.input_tokens, s.output_tokens, s.cache_read_tokens, s.cache_write_tokens)
        rows.append((*(k or "-" for k in s.key), str(s.served), str(s.refused),
                     *map(str, tokens), f"${s.cost:.6f}"))  # fmt: skip
    _table(rows)


def _ledger_spend(config: str | None, question: Any) -> list[Any]:
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
        return list(ledger.spend(question))
    finally:
        ledger.close()


def _age(text: str, option: str) -> float:
    relative = _RELATIVE.fullmatch(text.strip())
    if relative is None or int(relative.group(1)) == 0:
        fail(f"{option} {text!r}: an age such as 90d, 12h or 30m")
    return int(relative.group(1)) * _SECONDS[relative.group(2)]


def _when(at: float | None) -> str:
    if at is None:
        return "never"
    return datetime.fromtimestamp(at, UTC).strftime("%Y-%m-%d %H:%M UTC")


def _stamp(at: float) -> str:
    return datetime.fromtimestamp(at, UTC).strftime("%Y-%m-%dT%H:%M")


def _period(seconds: int) -> str:
    for unit in ("d", "h", "m"):
        if seconds % _SECONDS[unit] == 0:
            return f"{seconds // _SECONDS[unit]}{unit}"
    return f"{seconds}s"


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
