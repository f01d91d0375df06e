"""The agent ``toolwire acp`` serves when its configuration cannot be loaded.

An editor shows the agent as ready once ``initialize`` is answered and shows the answers
to later requests, not the agent's stderr. So with a malformed file, an unknown key or a
bad option, ``toolwire acp`` does not exit: it answers ``initialize`` as usual and every
request that needs the configuration (``session/new``, ``load``, ``resume``, ``list``,
``authenticate``, a prompt...) with an error whose message is the configuration's one
line: the file, the line and the fix. The same line went to stderr at start-up.
"""

from __future__ import annotations

from typing import Any, Final

from acp.exceptions import RequestError
from acp.schema import ClientCapabilities, Implementation, InitializeResponse

from toolwire.agent.responses import initialize_response

#: JSON-RPC's "internal error": the request was fine, the agent cannot serve it.
CONFIG_ERROR_CODE: Final = -32603


class ConfigBrokenAgent:
    """Answers ``initialize``; everything else with the configuration error ``line``."""

    def __init__(self, line: str) -> None:
        self.line = line

    def on_connect(self, conn: Any) -> None:
        """Nothing to keep: this agent never calls the client."""

    def on_received(self, message: dict[str, Any]) -> None:
        """Nothing to read from what the client sends."""

    def on_sent(self, message: dict[str, Any]) -> None:
        """Nothing to open once an answer is written."""

    async def initialize(
        self,
        protocol_version: int,
        client_capabilities: ClientCapabilities | None = None,
        client_info: Implementation | None = None,
        **kwargs: Any,
    ) -> InitializeResponse:
        """The usual answer: the editor then asks for a session and shows the error."""
        caps = None
        if client_capabilities is not None:
            caps = client_capabilities.model_dump(mode="json", by_alias=True, exclude_none=True)
        return initialize_response(caps)

    async def refuse(self, *args: Any, **kwargs: Any) -> Any:
        """Any request that needs the configuration: the error the user must fix."""
        raise RequestError(CONFIG_ERROR_CODE, self.line, {"config": self.line})

    new_session = load_session = resume_session = list_sessions = refuse
    fork_session = close_session = authenticate = prompt = refuse
    set_session_mode = set_config_option = ext_method = refuse

    async def cancel(self, session_id: str, **kwargs: Any) -> None:
        """No session runs: nothing to cancel."""

    async def ext_notification(self, method: str, params: dict[str, Any]) -> None:
        """Ignored, as the protocol allows."""

    def busy(self) -> bool:
        """Never busy: no turn ever runs."""
        return False

    async def shutdown(self) -> None:
        """Nothing was started."""


__all__ = ["CONFIG_ERROR_CODE", "ConfigBrokenAgent"]
