"""The ``[proxy]`` table of ``config.toml``: only what ``toolwire proxy`` needs.

The backends themselves are the agent's ``[backends.NAME]`` tables (``load_config``),
and the web search provider is the agent's ``[tools.web] search`` (docs/proxy.md, "Web
search on other backends");
this module adds the schema of the one extra table, which ``load_config`` hands over
unchecked (``Config.proxy``); errors are worded as every other config error::

    [proxy]
    default_backend = "glm"          # else the config's default backend
    token = "..."                    # clients must send it (x-api-key or Bearer)
    admin_token_env = ""             # the variable holding the admin token (switch, metrics)
    pass_client_key = false          # Anthropic backends: forward the client's x-api-key
    max_body_bytes = 33554432
    store = "memory"                 # a SQLite path, "redis://host:6379/0", "redis-cluster://h:p,h:p"
    store_ttl = 0                    # Redis store: seconds an idle session is kept (0: forever)
    retries = 0                      # upstream retries (Claude Code retries on its own)
    header_timeout = 10.0            # seconds a client has to send a request's headers
    body_timeout = 60.0              # seconds it then has to send the whole body
    keep_alive_timeout = 5           # seconds an idle connection is kept between requests
    max_connections = 256            # more get 529 (but /healthz answers), then are refused
    scale_usage = true               # input tokens reported as a share of Claude's window
    compaction = true                # compact a request over its backend's window (else a 400)
    failover_cooldown = 30.0         # seconds a failed backend is skipped (doubling, up to 10x)
    ledger = ""                      # spend rows: a SQLite path or "postgresql://..." ("": none)
    ledger_spool = ""                # where rows wait while the ledger is down ("": state dir)
    ledger_memory_rows = 10000       # rows kept in memory while it is down, then spooled
    max_header_bytes = 65536         # a request's line and headers (431 past it)

    [proxy.models]                   # request model name -> "backend" or "backend,model"
    "claude-opus-5-5" = "glm,glm-4.6"

    [proxy.aliases]                  # listed by /v1/models (Claude Code's picker), routed
    "claude-glm-4-6" = "glm,glm-4.6" # like an explicit "backend,model"

    [[proxy.routes]]                 # rules, first match wins (toolwire.proxy.rules)
    long_context = 60000
    backend = "gemini"

    [proxy.limits]                   # per minute, shared by every replica (0: none)
    requests_per_minute = 60         # per client key; user_... and team_... likewise
    tokens_per_minute = 400000
"""

from __future__ import annotations

import importlib.util
import os
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from pydantic import Field, NonNegativeInt, PositiveFloat, PositiveInt

from toolwire.config import Config, load_config
from toolwire.config.schema import ConfigError, Table, validate
from toolwire.proxy.people.ledger import PG_MISSING, PG_SCHEMES
from toolwire.proxy.ratelimit import LimitsTable
from toolwire.proxy.rules import Rule, RuleTable, rule_of
from toolwire.proxy.stores.redis import is_redis_url, require_redis
from toolwire.web import SearchSettings

DEFAULT_MAX_BODY = 32 * 1024 * 1024  # Claude Code's long sessions reach several MB
# Read deadlines and the connection cap (docs/proxy.md, "Limits"): a slow or half-open
# client must not hold a socket for ever, nor a crowd of them take every descriptor.
DEFAULT_HEADER_TIMEOUT = 10.0
DEFAULT_BODY_TIMEOUT = 60.0
DEFAULT_KEEP_ALIVE_TIMEOUT = 5  # uvicorn's default
DEFAULT_MAX_CONNECTIONS = 256  # with an upstream connection each, well under 1024 descriptors
DEFAULT_FAILOVER_COOLDOWN = 30.0
# Claude Code's headers are about 2 KB; 64 KB is what common servers allow at most.
DEFAULT_MAX_HEADER_BYTES = 64 * 1024
DEFAULT_LEDGER_MEMORY_ROWS = 10_000  # a few MB of rows while the ledger is down
# Claude Code's gateway model discovery keeps only the ids that start with these (any case).
PICKER_PREFIXES = ("claude", "anthropic")


