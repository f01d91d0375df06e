"""What a v2 ``initialize`` answers, as plain JSON: light enough to answer it early.

``toolwire.agent.launch`` answers a v2 ``initialize`` before the SDK has loaded, as it
does v1's; this module imports nothing heavier than ``handshake``. The answer is the v1
one in v2's words, for the capabilities the client advertised (``capabilities_v1``).
"""

from __future__ import annotations

from typing import Any, Final

from toolwire.agent.protocol.handshake import initialize_result

#: The protocol version of the v2 draft.
V2_VERSION: Final = 2


def capabilities_v1(capabilities: Any) -> dict[str, Any]:
    """A v2 client's ``capabilities`` as v1 ``clientCapabilities``: ``auth.terminal``
    (``{}`` in v2, ``true`` in v1) and ``elicitation`` kept; no file system, no
    terminals (v2 has none)."""
    caps = capabilities if isinstance(capabilities, dict) else {}
    v1: dict[str, Any] = {}
    auth = caps.get("auth")
    if isinstance(auth, dict) and isinstance(auth.get("terminal"), dict):
        v1["auth"] = {"terminal": True}
    elicitation = caps.get("elicitation")
    if isinstance(elicitation, dict):
        modes = {k: v for k, v in elicitation.items() if k in ("form", "url") and v is not None}
        if modes:
            v1["elicitation"] = modes
    return v1


def initialize_result_v2(client_capabilities: Any = None) -> dict[str, Any]:
    """The v1 answer's capabilities in v2's words (``session.*``, ``info``), for a client
    with these v1 ``clientCapabilities`` (``capabilities_v1``)."""
    v1 = initialize_result(client_capabilities)
    caps = v1["agentCapabilities"]
    prompt = caps["promptCapabilities"]
    session: dict[str, Any] = {
        "prompt": {k: {} for k in ("image", "embeddedContext") if prompt.get(k)},
        "mcp": {"stdio": {}, "http": {}},
        "delete": {},
        "additionalDirectories": {},
    }
    return {
        "protocolVersion": V2_VERSION,
        "info": v1["agentInfo"],
        "capabilities": {"session": session, "_meta": caps["_meta"]},
        "authMethods": [_auth_method(m) for m in v1["authMethods"]],
    }


def _auth_method(v1: dict[str, Any]) -> dict[str, Any]:
    """A v1 auth method in v2's words: ``methodId`` for ``id``, ``type`` always given."""
    rest = {k: v for k, v in v1.items() if k not in ("id", "type")}
    return {"type": v1.get("type", "agent"), "methodId": v1["id"], **rest}


__all__ = ["V2_VERSION", "capabilities_v1", "initialize_result_v2"]
