"""What ``initialize`` answers, as plain JSON: no SDK needed to say it.

The answer depends on nothing the client sends (ACP v1 is the only stable version to
agree on), so ``toolwire.agent.launch`` can write it before the SDK's models have loaded,
and ``toolwire.agent.responses`` builds the SDK's model from the same dictionary.
``session_caps`` and ``subagents_cap`` read what the SDK's model of the client's
``initialize`` request does not know yet, from the raw request.
"""

from __future__ import annotations

from typing import Any, Final

from toolwire import __version__
from toolwire.agent.protocol.auth_methods import auth_methods

#: The ACP protocol version toolwire speaks (the SDK's ``acp.PROTOCOL_VERSION``).
PROTOCOL_VERSION: Final = 1
#: The extension method behind ``/rewind`` (``agent.rewind_method``), as a client sends it.
REWIND_METHOD: Final = "_toolwire/session/rewind"


def initialize_result(client_capabilities: Any = None) -> dict[str, Any]:
    """Only capabilities that work: ``loadSession``; ``session/list``, ``resume``,
    ``close``, ``delete`` and ``additionalDirectories``; embedded context in prompts; MCP
    servers over stdio (always), HTTP and SSE; images; in ``_meta``, the rewind extension
    method. Not: audio. ``authMethods`` depend on the client's capabilities (raw JSON)."""
    return {
        "protocolVersion": PROTOCOL_VERSION,
        "agentCapabilities": {
            "loadSession": True,
            "promptCapabilities": {"image": True, "audio": False, "embeddedContext": True},
            "mcpCapabilities": {"http": True, "sse": True},
            # Unstable: the editor may point backends elsewhere (providers/*).
            "providers": {},
            "sessionCapabilities": {
                "list": {},
                "resume": {},
                "close": {},
                "delete": {},
                "additionalDirectories": {},
            },
            # Extensions live under _meta (ACP's extensibility rule): a client that wants
            # a rewind button finds the method here.
            "_meta": {"toolwire": {"rewind": {"method": REWIND_METHOD, "version": 1}}},
        },
        "agentInfo": {"name": "toolwire", "title": "toolwire", "version": __version__},
        "authMethods": auth_methods(client_capabilities),
        # Steering (the ``_session/steering`` contract of claude-agent-acp and codex-acp):
        # a message sent while a turn runs joins it.
        "_meta": {"steering": {"supported": True}},
    }


def early_answer(message: dict[str, Any]) -> dict[str, Any] | None:
    """The response to ``message`` if it is a plain ``initialize`` request, else ``None``
    (anything unusual goes to the SDK, which answers it as it always does)."""
    params = message.get("params")
    if (
        message.get("jsonrpc") != "2.0"
        or message.get("method") != "initialize"
        or not isinstance(message.get("id"), int | str)
        or not isinstance(params, dict)
        # Any other version (v2, or one not spoken) is decided with the configuration
        # loaded: ``[acp] v2`` says which is the highest spoken (``spoken_version``).
        or params.get("protocolVersion") != PROTOCOL_VERSION
        or type(params["protocolVersion"]) is not int
        or not isinstance(params.get("clientCapabilities", {}), dict)
        or not isinstance(params.get("clientInfo", {}), dict)
    ):
        return None
    caps = params.get("clientCapabilities")
    return {"jsonrpc": "2.0", "id": message["id"], "result": initialize_result(caps)}


def spoken_version(message: dict[str, Any], highest: int) -> dict[str, Any]:
    """``message``, an ``initialize`` asking for an integer version toolwire does not speak
    (below 1, above ``highest``), as one asking for ``highest``: ACP's rule is that the
    agent then answers the latest version it speaks (and the client decides whether to go
    on). Anything else is returned as is (the SDK reads a version string itself)."""
    params = message.get("params")
    if message.get("method") != "initialize" or not isinstance(params, dict):
        return message
    version = params.get("protocolVersion")
    if type(version) is not int or PROTOCOL_VERSION <= version <= highest:
        return message
    return {**message, "params": {**params, "protocolVersion": highest}}


def session_caps(message: dict[str, Any]) -> tuple[bool, bool]:
    """``clientCapabilities.session.compaction`` and ``.notices`` from the raw request
    (ACP 1.25; the SDK's model does not know them yet). ``{}`` advertises, null does not."""
    params = message.get("params")
    caps = params.get("clientCapabilities") if isinstance(params, dict) else None
    session = caps.get("session") if isinstance(caps, dict) else None
    if not isinstance(session, dict):
        return False, False
    return isinstance(session.get("compaction"), dict), isinstance(session.get("notices"), dict)


def subagents_cap(message: dict[str, Any]) -> bool:
    """``clientCapabilities.subagents`` (unstable; ``{}`` advertises, null does not)."""
    params = message.get("params")
    caps = params.get("clientCapabilities") if isinstance(params, dict) else None
    return isinstance(caps, dict) and isinstance(caps.get("subagents"), dict)


__all__ = [
    "PROTOCOL_VERSION",
    "REWIND_METHOD",
    "early_answer",
    "initialize_result",
    "session_caps",
    "spoken_version",
    "subagents_cap",
]
