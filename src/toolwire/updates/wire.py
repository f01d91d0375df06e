"""ACP v1 wire vocabulary for tool calls: the desired state of a call and its pieces.

Everything here is plain data in wire form (camelCase keys, JSON values), because the
update engine writes JSON and must not pay for pydantic models per update (the official
SDK models are used at the boundary, see ``toolwire.testing.sdk``).

``ToolCallState`` is the *complete* state of one call as the editor should show it.
Values inside it are treated as immutable: a changed value is a new object. That is what
lets change detection take the identity fast path (``toolwire.updates.diff``).
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final, Literal, TypeAlias

ToolKind: TypeAlias = Literal[
    "read",
    "edit",
    "delete",
    "move",
    "search",
    "execute",
    "think",
    "fetch",
    "switch_mode",
    "other",
]
ToolCallStatus: TypeAlias = Literal["pending", "in_progress", "completed", "failed"]
PlanStatus: TypeAlias = Literal["pending", "in_progress", "completed"]
PlanPriority: TypeAlias = Literal["high", "medium", "low"]
FieldName: TypeAlias = Literal[
    "title", "kind", "status", "content", "locations", "raw_input", "raw_output"
]
JsonObject: TypeAlias = Mapping[str, Any]

#: Field order on the wire, and each field's camelCase key.
FIELDS: Final[tuple[tuple[FieldName, str], ...]] = (
    ("title", "title"),
    ("kind", "kind"),
    ("status", "status"),
    ("content", "content"),
    ("locations", "locations"),
    ("raw_input", "rawInput"),
    ("raw_output", "rawOutput"),
)
WIRE_KEY: Final[dict[FieldName, str]] = dict(FIELDS)

#: Status order: ACP v1 statuses only move forward (docs/design.md, "Tool-call lifecycle").
STATUS_RANK: Final[dict[str, int]] = {
    "pending": 0,
    "in_progress": 1,
    "completed": 2,
    "failed": 2,
}
TERMINAL: Final[frozenset[str]] = frozenset({"completed", "failed"})


@dataclass(slots=True, init=False)
class ToolCallState:
    """The complete desired ACP state of one call: a value, never changed after it is made.

    ``content`` and ``locations`` are tuples of wire-form objects (ACP replaces both
    lists whole). ``raw_input``/``raw_output`` are ``None`` while unknown: ACP v1 cannot
    send an explicit ``null`` (the SDK drops ``None``), so once set they are never unset.
    A state is also a call *source* for the update engine (see ``snapshot``).

    Not a frozen dataclass only because ``__init__`` turns lists into tuples, which a
    frozen one cannot do without bypassing its own guard; ``replace`` makes a new state.
    """

    tool_call_id: str
    title: str
    kind: ToolKind
    status: ToolCallStatus
    content: tuple[JsonObject, ...]
    locations: tuple[JsonObject, ...]
    raw_input: Any
    raw_output: Any

    def __init__(
        self,
        tool_call_id: str,
        title: str,
        kind: ToolKind = "other",
        status: ToolCallStatus = "pending",
        content: Sequence[JsonObject] = (),
        locations: Sequence[JsonObject] = (),
        raw_input: Any = None,
        raw_output: Any = None,
    ) -> None:
        self.tool_call_id = tool_call_id
        self.title = title
        self.kind = kind
        self.status = status
        # A list would compare unequal to the equal tuple: one spurious update.
        self.content = tuple(content)
        self.locations = tuple(locations)
        self.raw_input = raw_input
        self.raw_output = raw_output

    def replace(self, **changes: Any) -> ToolCallState:
        """A copy with some fields changed."""
        get = changes.get
        return ToolCallState(
            self.tool_call_id,
            get("title", self.title),
            get("kind", self.kind),
            get("status", self.status),
            get("content", self.content),
            get("locations", self.locations),
            get("raw_input", self.raw_input),
            get("raw_output", self.raw_output),
        )

    def snapshot(self) -> ToolCallState:
        """The state itself: a plain state is its own source."""
        return self


def text_content(text: str) -> dict[str, Any]:
    """A ``ToolCallContent`` item holding one text block."""
    return {"type": "content", "content": {"type": "text", "text": text}}


def image_content(data: str, mime_type: str) -> dict[str, Any]:
    """A ``ToolCallContent`` item holding one image block (base64 ``data``)."""
    return {"type": "content", "content": {"type": "image", "data": data, "mimeType": mime_type}}


def resource_link_content(uri: str, name: str, description: str | None = None) -> dict[str, Any]:
    """A ``ToolCallContent`` item holding one ``resource_link`` block (a web page found)."""
    link: dict[str, Any] = {"type": "resource_link", "uri": uri, "name": name}
    if description:
        link["description"] = description
    return {"type": "content", "content": link}


def diff_content(path: str, new_text: str, old_text: str | None = None) -> dict[str, Any]:
    """A ``diff`` item; ``old_text`` None means a new file (ACP v1 ``Diff``).

    A new file's ``oldText`` is left out rather than sent as ``null``: the schema allows
    both, and the SDK's serializer (``exclude_none``) writes the former.
    """
    item: dict[str, Any] = {"type": "diff", "path": path, "newText": new_text}
    if old_text is not None:
        item["oldText"] = old_text
    return item


def terminal_content(terminal_id: str) -> dict[str, Any]:
    """A reference to a client terminal created with ``terminal/create``."""
    return {"type": "terminal", "terminalId": terminal_id}


def location(path: str, line: int | None = None) -> dict[str, Any]:
    """A ``ToolCallLocation``; ``path`` must be absolute (ACP v1)."""
    if line is None:
        return {"path": path}
    return {"path": path, "line": line}


def plan_entry(content: str, status: PlanStatus, priority: PlanPriority) -> dict[str, Any]:
    """A ``PlanEntry`` of a ``plan`` update (ACP v1: all three fields required)."""
    return {"content": content, "priority": priority, "status": status}


def state_to_wire(state: ToolCallState) -> dict[str, Any]:
    """The full ``ToolCall`` object (camelCase) a client holds for this state."""
    out: dict[str, Any] = {"toolCallId": state.tool_call_id}
    for name, key in FIELDS:
        value = getattr(state, name)
        if value is None:
            continue
        out[key] = list(value) if isinstance(value, tuple) else value
    return out


def apply_update(call: dict[str, Any], update: Mapping[str, Any]) -> dict[str, Any]:
    """A client's view after one ``tool_call_update``: every present field replaces.

    ACP v1 ``ToolCallUpdate``: "Replace the content collection", "Replace the locations
    collection"; omitted fields are unchanged. Used by tests and the benchmark.
    """
    out = dict(call)
    for key, value in update.items():
        if key != "sessionUpdate" and value is not None:
            out[key] = value
    return out


_ENCODER = json.JSONEncoder(ensure_ascii=True, separators=(",", ":"), allow_nan=False)
_encode_str: Callable[[str], str] = json.encoder.encode_basestring_ascii


def encode(value: Any) -> str:
    """Compact JSON, ASCII-only, as the official SDK writes it (``task/sender.py``).

    ASCII output means the byte count is the string length, and no lone surrogate from
    a provider's ``\\ud800`` escape can make the line unencodable. NaN and infinities are
    not JSON: they become ``null`` rather than an invalid line.
    """
    try:
        return _ENCODER.encode(value)
    except ValueError:
        return _ENCODER.encode(_finite(value))


def encode_content(items: tuple[JsonObject, ...]) -> str:
    """``encode`` for a ``content`` list; one text item (a frame, a progress line, a
    result: nearly every update) skips the generic encoder's walk, a third of the cost."""
    if len(items) == 1:
        item = items[0]
        if type(item) is dict and len(item) == 2 and item.get("type") == "content":
            inner = item["content"]
            if type(inner) is dict and len(inner) == 2 and inner.get("type") == "text":
                text = inner["text"]
                if type(text) is str:
                    return _CONTENT_HEAD + _encode_str(text) + "}}]"
    return encode(items)