class ProxyTable(Table):
    """The ``[proxy]`` table as the file writes it (see the module doc)."""

    default_backend: str | None = None
    token: str | None = None
    admin_token_env: str | None = None
    pass_client_key: bool = False
    max_body_bytes: PositiveInt = DEFAULT_MAX_BODY
    store: str = "memory"
    store_ttl: NonNegativeInt = 0
    retries: NonNegativeInt = 0
    header_timeout: PositiveFloat = DEFAULT_HEADER_TIMEOUT
    body_timeout: PositiveFloat = DEFAULT_BODY_TIMEOUT
    keep_alive_timeout: PositiveInt = DEFAULT_KEEP_ALIVE_TIMEOUT
    max_connections: PositiveInt = DEFAULT_MAX_CONNECTIONS
    scale_usage: bool = True
    compaction: bool = True
    failover_cooldown: PositiveFloat = DEFAULT_FAILOVER_COOLDOWN
    ledger: str = ""
    ledger_spool: str = ""
    ledger_memory_rows: PositiveInt = DEFAULT_LEDGER_MEMORY_ROWS
    max_header_bytes: PositiveInt = DEFAULT_MAX_HEADER_BYTES
    models: dict[str, str] = Field(
        default_factory=dict,
        description="a table mapping model names to 'backend' or 'backend,model'",
    )
    aliases: dict[str, str] = Field(
        default_factory=dict,
        description="a table mapping model ids to 'backend' or 'backend,model'",
    )
    # Each rule is checked on its own (``_rules``), so an error names its key.
    routes: list[dict[str, Any]] = Field(
        default_factory=list, description="an array of tables ([[proxy.routes]])"
    )
    limits: LimitsTable = Field(default_factory=LimitsTable)


@dataclass(frozen=True, slots=True)
class ProxySettings:
    """How the proxy routes, guards and limits requests (see the module doc)."""

    config: Config
    default_backend: str
    token: str | None = None
    pass_client_key: bool = False
    max_body_bytes: int = DEFAULT_MAX_BODY
    store: str = "memory"
    store_ttl: int = 0
    retries: int = 0
    header_timeout: float = DEFAULT_HEADER_TIMEOUT
    body_timeout: float = DEFAULT_BODY_TIMEOUT
    keep_alive_timeout: int = DEFAULT_KEEP_ALIVE_TIMEOUT
    max_connections: int = DEFAULT_MAX_CONNECTIONS
    scale_usage: bool = True
    """Report input tokens scaled to Claude's window when the backend's is smaller."""
    compaction: bool = True
    """Compact a request over its backend's window; False: refuse it ("prompt is too long")."""
    models: Mapping[str, str] = field(default_factory=dict)
    failover_cooldown: float = DEFAULT_FAILOVER_COOLDOWN
    """Seconds a backend that failed is skipped (doubling on failures in a row, to 10x)."""
    search: SearchSettings | None = None
    """The provider the proxy runs Claude Code's web searches on for backends without
    their own (``[tools.web] search``, shared with the agent's ``WebSearch``)."""
    aliases: Mapping[str, str] = field(default_factory=dict)
    """Model ids ``/v1/models`` lists, each ``backend`` or ``backend,model``."""
    routes: tuple[Rule, ...] = ()
    """The ``[[proxy.routes]]`` rules, in order."""
    limits: LimitsTable = field(default_factory=LimitsTable)
    """``[proxy.limits]``: requests and tokens per minute (``ratelimit.py``)."""
    ledger: str = ""
    """Where one row per request is written: a SQLite path or a ``postgresql://`` URL."""
    admin_token_env: str | None = None
    """The variable holding the admin token: it alone (or an admin's key) switches
    another person's session and reads ``/metrics`` once people have keys."""
    ledger_spool: str = ""
    """The directory rows wait in while the ledger is down ("": the state directory)."""
    ledger_memory_rows: int = DEFAULT_LEDGER_MEMORY_ROWS
    """Rows kept in memory while the ledger is down; more go to the spool."""
    max_header_bytes: int = DEFAULT_MAX_HEADER_BYTES
    """A request's line and headers at most (``serving.py``): past it, 431."""

    @property
    def admin_token(self) -> str | None:
        """The admin token, read from ``admin_token_env`` (None: unset or empty)."""
        return os.environ.get(self.admin_token_env or "") or None

    @classmethod
    def from_config(cls, config: Config, **overrides: Any) -> ProxySettings:
        """The settings of ``config``'s ``[proxy]`` table, checked; ``overrides`` (not
        None) win. Each field is read from the table field of its name."""
        where = str(config.file)
        table = validate(ProxyTable, config.proxy, where, "proxy")
        values: dict[str, Any] = {
            f.name: getattr(table, f.name) for f in fields(cls) if f.name in ProxyTable.model_fields
        }
        values.update(
            config=config,
            default_backend=table.default_backend or config.default_backend,
            store=table.store or "memory",
            models=dict(table.models),
            search=SearchSettings.from_config(config.tools.web),
            aliases=dict(table.aliases),
            routes=_rules(table.routes, where),
        )
        values.update({k: v for k, v in overrides.items() if v is not None})
        settings = cls(**values)
        _check_store(settings, where)
        config.backend(settings.default_backend)  # an unknown default fails now, in plain words
        _check_fallbacks(settings, where)
        _check_aliases(settings, where)
        _check_routes(settings, where)
        return settings


