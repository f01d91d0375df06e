"""Claude Code's hooks, read and judged without running anything.

The settings files teams already keep (``.claude/settings.json`` and friends) are read
by ``settings``; ``match`` says which groups a tool name selects, as Claude Code does;
``protocol`` builds the JSON a hook gets on standard input and turns what hooks answered
(exit codes, standard output and error) into one ``Verdict``; ``trust`` remembers which
project files the user trusted, by content hash. The agent runs the commands
(``toolwire.agent.session.hooks``); nothing here starts a process.
"""

from __future__ import annotations

from toolwire.hooks.match import matches
from toolwire.hooks.protocol import Outcome, Verdict, hook_input, verdict
from toolwire.hooks.settings import (
    DEFAULT_TIMEOUT,
    EVENTS,
    Event,
    Group,
    HookCommand,
    Source,
    read_sources,
)
from toolwire.hooks.trust import HookState, TrustStore, default_trust_path

__all__ = [
    "DEFAULT_TIMEOUT",
    "EVENTS",
    "Event",
    "Group",
    "HookCommand",
    "HookState",
    "Outcome",
    "Source",
    "TrustStore",
    "Verdict",
    "default_trust_path",
    "hook_input",
    "matches",
    "read_sources",
    "verdict",
]