_CONTENT_HEAD: Final = '[{"type":"content","content":{"type":"text","text":'


def _finite(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, Mapping):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, Sequence) and not isinstance(value, str | bytes):
        return [_finite(v) for v in value]
    return value


def session_notification(session_id: str, update: Mapping[str, Any]) -> dict[str, Any]:
    """The JSON-RPC ``session/update`` notification carrying ``update``.

    The one place its shape is written (``params`` is ACP v1 ``SessionNotification``);
    ``render.Envelope`` derives the wire text around an update from it.
    """
    params = {"sessionId": session_id, "update": update}
    return {"jsonrpc": "2.0", "method": "session/update", "params": params}


@dataclass(frozen=True, slots=True)
class Notification:
    """One JSON-RPC ``session/update`` notification: its update and its wire line.

    ``line`` is the exact bytes to write (compact JSON plus ``\\n``), encoded once;
    ``update`` the ``SessionUpdate`` object as Python data. ``message`` and ``params``
    wrap it on demand (for the SDK path and tests; the hot path never needs them).
    """

    session_id: str
    update: dict[str, Any]
    line: bytes
    kind: str
    tool_call_id: str | None = None

    @property
    def params(self) -> dict[str, Any]:
        """The ``params`` object (``SessionNotification``)."""
        params: dict[str, Any] = self.message["params"]
        return params

    @property
    def message(self) -> dict[str, Any]:
        """The whole JSON-RPC notification."""
        return session_notification(self.session_id, self.update)


__all__ = [
    "FIELDS",
    "STATUS_RANK",
    "TERMINAL",
    "WIRE_KEY",
    "FieldName",
    "JsonObject",
    "Notification",
    "PlanPriority",
    "PlanStatus",
    "ToolCallState",
    "ToolCallStatus",
    "ToolKind",
    "apply_update",
    "diff_content",
    "encode",
    "encode_content",
    "image_content",
    "location",
    "plan_entry",
    "resource_link_content",
    "session_notification",
    "state_to_wire",
    "terminal_content",
    "text_content",
]
