"""``toolwire proxy``: serve the Anthropic Messages API in front of any configured backend.

``toolwire proxy [--config FILE] [--host 127.0.0.1] [--port 8787]`` serves (uvicorn);
``toolwire proxy switch BACKEND [--session ID]`` tells a running proxy to send a
session's next requests to BACKEND (the control endpoint ``POST /control/switch``).
"""

from __future__ import annotations

import ipaddress
from typing import Annotated

import httpx2
import typer

from toolwire.cli._io import fail
from toolwire.config.schema import ConfigError

_ACTION = typer.Argument(
    help="Nothing to serve; 'switch' to switch a running proxy's session.", show_default=False
)
_BACKEND = typer.Argument(help="With 'switch': the backend to switch to.", show_default=False)


def proxy(
    action: Annotated[str | None, _ACTION] = None,
    backend: Annotated[str | None, _BACKEND] = None,
    config: Annotated[str | None, typer.Option("--config", help="Config file.")] = None,
    host: Annotated[str, typer.Option("--host", help="Address to bind.")] = "127.0.0.1",
    port: Annotated[int, typer.Option("--port", help="Port to bind.")] = 8787,
    session: Annotated[
        str, typer.Option("--session", help="With 'switch': the session id.")
    ] = "default",
) -> None:
    """Serve the proxy, or switch a running proxy's session to another backend."""
    if action is None:
        _serve(config, host, port)
    elif action == "switch" and backend:
        _switch(config, host, port, backend, session)
    else:
        fail("usage: toolwire proxy [--host H --port P] | toolwire proxy switch BACKEND")


def _serve(config: str | None, host: str, port: int) -> None:
    import uvicorn  # only the serving path needs it

    from toolwire.proxy import create_app, load_settings

    try:
        settings = load_settings(config)
    except ConfigError as e:
        fail(str(e))
    if not _loopback(host) and not settings.token:
        typer.echo(
            f"toolwire: warning: serving on {host} without [proxy] token: anyone who can "
            "reach it can spend your backends' keys",
            err=True,
        )
    # Access logs would carry nothing secret, but request bodies and keys never reach them.
    uvicorn.run(create_app(settings), host=host, port=port, log_level="warning")


def _switch(config: str | None, host: str, port: int, backend: str, session: str) -> None:
    from toolwire.proxy import load_settings

    headers: dict[str, str] = {}
    try:
        token = load_settings(config).token
    except ConfigError:
        token = None  # the running proxy will say whether it wanted one
    if token:
        headers["authorization"] = f"Bearer {token}"
    url = f"http://{host}:{port}/control/switch"
    try:
        reply = httpx2.post(url, json={"backend": backend, "session": session}, headers=headers)
    except httpx2.HTTPError as e:
        fail(f"cannot reach the proxy at {url}: {e}; is `toolwire proxy` running?")
    if reply.status_code != 200:
        fail(reply.json().get("error", {}).get("message", reply.text))
    typer.echo(f"session {session} -> {backend}")


def _loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


__all__ = ["proxy"]
