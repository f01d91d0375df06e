"""The shape of ``config.toml``: pydantic models with defaults, types and checks.

``load.py`` decides precedence; these models only check what the file says. Unknown keys
are errors (a typo would otherwise be silently ignored) and values are not coerced (a
quoted number stays an error). ``validate`` turns the first problem into one line
through ``explain.explain``, naming the file, the key and what to do.
"""

from __future__ import annotations

import logging
import os
import re
from collections.abc import Mapping
from functools import lru_cache
from pathlib import Path
from typing import Annotated, Any, Final, Literal, Self, TypeVar, cast
from urllib.parse import urlsplit

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    NonNegativeFloat,
    PlainValidator,
    PositiveFloat,
    PositiveInt,
    StringConstraints,
    ValidationError,
    field_validator,
    model_validator,
)

from toolwire.config.choices import (
    DEFAULT_COMMAND_TIMEOUT,
    DEFAULT_CONNECT_TIMEOUT,
    DEFAULT_KEEP_LAST,
    DEFAULT_MAX_RETRIES,
    DEFAULT_MAX_TOOL_CONTEXT_CHARS,
    DEFAULT_MAX_TOOL_OUTPUT_BYTES,
    DEFAULT_MAX_TOOL_RESULT_CHARS,
    DEFAULT_READ_TIMEOUT,
    TOOL_FORMATS,
    Mode,
    PassthroughLevel,
    Profile,
    Provider,
    RescueMode,
    ThoughtLevel,
    ToolFormat,
    known_tool_format,
    native_tools,
)
from toolwire.config.errors import ConfigError
from toolwire.config.explain import explain
from toolwire.config.keys import stored_key
from toolwire.config.mcp import McpServerTable
from toolwire.config.sandbox import SandboxConfig
from toolwire.config.web import WebConfig
from toolwire.providers import PROFILES, profile

SearchRoute = Literal["native", "tool"]
"""How a session's model searches the web: the provider's own search, or ``WebSearch``."""

NonEmpty = Annotated[str, StringConstraints(min_length=1)]
_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_T = TypeVar("_T", bound="Table")
log = logging.getLogger(__name__)


class Table(BaseModel):
    """A TOML table: unknown keys are errors and values keep their TOML type (an integer
    is accepted where a number is asked for). A field's ``description``, when set, is how
    an error names what its value must be."""

    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)


_RENAMED_LIMITS: Final = {
    "max_tool_output_chars": "max_tool_output_bytes",
    "max_live_output_chars": "max_live_output_bytes",
}


class LimitsConfig(Table):
    """``[limits]``: how far one prompt may go and how long the network may take."""

    max_turn_requests: PositiveInt = 50
    """Model requests in one prompt turn before it stops with ``max_turn_requests``."""
    max_tokens: PositiveInt = 8192
    """Output tokens asked for per model request."""
    connect_timeout: PositiveFloat = DEFAULT_CONNECT_TIMEOUT
    """Seconds to connect to a backend."""
    read_timeout: PositiveFloat = DEFAULT_READ_TIMEOUT
    """Seconds a backend may stay silent mid-response."""
    max_retries: PositiveInt = DEFAULT_MAX_RETRIES
    """Retries of a 429 / 5xx / overloaded answer, before the first byte only."""
    command_timeout: PositiveFloat = DEFAULT_COMMAND_TIMEOUT
    """Default seconds a ``Bash`` command may run."""
    max_tool_output_bytes: PositiveInt = DEFAULT_MAX_TOOL_OUTPUT_BYTES
    """UTF-8 bytes of a tool's output sent to the model (cut head + tail beyond, on a
    character boundary)."""
    max_live_output_bytes: PositiveInt = 4000
    """UTF-8 bytes of a running command's output tail shown in the editor per update."""

    @model_validator(mode="before")
    @classmethod
    def _renamed(cls, data: Any) -> Any:
        # The caps were named in characters and always enforced in bytes; the old names
        # still load, for one release, as the bytes they always meant.
        if not isinstance(data, dict):
            return data
        data = dict(data)
        for old, new in _RENAMED_LIMITS.items():
            if old not in data:
                continue
            if new in data:
                raise ValueError(f"{old} is the old name of {new}; set only {new}")
            log.warning("limits.%s is now %s (the same value, in bytes)", old, new)
            data[new] = data.pop(old)
        return data


