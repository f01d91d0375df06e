"""The boundary to the official ``agent-client-protocol`` SDK (import ``acp``).

The engine emits plain wire-form dicts (pydantic on the hot path would cost more than
the whole update; see docs/updates.md). An agent built on the SDK sends them either

* as models: ``await conn.session_update(session_id=..., update=to_sdk_update(note))``,
  which the SDK serializes with ``by_alias=True, exclude_none=True,
  exclude_defaults=True`` (``acp/utils.py serialize_params``), or
* as they are, through the connection's ``send_notification("session/update",
  note.params)``, which skips the models and the second serialization.

``round_trip`` checks that both give the same JSON: what we emit never carries a
``null`` (the SDK would drop it) nor a field the models do not know.
"""

from __future__ import annotations

from typing import Any

from acp.schema import SessionNotification
from acp.utils import serialize_params

from toolwire.updates.wire import Notification


def to_sdk(note: Notification | dict[str, Any]) -> SessionNotification:
    """The SDK model of a notification (or of its ``params`` dict); validates it."""
    params = note.params if isinstance(note, Notification) else note
    return SessionNotification.model_validate(params)


def to_sdk_update(note: Notification | dict[str, Any]) -> Any:
    """The SDK model of the ``update`` alone, for ``conn.session_update(update=...)``."""
    return to_sdk(note).update


def sdk_params(model: SessionNotification) -> dict[str, Any]:
    """The JSON the SDK would write as ``params`` for this model."""
    return serialize_params(model)


def round_trip(note: Notification | dict[str, Any]) -> dict[str, Any]:
    """``params`` through the SDK models and back; ``ValueError`` if anything changed."""
    params = note.params if isinstance(note, Notification) else note
    back = sdk_params(to_sdk(params))
    if back != params:
        raise ValueError(f"SDK round trip changed the notification: {params!r} -> {back!r}")
    return back


__all__ = ["round_trip", "sdk_params", "to_sdk", "to_sdk_update"]
