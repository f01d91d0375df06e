"""``$/cancel_request``: the client cancels one of its requests by id (ACP "Cancellation").

The SDK runs each request in a task of its own and knows nothing of this notification,
so the agent keeps the books here:

* ``received`` sees every request as the transport reads it, before the SDK routes it,
  in the SDK's receive task. It notes the id of a cancellable request (a prompt, a
  ``session/load``) and sets ``_CURRENT`` to it: the SDK creates the handler's task right
  after, and a task starts with a copy of its creator's context, so the handler finds
  its own request id there (no other link exists between the two).
* ``guard`` runs the handler's work, cancellable: a ``$/cancel_request`` for its id
  cancels its task, and the request answers ``-32800 Request cancelled`` (one of the two
  answers the spec allows). A cancel that arrives before the handler started is kept,
  and the handler answers at once.
* A cancelled prompt is the agent's to end (as ``session/cancel``: ``stopReason:
  cancelled``), so ``cancel`` hands its session back instead of cancelling its task.

A cancel for an id that is finished or unknown changes nothing, as the spec asks.
"""

from __future__ import annotations

import asyncio
import functools
import json
from collections.abc import Awaitable, Callable, Coroutine
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any, Final, Protocol, TypeVar, cast

from acp.exceptions import RequestError

#: The method of the notification, as the spec names it.
CANCEL_REQUEST: Final = "$/cancel_request"
#: The requests a client may cancel this way (the long ones).
CANCELLABLE: Final = frozenset({"session/prompt", "session/load"})
#: JSON-RPC's code for a cancelled request.
REQUEST_CANCELLED: Final = -32800

_CURRENT: ContextVar[str | None] = ContextVar("toolwire_request", default=None)
_T = TypeVar("_T")


@dataclass
class _Pending:
    method: str
    session_id: str | None
    task: asyncio.Task[Any] | None = None
    cancelled: bool = False


class Requests:
    """The cancellable requests in flight, by id."""

    def __init__(self) -> None:
        self._pending: dict[str, _Pending] = {}

    def received(self, message: dict[str, Any]) -> None:
        """Transport hook: a message from the client, before the SDK routes it."""
        method = message.get("method")
        if not isinstance(method, str) or "id" not in message:
            return
        if method not in CANCELLABLE:
            _CURRENT.set(None)
            return
        key = _key(message["id"])
        params = message.get("params")
        session_id = params.get("sessionId") if isinstance(params, dict) else None
        self._pending[key] = _Pending(method, session_id if isinstance(session_id, str) else None)
        _CURRENT.set(key)

    def cancel(self, params: dict[str, Any]) -> str | None:
        """``$/cancel_request``: cancel the request named; the session id when it is a
        running prompt (the caller cancels its turn), else None."""
        if "requestId" not in params:
            return None
        pending = self._pending.get(_key(params["requestId"]))
        if pending is None or pending.cancelled:
            return None
        if pending.method == "session/prompt" and pending.task is not None:
            return pending.session_id
        pending.cancelled = True
        if pending.task is not None:
            pending.task.cancel()
        return None

    async def guard(self, work: Awaitable[_T]) -> _T:
        """Await ``work`` as the current request's handler, cancellable by id."""
        key = _CURRENT.get()
        pending = self._pending.get(key) if key is not None else None
        task = asyncio.current_task()
        if key is None or pending is None or task is None:
            return await work
        try:
            if pending.cancelled:
                _close(work)
                raise _cancelled()
            pending.task = task
            try:
                return await work
            except asyncio.CancelledError:
                if not pending.cancelled:
                    raise  # not ours: the connection is closing
                task.uncancel()
                raise _cancelled() from None
        finally:
            self._pending.pop(key, None)


class Guarded(Protocol):
    """What owns cancellable handlers: the requests in flight it keeps."""

    @property
    def requests(self) -> Requests: ...


_Handler = TypeVar("_Handler", bound=Callable[..., Coroutine[Any, Any, Any]])


def cancellable(handler: _Handler) -> _Handler:
    """A request handler (a method of a ``Guarded`` owner) that ``$/cancel_request`` may
    cancel: it runs under its owner's ``requests.guard`` (the methods' own list is
    ``CANCELLABLE``)."""

    @functools.wraps(handler)
    async def guarded(owner: Guarded, /, *args: Any, **kwargs: Any) -> Any:
        return await owner.requests.guard(handler(owner, *args, **kwargs))

    return cast("_Handler", guarded)


def _key(request_id: Any) -> str:
    """A request id as a key: 1 and "1" are different ids."""
    return json.dumps(request_id, sort_keys=True)


def _cancelled() -> RequestError:
    return RequestError(REQUEST_CANCELLED, "Request cancelled", {"details": "$/cancel_request"})


def _close(work: Awaitable[Any]) -> None:
    close = getattr(work, "close", None)
    if close is not None:
        close()  # never awaited: no "coroutine was never awaited" warning


__all__ = [
    "CANCELLABLE",
    "CANCEL_REQUEST",
    "REQUEST_CANCELLED",
    "Guarded",
    "Requests",
    "cancellable",
]