class HandoffConfig(Table):
    """``[handoff]``: what a new backend receives after a switch (docs/handoff.md). The
    fields are the keyword arguments of ``toolwire.handoff.build_handoff``."""

    max_tool_context_chars: PositiveInt = DEFAULT_MAX_TOOL_CONTEXT_CHARS
    """Budget for the verbatim, deduplicated tool context."""
    max_tool_result_chars: PositiveInt = DEFAULT_MAX_TOOL_RESULT_CHARS
    """Cap per tool result in that context (head + tail kept)."""
    keep_last: PositiveInt = DEFAULT_KEEP_LAST
    """Most recent turns passed verbatim instead of summarized."""


class CompactionConfig(Table):
    """``[compaction]``: when and how a session's context is compacted (docs/context.md)."""

    enabled: bool = True
    """Compact automatically before a request that would come too close to the window.
    ``/compact`` and the recovery from a provider's context-length error work either way."""
    threshold: float = Field(default=0.8, gt=0, le=1, description="a number in (0, 1]")
    """Share of (window - reserved output) a request may fill before it is compacted."""
    summary: Literal["model", "extractive"] = "model"
    """Who writes the summary: the session's own model (the offline extractive summary
    stands in when its call fails), or always the offline one (no model call, instant)."""


class CheckpointsConfig(Table):
    """``[checkpoints]``: snapshots of the session's directories, for ``/rewind``
    (docs/checkpoints.md)."""

    enabled: bool = True
    """Snapshot the directories before each prompt and when its turn ends."""
    keep: PositiveInt = 50
    """Prompts whose snapshots a session keeps; older ones are collected. A snapshot
    costs only the files that changed, so 50 is about a long working day of prompts."""
    max_file_bytes: PositiveInt = 10_000_000
    """Files larger than this are neither saved nor restored (the restore names them)."""


class SubagentsConfig(Table):
    """``[subagents]``: children started by the ``Task`` tool (docs/agent.md "Subagents")."""

    max_steps: PositiveInt = 30
    """Model requests one child may make before it has to answer."""
    timeout: PositiveFloat = 600.0
    """Seconds a child may run; then it is stopped and the parent told so."""
    max_parallel: PositiveInt = 4
    """Child model requests in flight at once, across the children of one turn."""


class AcpConfig(Table):
    """``[acp]``: the protocol ``toolwire acp`` speaks (docs/agent.md "ACP v2")."""

    v2: bool = True
    """Answer a client that asks for protocol version 2 in the v2 draft (off: 1)."""


class ToolsConfig(Table):
    """``[tools]``: what the agent's tools may do."""

    env_allow: list[str] = Field(
        default_factory=list, description="a list of environment variable names"
    )
    """Key variables a command may still see. ``Bash`` commands never get the configured
    backends' ``api_key_env`` nor the providers' well-known key variables
    (``toolwire.tools.terminal.KEY_VARIABLES``); a name listed here is passed through."""

    @field_validator("env_allow")
    @classmethod
    def _variable_names(cls, names: list[str]) -> list[str]:
        if not all(_ENV_NAME.fullmatch(name) for name in names):
            raise ValueError(
                "tools.env_allow must list the NAMES of environment variables "
                '(e.g. ["OPENAI_API_KEY"]), not their values'
            )
        return names

    web: WebConfig = Field(default_factory=WebConfig)
    """``[tools.web]``: the web tools' reach, deadline and size cap (``config.web``)."""
    sandbox: SandboxConfig = Field(default_factory=SandboxConfig)
    """``[tools.sandbox]``: the sandbox commands run in (``toolwire.config.sandbox``)."""


class PriceTable(Table):
    """``price_per_mtok = {input = 3.0, output = 15.0, cache_read = 0.3}``: what a
    million tokens cost, for the ``cost`` in ``usage_update``."""

    input: NonNegativeFloat
    output: NonNegativeFloat
    cache_read: NonNegativeFloat | None = None
    """Default: ``input`` (a provider without a cache discount)."""
    cache_write: NonNegativeFloat | None = None
    """Default: ``input``."""
    currency: NonEmpty = "USD"


def _known_provider(value: object) -> Provider:
    """A wire format of the registry (``toolwire.providers``), or ``replay``: read when
    the file is, so a format registered with a profile is accepted like the built-ins."""
    known = (*PROFILES, "replay")
    if not isinstance(value, str) or value not in known:
        raise ValueError(f"provider = {value!r} is not valid; use one of {', '.join(known)}")
    return cast(Provider, value)


def _known_tool_format(value: object) -> ToolFormat:
    """``native`` or a registered text format (``toolwire.decode.textformats``), by any of
    its spellings: kept as the canonical name."""
    known = known_tool_format(value)
    if known is None:
        raise ValueError(
            f"tool_format = {value!r} is not valid; use one of {', '.join(TOOL_FORMATS)}"
        )
    return known


