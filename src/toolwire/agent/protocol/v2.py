"""ACP v2 beside v1 on one connection: the v2 draft's requests and answers at the wire.

The official Python SDK routes v1 only. A client that asks for protocol version 2 in
``initialize`` (and ``[acp] v2`` on) gets 2, and from then on this module sits in the
transport: each v2 request is handed to the SDK in its v1 shape, each answer and request
of ours goes out in its v2 shape, and every ``session/update`` line is rendered by the
update engine's v2 renderer (``toolwire.updates.v2``). A client that asks for 1 never
meets it: its connection is v1, byte for byte as before.

What differs in v2, and where it is handled here:

* ``initialize``: ``info`` and ``capabilities`` (not ``clientInfo``/``clientCapabilities``);
  v2 has no client file system or terminals, so the agent reads files and runs commands
  itself; what v2 does have is kept (``capabilities_v1``): ``auth.terminal`` (the
  ``login`` method is offered) and ``elicitation`` (an MCP server's questions are asked);
* ``auth/login`` is v1's ``authenticate``; ``auth/logout`` forgets the keys ``toolwire
  login`` stored (v2 requires it when auth methods are offered);
* ``session/prompt`` answers the user message's ``messageId``; the turn's progress is
  ``state_update`` (``running`` when accepted, ``requires_action`` while a permission
  waits, ``idle`` with the stop reason before the answer), and the prompt is echoed as a
  ``user_message`` under that id;
* ``session/resume`` with ``replayFrom: {"type": "start"}`` replays the transcript (v1's
  ``session/load``); any other cursor is answered -32602 here, as the schema requires;
* ``session/request_permission`` carries a ``title`` and the call as its ``subject``;
  ``elicitation/create``'s form schema says its ``type``;
* config options are named by ``configId``; modes are one of them (no mode methods).
"""

from __future__ import annotations

import itertools
import json
import logging
from collections.abc import Callable
from typing import Any, Final

from toolwire.agent.protocol.handshake_v2 import capabilities_v1, initialize_result_v2
from toolwire.updates.v2 import (
    V2,
    NoV2FormError,
    V2Renderer,
    content_v2,
    options_v2,
    state_update,
    user_message,
)
from toolwire.updates.wire import encode

log = logging.getLogger("toolwire.agent")

#: Answers whose config options are renamed (``id`` -> ``configId``).
_WITH_OPTIONS: Final = frozenset(
    {"session/new", "session/load", "session/resume", "session/set_config_option"}
)


def wants_v2(message: dict[str, Any]) -> bool:
    """``message`` is an ``initialize`` asking for protocol version 2 or later."""
    params = message.get("params")
    version = params.get("protocolVersion") if isinstance(params, dict) else None
    return message.get("method") == "initialize" and type(version) is int and version >= V2


#: What ``auth/logout`` reaches the SDK as (an extension method the agent serves).
LOGOUT_METHOD: Final = "_auth/logout"
#: v2 methods the SDK knows by another name.
_RENAMED: Final = {"auth/login": "authenticate", "auth/logout": LOGOUT_METHOD}


