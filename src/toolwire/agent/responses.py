"""What the agent answers, as the SDK's models: ``initialize``, sessions, modes, options."""

from __future__ import annotations

from typing import Any

from acp.schema import (
    InitializeResponse,
    SessionConfigOptionBoolean,
    SessionConfigOptionSelect,
    SessionInfo,
    SessionModeState,
)

from toolwire.agent.protocol.handshake import initialize_result
from toolwire.agent.session.options import config_options, mode_state
from toolwire.agent.session.state import Session
from toolwire.agent.store.database import SessionRecord
from toolwire.config import Config


def initialize_response(client_capabilities: Any = None) -> InitializeResponse:
    """What ``initialize`` answers (``handshake.initialize_result``), as the SDK's model."""
    return InitializeResponse.model_validate(initialize_result(client_capabilities))


def session_infos(records: list[SessionRecord]) -> list[SessionInfo]:
    """Stored sessions as ``session/list`` entries."""
    return [
        SessionInfo(
            session_id=r.id,
            cwd=r.cwd,
            title=r.title,
            updated_at=r.updated_at_iso,
            additional_directories=list(r.additional_dirs) or None,
            # A row read in part (``store.records``): the client may show it as damaged.
            field_meta={"toolwire": {"damaged": r.damaged}} if r.damaged else None,
        )
        for r in records
    ]


def options_model(
    session: Session, config: Config
) -> list[SessionConfigOptionSelect | SessionConfigOptionBoolean]:
    """The config options as SDK models (for responses)."""
    options = config_options(session, config)
    return [SessionConfigOptionSelect.model_validate(o) for o in options]


def state_model(session: Session) -> SessionModeState:
    """The mode state as an SDK model (for responses)."""
    return SessionModeState.model_validate(mode_state(session))


__all__ = ["initialize_response", "options_model", "session_infos", "state_model"]
