"""What the agent answers, as the SDK's models: ``initialize``, sessions, modes, options."""

from __future__ import annotations

from acp import PROTOCOL_VERSION
from acp.schema import (
    AgentCapabilities,
    Implementation,
    InitializeResponse,
    McpCapabilities,
    PromptCapabilities,
    SessionAdditionalDirectoriesCapabilities,
    SessionCapabilities,
    SessionCloseCapabilities,
    SessionConfigOptionBoolean,
    SessionConfigOptionSelect,
    SessionInfo,
    SessionListCapabilities,
    SessionModeState,
    SessionResumeCapabilities,
)

from toolwire import __version__
from toolwire.agent.session import Session, config_options, mode_state
from toolwire.agent.store import SessionRecord
from toolwire.config import Config


def initialize_response() -> InitializeResponse:
    """What ``initialize`` answers: only capabilities that work.

    Advertised: ``loadSession``; ``session/list``, ``resume``, ``close`` and
    ``additionalDirectories``; embedded context in prompts. Not: images, audio, MCP.
    """
    sessions = SessionCapabilities(
        list=SessionListCapabilities(),
        resume=SessionResumeCapabilities(),
        close=SessionCloseCapabilities(),
        additional_directories=SessionAdditionalDirectoriesCapabilities(),
    )
    return InitializeResponse(
        protocol_version=PROTOCOL_VERSION,  # v1: the only stable version to agree on
        agent_capabilities=AgentCapabilities(
            load_session=True,
            prompt_capabilities=PromptCapabilities(image=False, audio=False, embedded_context=True),
            mcp_capabilities=McpCapabilities(http=False, sse=False),
            session_capabilities=sessions,
        ),
        agent_info=Implementation(name="toolwire", title="toolwire", version=__version__),
        auth_methods=[],
    )


def session_infos(records: list[SessionRecord]) -> list[SessionInfo]:
    """Stored sessions as ``session/list`` entries."""
    return [
        SessionInfo(
            session_id=r.id,
            cwd=r.cwd,
            title=r.title,
            updated_at=r.updated_at_iso,
            additional_directories=list(r.additional_dirs) or None,
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
