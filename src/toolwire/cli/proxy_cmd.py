"""``toolwire proxy``: serve the Anthropic Messages API in front of any configured backend.

``toolwire proxy serve [--config FILE] [--host 127.0.0.1] [--port 8787]`` serves (uvicorn);
``toolwire proxy`` with no command, or with only options, does the same.
``toolwire proxy switch BACKEND [--session ID] [--user NAME]`` tells a running proxy to send a
session's next requests to BACKEND (the control endpoint ``POST /control/switch``).
``toolwire proxy keys``, ``budget`` and ``spend``: people, budgets and the ledger
(``proxy_people_cmd.py``).
"""

from __future__ import annotations

import ipaddress
from functools import partial
from typing import Annotated, Any

import typer
from typer.core import TyperGroup

from toolwire.cli._io import fail
from toolwire.cli.proxy_people_cmd import budget, keys, spend

_CONFIG = typer.Option("--config", metavar="FILE", help="Config file.", show_default=False)
_HOST = typer.Option("--host", help="Address to bind.")
_PORT = typer.Option("--port", help="Port to bind.")
_TO_HOST = typer.Option("--host", help="Address of the running proxy.")
_TO_PORT = typer.Option("--port", help="Port of the running proxy.")
_BACKEND = typer.Argument(metavar="BACKEND", help="The backend to switch to.", show_default=False)
_SESSION = typer.Option("--session", metavar="ID", help="The session to switch.")
_WHOSE = typer.Option(
    "--user", metavar="NAME", help="Whose session (another person's takes the admin token)."
)
_TEAM = typer.Option("--team", metavar="NAME", help="That person's team, if they have several.")
# Where a person keeps their own proxy key for Claude Code (and so for this command).
KEY_VARIABLES = ("ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_API_KEY")


class _ServeByDefault(TyperGroup):
    """``toolwire proxy [OPTIONS]`` without a command is ``toolwire proxy serve [OPTIONS]``."""

    # ctx is click's Context, which typer re-exports only as a subclass (typer.Context).
    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        if not args or (args[0].startswith("-") and args[0] not in ctx.help_option_names):
            args = ["serve", *args]
        return super().parse_args(ctx, args)


proxy = typer.Typer(
    cls=_ServeByDefault,
    name="proxy",
    help="Serve an Anthropic-compatible proxy to any backend (no command: serve).",
    add_completion=False,
)

proxy.add_typer(keys, name="keys")
proxy.add_typer(budget, name="budget")
proxy.command("spend")(spend)


@proxy.command("serve")
def serve(
    config: Annotated[str | None, _CONFIG] = None,
    host: Annotated[str, _HOST] = "127.0.0.1",
    port: Annotated[int, _PORT] = 8787,
) -> None:
    """Serve the Anthropic, OpenAI (Chat and Responses) and Gemini APIs on any backend."""
    import uvicorn  # only the serving path needs it

    from toolwire.config.schema import ConfigError
    from toolwire.proxy import create_app, load_settings
    from toolwire.proxy.serving import settle_heap, uvicorn_config
    from toolwire.proxy.startup import PortError, listen, startup_block

    try:
        settings = load_settings(config)
    except ConfigError as e:
        fail(str(e))
    if settings.admin_token_env and not settings.admin_token:
        fail(
            f"[proxy] admin_token_env names ${settings.admin_token_env}, which is not set: "
            "export the admin token in it, or remove admin_token_env"
        )
    if not _loopback(host) and not settings.token:
        typer.echo(
            f"toolwire: warning: serving on {host} without [proxy] token: anyone who can "
            "reach it can spend your backends' keys",
            err=True,
        )
    try:
        sock = listen(host, port)  # before anything starts: a bad port is one line
    except PortError as e:
        fail(str(e))
    typer.echo(startup_block(settings, host, port, partial(_active_keys, settings.store)), err=True)
    # Access logs would carry nothing secret, but request bodies and keys never reach them.
    # Read deadlines and the connection cap come from [proxy] (toolwire.proxy.serving).
    server = uvicorn.Server(uvicorn_config(create_app(settings), settings, log_level="warning"))
    settle_heap()  # collections while serving skip what start-up made (serving.py)
    server.run(sockets=[sock])


def _active_keys(store: str) -> int:
    """The people's keys in ``store`` that are neither revoked nor expired."""
    import time

    from toolwire.proxy.people import open_accounts

    if store == "memory":
        return 0
    now = time.time()
    return sum(r.usable(now) for r in open_accounts(store).records())


@proxy.command("switch")
def switch(
    backend: Annotated[str, _BACKEND],
    session: Annotated[str, _SESSION] = "default",
    user: Annotated[str | None, _WHOSE] = None,
    team: Annotated[str | None, _TEAM] = None,
    config: Annotated[str | None, _CONFIG] = None,
    host: Annotated[str, _TO_HOST] = "127.0.0.1",
    port: Annotated[int, _TO_PORT] = 8787,
) -> None:
    """Send a running proxy's session to BACKEND from its next request, context kept."""
    import httpx2

    secret, sent = _credential(config)
    headers = {} if secret is None else {"authorization": f"Bearer {secret}"}
    url = f"http://{host}:{port}/control/switch"
    data = {"backend": backend, "session": session, "user": user, "team": team}
    try:
        reply = httpx2.post(url, json={k: v for k, v in data.items() if v}, headers=headers)
    except httpx2.HTTPError as e:
        fail(f"cannot reach the proxy at {url}: {e}; is `toolwire proxy` running?")
    if reply.status_code != 200:
        fail(_refusal(reply.status_code, _message(reply), sent))
    whose = reply.json().get("user")
    typer.echo(f"session {session}" + (f" of {whose}" if whose else "") + f" -> {backend}")


def _credential(config: str | None) -> tuple[str | None, str]:
    """What the switch is sent with, and that in words: the admin token, else the
    person's own key (where Claude Code takes it from), else the ``[proxy] token``."""
    import os

    from toolwire.config.schema import ConfigError
    from toolwire.proxy import load_settings
    from toolwire.proxy.people.keys import KEY_PREFIX

    try:
        settings = load_settings(config)
    except ConfigError:
        settings = None  # the running proxy will say what it wanted
    if settings is not None and settings.admin_token:
        return settings.admin_token, f"the admin token from ${settings.admin_token_env}"
    for name in KEY_VARIABLES:
        if os.environ.get(name, "").startswith(KEY_PREFIX):  # never another service's key
            return os.environ[name], f"your key from ${name}"
    if settings is not None and settings.token:
        return settings.token, "the [proxy] token"
    return None, "no credential"


def _message(reply: Any) -> str:
    try:
        return str(reply.json()["error"]["message"])
    except (ValueError, KeyError, TypeError):
        return reply.text.strip() or f"HTTP {reply.status_code}"


def _refusal(status: int, message: str, sent: str) -> str:
    """One line: what the proxy said, what this command sent, what it takes."""
    said = f"the proxy refused the switch: {message} (this command sent {sent})"
    if status == 401:
        keys = " or $".join(KEY_VARIABLES)
        return (
            f"{said}; it takes the admin token (in the variable [proxy] admin_token_env "
            f"names), your own key (tw-..., in ${keys}) or the [proxy] token"
        )
    return said


def _loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


__all__ = ["proxy", "serve", "switch"]
