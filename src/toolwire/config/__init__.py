"""toolwire's configuration: a TOML file, environment overrides, command-line overrides.

Precedence, lowest first: built-in defaults < the config file < environment variables <
command-line options. The file is ``$TOOLWIRE_CONFIG``, else
``$XDG_CONFIG_HOME/toolwire/config.toml`` (default ``~/.config/toolwire/config.toml``)::

    default_backend = "claude"
    mode = "ask"                       # ask | accept-edits | read-only | plan
    profile = "minimal"                # minimal | verbose | full (default: by client)

    [backends.claude]
    provider = "anthropic"             # or openai-chat | openai-responses | gemini | replay
    model = "claude-sonnet-5"
    api_key_env = "ANTHROPIC_API_KEY"  # the NAME of the variable holding the key
    passthrough = "full"               # toolwire proxy: full | core | off (default: by host)

    [backends.local]
    provider = "openai-chat"
    base_url = "http://127.0.0.1:11434/v1"
    model = "qwen3-coder"
    tool_format = "qwen3-coder"        # native, or a text format (docs/decoding.md)

    [limits]                           # see schema.LimitsConfig
    [handoff]                          # see schema.HandoffConfig
    [compaction]                       # see schema.CompactionConfig
    [checkpoints]                      # see schema.CheckpointsConfig
    [subagents]                        # see schema.SubagentsConfig (the Task tool)
    [acp]                              # see schema.AcpConfig: v2 = true answers v2 clients
    [tools]                            # see schema.ToolsConfig
    env_allow = []                     # key variables Bash commands may still see
    [tools.web]                        # see web.WebConfig: WebFetch's reach and limits

    [mcp_servers.db]                   # an MCP server every session starts (see mcp.py)
    command = "db-mcp"                 # or url = "https://..." (+ headers, transport)
    env = { DB_TOKEN = "${DB_TOKEN}" } # keys only as ${VAR}, never in the file

Environment: ``TOOLWIRE_CONFIG``, ``TOOLWIRE_BACKEND`` (a name, or ``replay:CASSETTE``),
``TOOLWIRE_MODEL`` (the selected backend's model), ``TOOLWIRE_MODE``, ``TOOLWIRE_PROFILE``.
With no backend configured, one is made for each provider whose key is in the
environment; a ``demo`` replay backend on the bundled cassette is always there. When it
is the default only because nothing else is, ``Config.no_backend`` says what to set and
the agent runs nothing (the demo runs when chosen: ``toolwire demo``, ``--backend demo``).
Every value remembers where it came from.

``choices`` holds the fixed sets (modes, profiles, pass-through levels, providers, tool
formats, handoff defaults) that every other module imports; ``schema`` the file's
models (``mcp`` its ``[mcp_servers.NAME]`` tables, ``web`` its ``[tools.web]``);
``explain`` the one-line wording of their errors (``errors.ConfigError``); ``read`` the
file checked, an error naming its line (``lines`` finds it); ``load`` the precedence and
sources; ``peek`` reads ``[acp] v2`` alone, without pydantic, for ``toolwire acp``'s first
answer.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from toolwire.config.errors import ConfigError

if TYPE_CHECKING:
    from toolwire.config.load import DETECTED, Config, config_path, load_config
    from toolwire.config.schema import (
        BackendConfig,
        CheckpointsConfig,
        CompactionConfig,
        HandoffConfig,
        LimitsConfig,
        SubagentsConfig,
        ToolsConfig,
    )

# The loader and the schema import pydantic; the fixed sets (``choices``) are used by the
# pure update engine, which must not. So the package loads those two on first use.
_LAZY = {
    "DETECTED": "load",
    "Config": "load",
    "config_path": "load",
    "load_config": "load",
    "BackendConfig": "schema",
    "CheckpointsConfig": "schema",
    "CompactionConfig": "schema",
    "HandoffConfig": "schema",
    "LimitsConfig": "schema",
    "SubagentsConfig": "schema",
    "ToolsConfig": "schema",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{module}"), name)


__all__ = [
    "DETECTED",
    "BackendConfig",
    "CheckpointsConfig",
    "CompactionConfig",
    "Config",
    "ConfigError",
    "HandoffConfig",
    "LimitsConfig",
    "SubagentsConfig",
    "ToolsConfig",
    "config_path",
    "load_config",
]
