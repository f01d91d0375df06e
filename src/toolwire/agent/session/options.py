"""The session's config options and modes, in wire form.

The model is a config option (``id: "model"``, ``category: "model"``; ACP removed
``session/set_model``), its values the configured backends as ``NAME/MODEL`` (what a
harness's ``-m provider/model`` names: a detected backend is named after its provider),
the bare backend name accepted too; a change applies at the next prompt, with a handoff
(``switch``). The mode is offered both as ACP modes and as a
``category: "mode"`` option, kept in step, since the protocol is moving modes into config
options.
"""

from __future__ import annotations

from typing import Any, Final

from toolwire.agent.session.permissions import MODES
from toolwire.agent.session.state import Session
from toolwire.config import BackendConfig, Config
from toolwire.config.choices import ThoughtLevel


def config_options(session: Session, config: Config) -> list[dict[str, Any]]:
    """The full set of the session's config options, in wire form."""
    backends = [
        {
            "value": model_value(b),
            "name": f"{name} ({b.model})" if b.model else name,
            "description": _describe_backend(b),
        }
        for name, b in config.backends.items()
    ]
    modes = [{"value": k, "name": n, "description": d} for k, (n, d) in MODES.items()]
    return [
        {
            "id": "model",
            "name": "Model",
            "description": "The backend and model that answer; a change applies next prompt.",
            "category": "model",
            "type": "select",
            "currentValue": _current(session.model.pending, config),
            "options": backends,
        },
        {
            "id": "mode",
            "name": "Mode",
            "description": "What may run without asking.",
            "category": "mode",
            "type": "select",
            "currentValue": session.rules.mode,
            "options": modes,
        },
        {
            "id": THOUGHT_OPTION,
            "name": "Thinking",
            "description": "How much the model thinks before it answers; from the next request.",
            "category": "thought_level",
            "type": "select",
            "currentValue": thought_level(session, config),
            "options": [{"value": k, "name": n, "description": d} for k, (n, d) in _LEVELS.items()],
        },
    ]


THOUGHT_OPTION: Final = "thought_level"
"""The config option's id, also the key the choice is stored under (record config)."""
_LEVELS: Final[dict[str, tuple[str, str]]] = {
    "off": ("Off", "No extended thinking (the model's own default)."),
    "low": ("Low", "A short think first."),
    "medium": ("Medium", "Think it through."),
    "high": ("High", "Think long; slower and costs more."),
}


def thought_level(session: Session, config: Config) -> ThoughtLevel:
    """The session's level: the user's choice, else the chosen backend's default."""
    return session.model.thought or config.backend(session.model.pending).thought_level


def model_value(backend: BackendConfig) -> str:
    """The model option's value for ``backend``: ``NAME/MODEL`` (``NAME`` without one)."""
    return f"{backend.name}/{backend.model}" if backend.model else backend.name


def _current(name: str, config: Config) -> str:
    chosen = config.backends.get(name)
    return model_value(chosen) if chosen is not None else name


def backend_of(value: str, config: Config) -> str:
    """The backend a model option's value names (a backend name is one too); ``value``
    itself when none does, for the chooser to refuse with the names it knows."""
    if value in config.backends:
        return value
    return next((n for n, b in config.backends.items() if model_value(b) == value), value)


def _describe_backend(chosen: BackendConfig) -> str:
    provider, tool_format = chosen.provider, chosen.tool_format
    return (
        f"{provider} backend"
        if chosen.native_tools
        else f"{provider} backend, {tool_format} tool calls"
    )


def mode_state(session: Session) -> dict[str, Any]:
    """The ``SessionModeState`` of the session, in wire form."""
    available = [{"id": k, "name": n, "description": d} for k, (n, d) in MODES.items()]
    return {"currentModeId": session.rules.mode, "availableModes": available}


__all__ = [
    "THOUGHT_OPTION",
    "backend_of",
    "config_options",
    "mode_state",
    "model_value",
    "thought_level",
]
