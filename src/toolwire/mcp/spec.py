"""What to run: ``ServerSpec``, from the editor's ``mcpServers`` or the config file."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Literal

from toolwire.config.load import Config
from toolwire.config.mcp import McpServerTable, expand

Transport = Literal["stdio", "http", "sse"]
_EMPTY: Mapping[str, str] = MappingProxyType({})


@dataclass(frozen=True)
class ServerSpec:
    """One MCP server to run in a session."""

    name: str
    transport: Transport
    command: str | None = None
    args: tuple[str, ...] = ()
    env: Mapping[str, str] = field(default_factory=lambda: _EMPTY)
    cwd: str | None = None
    url: str | None = None
    headers: Mapping[str, str] = field(default_factory=lambda: _EMPTY)
    timeout: float = 30.0
    """Seconds to start and list tools (and again for the one restart)."""
    tools_allow: tuple[str, ...] = ()
    tools_deny: tuple[str, ...] = ()
    trusted: bool = False
    source: Literal["client", "config"] = "config"
    problem: str | None = None
    """Why this server cannot start at all (an unset ``${VAR}``); reported by ``start``."""


def _pairs(items: Any) -> dict[str, str]:
    """ACP's ``[{name, value}]`` lists (env, headers) as a mapping."""
    return {str(item.name): str(item.value) for item in items or ()}


def specs_from_acp(servers: Sequence[Any]) -> list[ServerSpec]:
    """The editor's ``mcpServers`` (ACP SDK models: stdio, http, sse) as specs.

    Servers of other kinds (ACP's unstable ``acp`` transport) are left out: toolwire
    advertises only ``mcpCapabilities.http`` and ``.sse``, so a client should not send them.
    """
    specs = []
    for server in servers:
        kind = getattr(server, "type", None)
        if kind in ("http", "sse"):
            specs.append(
                ServerSpec(
                    name=server.name,
                    transport=kind,
                    url=server.url,
                    headers=MappingProxyType(_pairs(server.headers)),
                    source="client",
                )
            )
        elif kind is None and hasattr(server, "command"):
            specs.append(
                ServerSpec(
                    name=server.name,
                    transport="stdio",
                    command=server.command,
                    args=tuple(server.args or ()),
                    env=MappingProxyType(_pairs(server.env)),
                    source="client",
                )
            )
    return specs


def _expanded(
    label: str, values: Mapping[str, str], environ: Mapping[str, str], problems: list[str]
) -> dict[str, str]:
    out = {}
    for key, value in values.items():
        out[key], unset = expand(value, environ)
        problems += [
            f"{label} {key} names ${{{var}}}, which is not set; export {var} before "
            "starting toolwire"
            for var in unset
        ]
    return out


def spec_from_table(
    name: str, table: McpServerTable, environ: Mapping[str, str] | None = None
) -> ServerSpec:
    """One config table as a spec, ``${VAR}`` expanded from ``environ`` (default: now)."""
    env_in = os.environ if environ is None else environ
    problems: list[str] = []
    env = _expanded("env", table.env, env_in, problems)
    headers = _expanded("header", table.headers, env_in, problems)
    return ServerSpec(
        name=name,
        transport=table.kind,
        command=table.command,
        args=tuple(table.args),
        env=MappingProxyType(env),
        cwd=table.cwd,
        url=table.url,
        headers=MappingProxyType(headers),
        timeout=table.timeout,
        tools_allow=tuple(table.tools.allow),
        tools_deny=tuple(table.tools.deny),
        trusted=table.trusted,
        source="config",
        problem=problems[0] if problems else None,
    )


def specs_from_config(config: Config, environ: Mapping[str, str] | None = None) -> list[ServerSpec]:
    """The enabled ``[mcp_servers.NAME]`` tables, in file order."""
    return [
        spec_from_table(name, table, environ)
        for name, table in config.mcp_servers.items()
        if table.enabled
    ]


__all__ = ["ServerSpec", "Transport", "spec_from_table", "specs_from_acp", "specs_from_config"]