class BackendTable(Table):
    """One ``[backends.NAME]`` table as the file writes it."""

    provider: Annotated[Provider, PlainValidator(_known_provider)]
    model: NonEmpty = ""  # left out: only a replay backend may (``_complete``)
    base_url: NonEmpty | None = None
    api_key_env: NonEmpty | None = None
    tool_format: Annotated[ToolFormat, PlainValidator(_known_tool_format)] = "native"
    cassette: NonEmpty | None = None
    rescue: RescueMode | None = None
    """Tool calls the server leaked into the text become calls (None: ``rescue_mode``)."""
    passthrough: PassthroughLevel | None = None
    """``toolwire proxy`` only: ``full``, ``core`` or ``off`` (None: chosen by host)."""
    context_window: PositiveInt | None = None
    """Tokens the model can take in (None: the built-in table, ``toolwire.context.windows``)."""
    max_output_tokens: PositiveInt | None = None
    """Tokens reserved for the answer (None: the table's, at most ``limits.max_tokens``)."""
    price_per_mtok: PriceTable | None = None
    """Prices per million tokens; with them ``usage_update`` carries the session's cost."""
    prompt_cache: bool = True
    """Anthropic: mark ``cache_control`` breakpoints (tools, system, the latest messages)."""
    thought_level: ThoughtLevel = "off"
    """How much the model thinks by default (off, low, medium, high; docs/backends.md,
    "Thinking"); a session changes it with its ``thought_level`` config option."""
    vision: bool = True
    """The model takes images; false: each image is sent as a one-line note instead."""
    fallbacks: list[NonEmpty] = Field(default_factory=list)
    """``toolwire proxy`` only: the backends tried in order when this one fails before
    its answer's first byte (docs/proxy.md, "Failover")."""
    sticky: bool = False
    """``toolwire proxy`` only: a failover from this backend switches the session."""
    api_key_envs: list[NonEmpty] = Field(default_factory=list)
    """``toolwire proxy`` only: a pool of upstream keys, the NAMES of their variables; a
    session sticks to one (docs/proxy.md, "Key pools")."""

    @model_validator(mode="before")
    @classmethod
    def _no_key_in_the_file(cls, data: Any) -> Any:
        if isinstance(data, dict) and "api_key" in data:
            raise ValueError(
                "do not put an API key in the config file; export it in an environment "
                'variable and name that variable with api_key_env = "NAME"'
            )
        return data

    @field_validator("api_key_env")
    @classmethod
    def _a_variable_name(cls, name: str | None) -> str | None:
        if name is not None and not _ENV_NAME.fullmatch(name):
            raise ValueError(
                "api_key_env must be the NAME of the environment variable holding the key "
                "(e.g. ANTHROPIC_API_KEY), not the key itself"
            )
        return name

    @field_validator("api_key_envs")
    @classmethod
    def _variable_names(cls, names: list[str]) -> list[str]:
        if any(not _ENV_NAME.fullmatch(n) for n in names):
            raise ValueError(
                "api_key_envs must list the NAMES of the environment variables holding "
                'the keys (e.g. ["ANTHROPIC_KEY_1", "ANTHROPIC_KEY_2"]), not the keys'
            )
        if len(set(names)) != len(names):
            raise ValueError("api_key_envs names a variable twice")
        return names

    @model_validator(mode="after")
    def _complete(self) -> Self:
        if not self.model and self.provider != "replay":
            raise ValueError('model is missing; set model = "..." (the provider\'s model id)')
        if self.provider == "replay" and self.cassette is None:
            raise ValueError('a replay backend needs cassette = "PATH.jsonl"')
        if self.rescue == "auto" and not native_tools(self.tool_format):
            raise ValueError(
                'rescue = "auto" applies to native tool calls; remove it (tool_format reads '
                "the text already)"
            )
        if self.passthrough is not None and self.provider != "anthropic":
            raise ValueError("passthrough applies to anthropic backends only; remove it here")
        return self

    def named(self, name: str, file: Path) -> BackendConfig:
        """This table as backend ``name``: a cassette path is relative to ``file``; a
        provider's own service gets its profile's key variable (never another
        ``base_url``: that would hand the key to a third party)."""
        values = self.model_dump(exclude_unset=True)
        if self.provider == "replay" and self.cassette is not None:
            values["cassette"] = str((file.parent / Path(self.cassette).expanduser()).resolve())
        known = profile(self.provider)
        if self.api_key_env is None and self.base_url is None:
            values["api_key_env"] = known.key_env if known is not None else None
        return BackendConfig(name=name, **values)