class V2Wire:
    """One connection's v2 translation (inactive until a v2 ``initialize``)."""

    def __init__(self, write: Callable[[bytes], None]) -> None:
        self._write = write
        self.active = False
        self._asked: dict[Any, tuple[str, str | None]] = {}  # client id -> method, session
        self._ours: dict[Any, str] = {}  # our permission requests' ids -> session
        self._renderers: dict[str, V2Renderer] = {}
        self._users = itertools.count(1)
        self._prompts: dict[Any, str] = {}  # prompt request id -> user message id
        self._client: dict[str, Any] = {}  # the client's capabilities, in v1's words

    # -- from the client ----------------------------------------------------------

    def answered_early(self, message: dict[str, Any]) -> dict[str, Any]:
        """A v2 ``initialize`` already answered (``toolwire.agent.launch``): the wire is
        v2 from now on; its params in v1 shape, for the agent to take in."""
        translated = self._initialize(message)
        self._asked.pop(message.get("id"), None)
        return translated

    def incoming(self, message: dict[str, Any]) -> dict[str, Any] | None:
        """A client message in the v1 shape the SDK routes; None when it was answered here
        (an unknown ``replayFrom`` cursor)."""
        if wants_v2(message):
            return self._initialize(message)
        if not self.active:
            return message
        method = message.get("method")
        if method is None:
            if message.get("id") in self._ours:
                self._state(self._ours.pop(message["id"]), "running")
            return message
        raw = message.get("params")
        params: dict[str, Any] = raw if isinstance(raw, dict) else {}
        session = params.get("sessionId") if isinstance(params.get("sessionId"), str) else None
        if "id" in message:
            self._asked[message["id"]] = (method, session)
        if method in ("session/new", "session/resume") and "mcpServers" not in params:
            params = {**params, "mcpServers": []}
        if method == "session/resume" and params.get("replayFrom") is not None:
            return self._replay(message, params)
        if method in _RENAMED:  # v1's authenticate by the same method id; logout
            return {**message, "method": _RENAMED[method], "params": params}
        if method == "session/set_config_option" and params.get("type") == "id":
            params = {k: v for k, v in params.items() if k != "type"}
        if method == "session/prompt" and session is not None and "id" in message:
            self._accept(message["id"], session, params.get("prompt") or [])
        return {**message, "params": params}

    def _initialize(self, message: dict[str, Any]) -> dict[str, Any]:
        self.active = True
        asked = message["params"]
        self._client = capabilities_v1(asked.get("capabilities"))
        v1 = {
            "protocolVersion": 1,
            "clientInfo": asked.get("info") or {"name": "unknown", "version": "unknown"},
            "clientCapabilities": self._client,
        }
        if "_meta" in asked:
            v1["_meta"] = asked["_meta"]
        self._asked[message["id"]] = ("initialize", None)
        return {**message, "params": v1}

    def _replay(self, message: dict[str, Any], params: dict[str, Any]) -> dict[str, Any] | None:
        """A resume with replay is v1's load (the answer is still the resume's,
        ``_answer``); a cursor toolwire does not know is -32602 (the schema: never another
        cursor, never a resume without the replay asked for), answered here."""
        cursor = params["replayFrom"]
        if isinstance(cursor, dict) and cursor.get("type") == "start":
            rest = {k: v for k, v in params.items() if k != "replayFrom"}
            return {**message, "method": "session/load", "params": rest}
        self._asked.pop(message.get("id"), None)
        kind = cursor.get("type") if isinstance(cursor, dict) else cursor
        detail = f"replayFrom type {kind!r} is not supported; use {{'type': 'start'}}"
        error = {"code": -32602, "message": "Invalid params", "data": {"replayFrom": detail}}
        if "id" in message:
            answer = {"jsonrpc": "2.0", "id": message["id"], "error": error}
            self._write((encode(answer) + "\n").encode("ascii"))
        return None

    def _accept(self, request: Any, session: str, prompt: list[Any]) -> None:
        """The prompt is accepted: its ``user_message``, then ``running``."""
        message_id = f"{session}-u{next(self._users)}"
        self._prompts[request] = message_id
        self._update(session, user_message(message_id, prompt))
        self._state(session, "running")

    # -- to the client --------------------------------------------------------------

    def outgoing(self, message: dict[str, Any]) -> dict[str, Any] | None:
        """One of our messages in v2 form (``None``: nothing to send)."""
        if not self.active:
            return message
        method = message.get("method")
        if method == "session/update":
            params = message["params"]
            for update in self._rendered(params["sessionId"], params["update"]):
                self._update(params["sessionId"], update)
            return None
        if method == "session/request_permission":
            return self._permission(message)
        if method == "elicitation/create":
            return _elicitation(message)
        if method is None and "id" in message and message["id"] in self._asked:
            return self._answer(message)
        return message

    def line(self, line: bytes) -> bytes:
        """A pre-encoded ``session/update`` line (the engine's, an outbox's) in v2."""
        if not self.active:
            return line
        message = json.loads(line)
        params = message["params"]
        session = params["sessionId"]
        updates = self._rendered(session, params["update"])
        return b"".join(_update_line(session, u) for u in updates)

    def _rendered(self, session: str, update: dict[str, Any]) -> list[dict[str, Any]]:
        """The update in v2; one that has no v2 form is logged, never dropped unsaid."""
        try:
            return self.renderer(session).render(update)
        except NoV2FormError as exc:
            log.warning("session %s: %s", session, exc)
            return []

    def renderer(self, session: str) -> V2Renderer:
        """The session's v2 renderer (it remembers each card's content)."""
        found = self._renderers.get(session)
        if found is None:
            found = self._renderers[session] = V2Renderer(session)
        return found

    def _answer(self, message: dict[str, Any]) -> dict[str, Any]:
        method, session = self._asked.pop(message["id"])
        result = message.get("result")
        if not isinstance(result, dict):
            self._prompts.pop(message["id"], None)
            return message
        if method == "initialize":
            result = initialize_result_v2(self._client)
        elif method == "session/prompt" and session is not None:
            self._state(session, "idle", result.get("stopReason"))
            result = {"messageId": self._prompts.pop(message["id"], f"{session}-u0")}
        elif method in _WITH_OPTIONS:
            result = {k: v for k, v in result.items() if k not in ("modes", "models")}
            if "configOptions" in result:
                result["configOptions"] = options_v2(result["configOptions"])
        return {**message, "result": result}

    def _permission(self, message: dict[str, Any]) -> dict[str, Any]:
        params = message["params"]
        session = params["sessionId"]
        call = dict(params["toolCall"])
        if "content" in call:
            call["content"] = content_v2(call["content"])
        title = call.get("title") or "Allow this tool call?"
        self._ours[message["id"]] = session
        self._state(session, "requires_action")
        v2 = {
            "sessionId": session,
            "title": str(title),
            "subject": {"type": "tool_call", "toolCall": call},
            "options": params["options"],
        }
        return {**message, "params": v2}

    def _state(self, session: str, state: Any, stop: str | None = None) -> None:
        self._update(session, state_update(state, stop))

    def _update(self, session: str, update: Any) -> None:
        self._write(_update_line(session, update))


def _elicitation(message: dict[str, Any]) -> dict[str, Any]:
    """v2 requires a form's ``requestedSchema.type`` (``"object"``), which v1 lets go
    unsaid and the SDK leaves out (it drops defaults)."""
    params = message["params"]
    schema = params.get("requestedSchema")
    if not isinstance(schema, dict) or "type" in schema:
        return message
    return {**message, "params": {**params, "requestedSchema": {"type": "object", **schema}}}


def _update_line(session: str, update: Any) -> bytes:
    message = {
        "jsonrpc": "2.0",
        "method": "session/update",
        "params": {"sessionId": session, "update": update},
    }
    return (encode(message) + "\n").encode("ascii")


__all__ = ["LOGOUT_METHOD", "V2Wire", "capabilities_v1", "initialize_result_v2", "wants_v2"]
