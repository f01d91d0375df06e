"""One profile per provider: what toolwire knows about each wire format, as data.

The registry below is the one list of the wire formats toolwire speaks: ``config``
accepts a ``provider`` it holds, ``backends`` builds the class its profile names,
``decode`` decodes with the decoder it names, and the facts each package used to keep in
a table of its own (key variables, default URLs, image limits, windows, native search,
thinking budgets, how usage counts, telemetry names) are read from the profile.
docs/architecture.md, "Adding a wire format", is the recipe.
"""

from __future__ import annotations

import importlib
from typing import Final, Literal, TypeAlias, cast, get_args

from toolwire.providers import compatible
from toolwire.providers._profile import Detected, Family, ImageLimits, NameRule, ProviderProfile

WireFormat: TypeAlias = Literal["anthropic", "openai-chat", "openai-responses", "gemini"]
"""The streamed body formats toolwire decodes (a cassette's ``provider``)."""
WIRE_FORMATS: Final[tuple[WireFormat, ...]] = get_args(WireFormat)

_MODULES: Final = ("anthropic", "openai_chat", "openai_responses", "gemini")
"""The profile modules, in the order toolwire lists and detects their providers."""


def _profile_of(module: str) -> ProviderProfile:
    return cast(ProviderProfile, importlib.import_module(f"{__name__}.{module}").PROFILE)


PROFILES: Final[dict[str, ProviderProfile]] = {p.wire_format: p for p in map(_profile_of, _MODULES)}
"""Every wire format's profile, by its name."""

COMPATIBLE_FAMILIES: Final = compatible.FAMILIES


def key_variables() -> tuple[str, ...]:
    """Every key variable a registered provider reads: what a command must never see."""
    names = (n for p in PROFILES.values() for n in (p.key_env, *p.detected_key_envs()))
    return tuple(dict.fromkeys(n for n in names if n is not None))


def profile(wire_format: str) -> ProviderProfile | None:
    """The profile of ``wire_format``; None for one toolwire does not speak (``replay``)."""
    return PROFILES.get(wire_format)


__all__ = [
    "COMPATIBLE_FAMILIES",
    "PROFILES",
    "WIRE_FORMATS",
    "Detected",
    "Family",
    "ImageLimits",
    "NameRule",
    "ProviderProfile",
    "WireFormat",
    "key_variables",
    "profile",
]