class BackendConfig(BackendTable):
    """A backend toolwire can run: a ``[backends.NAME]`` table, or one made for a key in
    the environment, the demo cassette or ``--backend replay:FILE``."""

    name: str

    @property
    def native_tools(self) -> bool:
        """Tool calls travel in the API's own fields (else as markup in the text)."""
        return native_tools(self.tool_format)

    @property
    def rescue_mode(self) -> RescueMode:
        """``rescue`` as set, else ``auto`` for a native-tools backend on a ``base_url``
        that is not its provider's own service (a local or third-party server, where a
        missing tool-call parser leaks calls into the text), else ``off``."""
        if self.rescue is not None:
            return self.rescue
        known = profile(self.provider)
        if known is None or self.base_url is None or not self.native_tools:
            return "off"
        return "off" if _hostname(self.base_url) == _hostname(known.default_url) else "auto"

    @property
    def native_search(self) -> bool:
        """The provider runs a web search itself: Anthropic's ``web_search``, the
        Responses ``web_search`` tool, Gemini's ``google_search``; its profile says for
        which models (Gemini before 3 refuses it beside function declarations)."""
        known = profile(self.provider)
        return known is not None and self.native_tools and known.searches_natively(self.model)

    def search_route(self, web: WebConfig) -> SearchRoute | None:
        """The one decision of how this backend's model searches (docs/agent.md,
        "WebSearch"): ``search = "searxng" | "brave" | "tavily"``: toolwire's
        ``WebSearch``; ``native``: the provider's own; unset: the provider's own on its
        own service (a ``base_url`` server may not have it). None: no search offered."""
        if web.search is not None and web.search != "native":
            return "tool"
        if not self.native_search:
            return None
        if web.search is None and self.base_url is not None:
            return None
        return "native"

    @property
    def takes_images(self) -> bool:
        """Images reach the model: ``vision``, and native tools (a text-markup history
        has no place for an image)."""
        return self.vision and self.native_tools

    def api_key(self, environ: Mapping[str, str] | None = None) -> str | None:
        """The key, read from the named environment variable, else the key ``toolwire
        login`` stored for that variable (None when neither has one)."""
        if self.api_key_env is None:
            return None
        env = os.environ if environ is None else environ
        return env.get(self.api_key_env) or stored_key(self.api_key_env, env)


@lru_cache(maxsize=64)
def _hostname(url: str) -> str | None:
    """``url``'s host (``rescue_mode`` asks on every request the proxy sends)."""
    return urlsplit(url).hostname


class ConfigFile(Table):
    """The whole file."""

    default_backend: NonEmpty | None = None
    mode: Mode | None = None
    profile: Profile | None = None
    backends: dict[str, BackendTable] = Field(default_factory=dict)
    limits: LimitsConfig = Field(default_factory=LimitsConfig)
    handoff: HandoffConfig = Field(default_factory=HandoffConfig)
    tools: ToolsConfig = Field(default_factory=ToolsConfig)
    compaction: CompactionConfig = Field(default_factory=CompactionConfig)
    checkpoints: CheckpointsConfig = Field(default_factory=CheckpointsConfig)
    subagents: SubagentsConfig = Field(default_factory=SubagentsConfig)
    acp: AcpConfig = Field(default_factory=AcpConfig)
    proxy: dict[str, Any] = Field(default_factory=dict)
    """Read by ``toolwire proxy`` (``toolwire.proxy.settings``)."""
    mcp_servers: dict[str, McpServerTable] = Field(default_factory=dict)
    """``[mcp_servers.NAME]``: MCP servers every session starts (``toolwire.config.mcp``)."""


def validate(model: type[_T], data: Mapping[str, Any], where: str, *section: str) -> _T:
    """``data`` (the table at ``section`` of the file ``where``) as ``model``, or a
    one-line ``ConfigError``."""
    try:
        return model.model_validate(data)
    except ValidationError as e:
        raise explain(e, model, where, section) from None


__all__ = [
    "AcpConfig",
    "BackendConfig",
    "BackendTable",
    "CheckpointsConfig",
    "CompactionConfig",
    "ConfigError",
    "ConfigFile",
    "HandoffConfig",
    "LimitsConfig",
    "PriceTable",
    "SearchRoute",
    "SubagentsConfig",
    "Table",
    "ToolsConfig",
    "validate",
]