def load_settings(path: str | Path | None = None, **overrides: Any) -> ProxySettings:
    """The agent's configuration plus its ``[proxy]`` table; ``overrides`` win."""
    return ProxySettings.from_config(load_config(path), **overrides)


def _check_fallbacks(settings: ProxySettings, where: str) -> None:
    """Every ``fallbacks`` entry names a defined backend other than its own."""
    backends = settings.config.backends
    for name, backend in backends.items():
        for fallback in backend.fallbacks:
            if fallback not in backends or fallback == name:
                known = ", ".join(n for n in backends if n != name)
                raise ConfigError(
                    f"{where}: backends.{name}.fallbacks: {fallback!r} is not another "
                    f"backend; defined: {known}"
                )


def _rules(tables: list[dict[str, Any]], where: str) -> tuple[Rule, ...]:
    return tuple(
        rule_of(validate(RuleTable, t, where, "proxy", f"routes[{i}]"))
        for i, t in enumerate(tables)
    )


def _check_aliases(settings: ProxySettings, where: str) -> None:
    """Each alias names a defined backend, and is an id Claude Code's picker keeps."""
    backends = settings.config.backends
    for alias, target in settings.aliases.items():
        if not alias.lower().startswith(PICKER_PREFIXES):
            raise ConfigError(
                f"{where}: proxy.aliases: {alias!r} must start with 'claude' or 'anthropic' "
                "(Claude Code's model picker drops other ids)"
            )
        name = target.partition(",")[0]
        if name not in backends:
            known = ", ".join(backends)
            raise ConfigError(
                f"{where}: proxy.aliases.{alias}: {name!r} is not a backend; defined: {known}"
            )


def _check_routes(settings: ProxySettings, where: str) -> None:
    """Each rule sets a condition and names a defined backend."""
    backends = settings.config.backends
    for i, rule in enumerate(settings.routes):
        if not rule.conditions:
            raise ConfigError(
                f"{where}: proxy.routes[{i}]: no condition (long_context, thinking, "
                "background, image, web_search or header)"
            )
        if rule.backend not in backends:
            known = ", ".join(backends)
            raise ConfigError(
                f"{where}: proxy.routes[{i}].backend: {rule.backend!r} is not a backend; "
                f"defined: {known}"
            )


def _check_store(settings: ProxySettings, where: str) -> None:
    """A Redis store needs the optional ``redis`` package; ``store_ttl`` needs Redis."""
    if is_redis_url(settings.store):
        require_redis()  # a ConfigError with the install line, before serving
    elif settings.store_ttl:
        raise ConfigError(f"{where}: proxy.store_ttl needs a redis:// store")
    if settings.ledger.startswith(PG_SCHEMES) and importlib.util.find_spec("psycopg") is None:
        raise ConfigError(f"{where}: proxy.ledger: {PG_MISSING}")


__all__ = ["DEFAULT_MAX_BODY", "ProxySettings", "ProxyTable", "load_settings"]
