"""The JSON-RPC 2.0 envelope of an incoming message, checked before the SDK sees it.

The official SDK (``acp`` 0.12.1) trusts the envelope: a list as an ``id`` crashes its
receive loop once a request of ours is pending (the agent then stops serving), an
``error`` that is not an object does the same, ``"method": null`` or an ``id`` alone is
taken as an answer to one of our requests, and a ``method`` that is not a string is
answered ``-32601``/``-32603``. JSON-RPC 2.0 (https://www.jsonrpc.org/specification)
calls all of these "Invalid Request" (``-32600``). ``check`` says what is wrong, so that
the transport can answer that and keep serving; nothing that passes can upset the SDK.

The rules, from the specification's "Request object" and "Response object":

* ``method``, when present, is a string; ``params``, when present, an object or an array
  (``null`` is tolerated: the SDK itself sends it for a request without params);
* ``id``, when present, is a string, an integer, a finite number or ``null`` (never
  ``true``, a list or an object);
* a message without ``method`` is a response to one of our requests: an ``id`` and
  exactly one of ``result`` and ``error``, the error an object with an integer ``code``
  and a string ``message`` (``"error": null`` beside a result is tolerated: JSON-RPC 1.0
  peers send it);
* nesting is at most ``MAX_DEPTH`` deep (an ACP message is a few levels deep; the SDK and
  the encoder recurse, so a deeper one would fail later, out of reach of an answer).
"""

from __future__ import annotations

import math
from typing import Any, Final

#: Deepest accepted nesting of objects and arrays (ACP messages use about ten levels).
MAX_DEPTH: Final = 64


def check(message: dict[str, Any]) -> str | None:
    """What makes ``message`` (a parsed JSON object) invalid JSON-RPC, or ``None``."""
    if _too_deep(message):
        return f"objects and arrays are nested deeper than {MAX_DEPTH} levels"
    if "id" in message and not valid_id(message["id"]):
        return "the id must be a string, a number or null"
    if "method" in message:
        if not isinstance(message["method"], str):
            return "the method must be a string"
        if not isinstance(message.get("params", {}), dict | list | None):
            return "params must be an object or an array"
        return None
    if "id" not in message:
        return "a message needs a method (a request, a notification) or an id (a response)"
    has_result, has_error = "result" in message, message.get("error") is not None
    if not has_result and not has_error:
        return "an id needs a method (a request) or a result or an error (a response)"
    # JSON-RPC 1.0 peers send both, the unused one null: tolerated (the SDK reads result).
    if has_result and has_error:
        return "a response has a result or an error, not both"
    if has_error and not _valid_error(message["error"]):
        return "a response's error is an object with an integer code and a string message"
    return None


def answers_us(message: dict[str, Any]) -> bool:
    """Whether an invalid ``message`` still reads as a response to one of our requests
    (a usable id, and a result or an error): that request must then fail, not wait."""
    has_id = message.get("id") is not None and valid_id(message["id"])
    return "method" not in message and has_id and ("result" in message or "error" in message)


def reply_id(message: dict[str, Any]) -> Any:
    """The id to answer an invalid ``message`` with: a request's own, if it is valid.

    Anything else gets ``null`` (JSON-RPC: the id could not be determined); an answer
    to a response would name one of *our* request ids to the client."""
    if "method" in message and valid_id(message.get("id")):
        return message.get("id")
    return None


def valid_id(value: Any) -> bool:
    """A JSON-RPC id: a string, an integer, a finite number, or null."""
    if value is None or isinstance(value, str):
        return True
    if isinstance(value, bool):
        return False
    if isinstance(value, int):
        return True
    return isinstance(value, float) and math.isfinite(value)


def _valid_error(error: Any) -> bool:
    return (
        isinstance(error, dict)
        and type(error.get("code")) is int
        and isinstance(error.get("message"), str)
    )


def _too_deep(message: dict[str, Any]) -> bool:
    """Nesting over ``MAX_DEPTH``, found without recursion (a walk of the containers)."""
    stack: list[tuple[Any, int]] = [(message, 1)]
    while stack:
        value, depth = stack.pop()
        if depth > MAX_DEPTH:
            return True
        children = value.values() if isinstance(value, dict) else value
        stack.extend((v, depth + 1) for v in children if isinstance(v, dict | list))
    return False


__all__ = ["MAX_DEPTH", "answers_us", "check", "reply_id", "valid_id"]
