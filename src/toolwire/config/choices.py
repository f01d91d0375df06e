"""The fixed sets of toolwire's configuration, each one ``Literal`` type with one owner.

Every other module imports them from here; ``typing.get_args`` gives the tuple where
one is needed. This module imports nothing but ``typing``, the provider profiles' wire
formats (``toolwire.providers``, pure data) and the text formats' registry
(``toolwire.decode.textformats``, names only until one is used), so the pure update
engine (``toolwire.updates``) can use it without loading the config file's schema.
"""

from __future__ import annotations

from typing import Final, Literal, TypeAlias, TypeVar, get_args

from toolwire.decode.textformats import TEXT_FORMATS, canonical
from toolwire.providers import WIRE_FORMATS, WireFormat

_C = TypeVar("_C", bound=str)

Mode: TypeAlias = Literal["ask", "accept-edits", "read-only", "plan", "bypass"]
"""Who decides whether an edit or a command runs (``toolwire.agent.session.permissions``)."""
MODES: Final[tuple[Mode, ...]] = get_args(Mode)
DEFAULT_MODE: Final[Mode] = "ask"
SESSION_ONLY_MODES: Final[tuple[Mode, ...]] = ("bypass",)
"""Modes a user picks for one session, never a default (config file, env, ``--mode``)."""

ThoughtLevel: TypeAlias = Literal["off", "low", "medium", "high"]
"""How much the model is asked to think (``toolwire.backends``: mapped per provider)."""
THOUGHT_LEVELS: Final[tuple[ThoughtLevel, ...]] = get_args(ThoughtLevel)
DEFAULT_THOUGHT_LEVEL: Final[ThoughtLevel] = "off"

Profile: TypeAlias = Literal["minimal", "verbose", "full"]
"""How much of a tool call each update repeats (``toolwire.updates.profiles``)."""
PROFILES: Final[tuple[Profile, ...]] = get_args(Profile)
DEFAULT_PROFILE: Final[Profile] = "minimal"

PassthroughLevel: TypeAlias = Literal["full", "core", "off"]
"""How ``toolwire proxy`` forwards a client's Messages body (``toolwire.proxy.passthrough``)."""
PASSTHROUGH_LEVELS: Final[tuple[PassthroughLevel, ...]] = get_args(PassthroughLevel)

RescueMode: TypeAlias = Literal["auto", "off"]
"""Whether tool calls a server leaked into the text become calls (``toolwire.decode.rescue``)."""
RESCUE_MODES: Final[tuple[RescueMode, ...]] = get_args(RescueMode)


Provider: TypeAlias = Literal[WireFormat, "replay"]
"""A backend's ``provider``: a wire format, or ``replay`` for a recorded cassette."""
PROVIDERS: Final[tuple[Provider, ...]] = get_args(Provider)

ToolFormat: TypeAlias = str
"""Where a backend's tool calls are: ``native`` (the API's own fields), or the name of a
markup in the text (``toolwire.decode.textformats``, the registry: vLLM's parser names)."""
TOOL_FORMATS: Final[tuple[ToolFormat, ...]] = ("native", *TEXT_FORMATS)


def known_tool_format(value: object) -> ToolFormat | None:
    """``value`` as a tool format's canonical name (any alias or spelling), else None."""
    if not isinstance(value, str):
        return None
    return "native" if value.strip().lower() == "native" else canonical(value)


def native_tools(tool_format: ToolFormat) -> bool:
    """Tool calls travel in the API's own fields (else as markup in the text)."""
    return tool_format == "native"


def one_of(options: tuple[_C, ...], value: object) -> _C | None:
    """``value`` as one of ``options`` (typed as their ``Literal``), None when it is not
    one: how text from a user, a file or the store becomes a typed choice."""
    for option in options:
        if value == option:
            return option
    return None


# ``[handoff]`` defaults: what a new backend receives after a switch (docs/handoff.md).
DEFAULT_MAX_TOOL_CONTEXT_CHARS: Final = 40_000
DEFAULT_MAX_TOOL_RESULT_CHARS: Final = 2_000
DEFAULT_KEEP_LAST: Final = 2

# ``[limits]`` defaults, here so the runtime types (``tools.ToolLimits``,
# ``backends.HTTPSettings``) default to them without loading the config schema.
DEFAULT_CONNECT_TIMEOUT: Final = 10.0
DEFAULT_READ_TIMEOUT: Final = 120.0
DEFAULT_MAX_RETRIES: Final = 3
DEFAULT_COMMAND_TIMEOUT: Final = 120.0
DEFAULT_MAX_TOOL_OUTPUT_BYTES: Final = 30_000

__all__ = [
    "DEFAULT_COMMAND_TIMEOUT",
    "DEFAULT_CONNECT_TIMEOUT",
    "DEFAULT_KEEP_LAST",
    "DEFAULT_MAX_RETRIES",
    "DEFAULT_MAX_TOOL_CONTEXT_CHARS",
    "DEFAULT_MAX_TOOL_OUTPUT_BYTES",
    "DEFAULT_MAX_TOOL_RESULT_CHARS",
    "DEFAULT_MODE",
    "DEFAULT_PROFILE",
    "DEFAULT_READ_TIMEOUT",
    "DEFAULT_THOUGHT_LEVEL",
    "MODES",
    "PASSTHROUGH_LEVELS",
    "PROFILES",
    "PROVIDERS",
    "RESCUE_MODES",
    "SESSION_ONLY_MODES",
    "THOUGHT_LEVELS",
    "TOOL_FORMATS",
    "WIRE_FORMATS",
    "Mode",
    "PassthroughLevel",
    "Profile",
    "Provider",
    "RescueMode",
    "ThoughtLevel",
    "ToolFormat",
    "WireFormat",
    "known_tool_format",
    "native_tools",
    "one_of",
]
