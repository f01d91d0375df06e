"""The typer application: every command, its options and its ``--help``.

Registering a command costs only its signature: each command module imports typer and
the standard library at the top, and its heavy dependencies (the ACP SDK, rich, httpx,
Starlette, pydantic) inside the command function.
"""

from __future__ import annotations

import typer

from toolwire import __version__
from toolwire.cli.acp_cmd import acp
from toolwire.cli.client_cmd import client
from toolwire.cli.config_cmd import config
from toolwire.cli.decode_cmd import decode
from toolwire.cli.demo_cmd import demo
from toolwire.cli.handoff_cmd import handoff
from toolwire.cli.login_cmd import login, logout
from toolwire.cli.proxy_cmd import proxy
from toolwire.cli.updates_cmd import updates

app = typer.Typer(
    name="toolwire",
    help="Stream LLM tool calls to code editors over ACP: early, staged, minimal, portable.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
app.command(
    "decode",
    help="Decode a provider stream into normalized events, one JSON object per line.",
)(decode)
app.command("config", help="Show the effective configuration and where each value came from.")(
    config
)
app.command("updates", help="Translate a provider stream into ACP session/update lines.")(updates)
app.command("acp", help="Serve the Agent Client Protocol on stdio: what an editor launches.")(acp)
app.command("demo", help="Replay a recorded coding session through the agent, live.")(demo)
app.command("client", help="Drive any ACP agent: toolwire client -- CMD ARGS...")(client)
app.command("handoff", help="Print the context a new backend gets after a switch.")(handoff)
app.command("login", help="Store a backend's API key where only you can read it.")(login)
app.command("logout", help="Remove a key toolwire login stored.")(logout)
app.add_typer(proxy, name="proxy")


def _version(value: bool) -> None:
    if value:
        typer.echo(f"toolwire {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: bool = typer.Option(
        False, "--version", callback=_version, is_eager=True, help="Show the version and exit."
    ),
) -> None:
    """toolwire: LLM tool calls to editors over the Agent Client Protocol."""


__all__ = ["app"]
