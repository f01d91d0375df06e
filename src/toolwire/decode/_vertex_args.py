"""Vertex ``partialArgs`` (JSON-path-addressed argument fragments) -> a JSON text stream.

With ``streamFunctionCallArguments`` Vertex sends a call's arguments as fragments such as
``{"jsonPath": "$.recipe.ingredients[0].amount", "stringValue": "16 oz", "willContinue":
true}``. Every other provider streams argument *text*, and the rest of toolwire (the
incremental parser, ``fields``, the lifecycle) works on text. So this module writes the
JSON text the fragments describe, as they arrive.

Theory of operation. While paths arrive in document order, the text written so far is
always a valid prefix of the final JSON: a string fragment is written escaped and the
string is left open until its path ends (an entry without ``willContinue``) or another
path begins; containers are opened as a path enters them and closed as the path moves on.
``finish`` closes whatever is still open.

Paths that leave document order (a key written twice, going back into a container already
closed, skipping an array index, resuming a string left with ``willContinue``) cannot
extend that prefix. From that point on the fragments are applied to an object instead
(the last write to a path wins; a resumed string grows) and ``finish`` delivers the
remainder: the prefix closed, then every top-level key changed since, again with its
whole value. RFC 8259 leaves repeated names to the parser; Python's ``json`` and
toolwire's ``JsonStream`` keep the last one, so the text still parses to the final
arguments, and ``fields`` names such a key a second time when its final value arrives.
Paths cannot express an empty object or array; a call with no fragments gives ``""``.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any, TypeAlias

Segment: TypeAlias = str | int

_SEGMENT = re.compile(r"\.([^.\[\]]+)|\[(\d+)\]|\['((?:[^'\\]|\\.)*)'\]|\[\"((?:[^\"\\]|\\.)*)\"\]")
_UNESCAPE = re.compile(r"\\(.)")
_VALUE_KEYS = ("stringValue", "numberValue", "boolValue", "nullValue")


class PartialArgsError(ValueError):
    """A fragment that cannot be placed: no or unreadable ``jsonPath``, or not an object member."""


def parse_json_path(path: str) -> list[Segment]:
    """``$.a.b[0]['c d']`` -> ``["a", "b", 0, "c d"]``; the root must be an object."""
    if not path.startswith("$"):
        raise PartialArgsError(f"jsonPath {path!r} does not start at the root")
    out: list[Segment] = []
    pos = 1
    while pos < len(path):
        m = _SEGMENT.match(path, pos)
        if m is None:
            raise PartialArgsError(f"cannot read jsonPath {path!r} at offset {pos}")
        name, index, single, double = m.groups()
        if index is not None:
            out.append(int(index))
        else:
            quoted = single if single is not None else double
            out.append(name if quoted is None else _UNESCAPE.sub(r"\1", quoted))
        pos = m.end()
    if not out or not isinstance(out[0], str):
        raise PartialArgsError(f"jsonPath {path!r} does not name a member of an object")
    return out


@dataclass(slots=True)
class _Frame:
    """An open container in the written text."""

    is_array: bool
    keys: set[str] = field(default_factory=set)
    count: int = 0


class PartialArgs:
    """Feed ``partialArgs`` entries of one call; get the JSON text to append."""

    def __init__(self) -> None:
        self._text: list[str] = []
        self._frames: list[_Frame] = []  # [root object, ...containers on the current path]
        self._path: list[Segment] = []  # the members leading to frames[1:]
        self._open_leaf: list[Segment] | None = None  # the string still being written
        self._object: dict[str, Any] | None = None  # set once paths left document order
        self._leaf_parts: list[str] = []  # the open string's pieces, after leaving order
        # Strings left with ``willContinue`` when another path began: a later fragment at
        # the same path continues them (a resumed path is what leaves document order).
        self._unfinished: set[tuple[Segment, ...]] = set()
        self._touched: dict[str, None] = {}  # top-level keys changed after leaving order
        self._prefix_closing = ""  # what closes the text written before leaving order

    @property
    def text(self) -> str:
        """All text returned so far."""
        return "".join(self._text)

    def feed(self, entry: dict[str, Any]) -> str:
        """One ``partialArgs`` entry -> the text it adds (``""`` once out of order)."""
        path = entry.get("jsonPath")
        if not isinstance(path, str):
            raise PartialArgsError("partialArgs entry without a jsonPath")
        segments = parse_json_path(path)
        kind = next((k for k in _VALUE_KEYS if k in entry), None)
        if kind is None:
            if segments != self._open_leaf:
                return ""  # nothing to place
            kind = "stringValue"  # proto3 JSON may drop the empty string that ends a path
        value = None if kind == "nullValue" else entry.get(kind)
        if kind == "stringValue" and not isinstance(value, str):
            value = ""
        more = bool(entry.get("willContinue")) and kind == "stringValue"
        if self._object is None:
            text = self._write(segments, kind, value, more=more)
            if text is not None:
                self._text.append(text)
                return text
            self._leave_order()
        self._apply(segments, kind, value, more=more)
        return ""

    def finish(self) -> str:
        """The text that completes the document (``""`` when nothing was ever written)."""
        if self._object is None:
            if not self._text:
                return ""
            closing = self._closing()
            self._text.append(closing)
            return closing
        self._close_leaf()
        parts = [self._prefix_closing[:-1]]  # the prefix closed, all but the root
        root_has_members = bool(self._frames and self._frames[0].keys)
        for key in self._touched:
            parts.append(("," if root_has_members else "") + json.dumps(key) + ":")
            parts.append(json.dumps(self._object[key], ensure_ascii=False, separators=(",", ":")))
            root_has_members = True
        parts.append("}")
        rest = "".join(parts)
        self._text.append(rest)
        return rest

    # -- in document order: write text ------------------------------------------------

    def _write(self, path: list[Segment], kind: str, value: Any, *, more: bool) -> str | None:
        """The text for one fragment, or ``None`` when it cannot extend the prefix."""
        out: list[str] = []
        if self._open_leaf is not None:
            if path == self._open_leaf and kind == "stringValue":
                return self._string_piece(str(value), more=more, opening=False)
            out.append('"')
        frames = self._frames or [_Frame(is_array=False)]
        parents = path[:-1]
        keep = _common_prefix(self._path, parents)
        if not _fits(frames[keep], path[keep]) or _skips_index(path[keep + 1 :]):
            return None
        if not self._frames:
            self._frames.append(frames[0])
            out.append("{")
        if self._open_leaf is not None:
            self._unfinished.add(tuple(self._open_leaf))
        self._open_leaf = None
        for frame in reversed(self._frames[keep + 1 :]):
            out.append("]" if frame.is_array else "}")
        del self._frames[keep + 1 :]
        del self._path[keep:]
        for i in range(keep, len(path)):
            out.append(self._member(path[i]))
            if i < len(parents):
                self._frames.append(_Frame(is_array=isinstance(path[i + 1], int)))
                self._path.append(path[i])
                out.append("[" if self._frames[-1].is_array else "{")
        if kind == "stringValue":
            self._open_leaf = path
            out.append(self._string_piece(str(value), more=more, opening=True))
        else:
            out.append(json.dumps(value))
        return "".join(out)

    def _member(self, segment: Segment) -> str:
        """Register a new member of the innermost frame; its separator and key."""
        frame = self._frames[-1]
        sep = "," if frame.keys or frame.count else ""
        if isinstance(segment, int):
            frame.count += 1
            return sep
        frame.keys.add(segment)
        return sep + json.dumps(segment, ensure_ascii=False) + ":"

    def _string_piece(self, value: str, *, more: bool, opening: bool) -> str:
        body = json.dumps(value, ensure_ascii=False)[1:-1]
        if not more:
            self._open_leaf = None
        return ('"' if opening else "") + body + ("" if more else '"')

    def _closing(self) -> str:
        closers = ['"'] if self._open_leaf is not None else []
        closers.extend("]" if f.is_array else "}" for f in reversed(self._frames))
        return "".join(closers)

    # -- out of document order: build the object --------------------------------------

    def _leave_order(self) -> None:
        # The prefix is valid JSON text once closed: that is the object so far.
        self._prefix_closing = self._closing() if self._frames else "{}"
        self._object = json.loads(self.text + self._prefix_closing)
        if self._open_leaf is not None:
            self._unfinished.add(tuple(self._open_leaf))
        self._open_leaf = None

    def _apply(self, path: list[Segment], kind: str, value: Any, *, more: bool) -> None:
        assert self._object is not None
        key = tuple(path)
        if kind != "stringValue":
            self._close_leaf()
            self._unfinished.discard(key)
            _set(self._object, path, value)
        elif path == self._open_leaf:
            self._leaf_parts.append(str(value))
        else:
            self._close_leaf()
            before = _get(self._object, path) if key in self._unfinished else None
            _set(self._object, path, "")  # the member takes its place in key order now
            self._open_leaf = path
            self._leaf_parts = [before if isinstance(before, str) else "", str(value)]
        self._touched[str(path[0])] = None
        if kind == "stringValue" and more:
            self._unfinished.add(key)
        else:
            self._unfinished.discard(key)
            self._close_leaf()

    def _close_leaf(self) -> None:
        """Write the open string into the object; it stays resumable if it may continue."""
        if self._open_leaf is not None and self._object is not None:
            _set(self._object, self._open_leaf, "".join(self._leaf_parts))
        self._open_leaf = None
        self._leaf_parts = []


def _common_prefix(a: list[Segment], b: list[Segment]) -> int:
    n = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        n += 1
    return n


def _fits(frame: _Frame, segment: Segment) -> bool:
    """May ``segment`` be the next new member of ``frame`` in document order?"""
    if frame.is_array:
        return isinstance(segment, int) and segment == frame.count
    return isinstance(segment, str) and segment not in frame.keys


def _skips_index(new_members: list[Segment]) -> bool:
    """A path entering new arrays must start each at index 0 to stay in document order."""
    return any(isinstance(s, int) and s != 0 for s in new_members)


def _get(root: dict[str, Any], path: list[Segment]) -> Any:
    node: Any = root
    for segment in path:
        if isinstance(node, dict) and isinstance(segment, str):
            node = node.get(segment)
        elif isinstance(node, list) and isinstance(segment, int) and segment < len(node):
            node = node[segment]
        else:
            return None
    return node


def _set(root: dict[str, Any], path: list[Segment], value: Any) -> None:
    """Place ``value`` at ``path``: the last write wins, as for any path-addressed update.

    Containers are created as needed; a missing array slot is null; a path through a
    value of another shape replaces that value (the stream is malformed; there is no
    better-attested reading of it).
    """
    node: Any = root
    last = len(path) - 1
    for i, segment in enumerate(path):
        if isinstance(node, list):
            node.extend([None] * (int(segment) + 1 - len(node)))
        if i == last:
            node[segment] = value
            return
        shape = list if isinstance(path[i + 1], int) else dict
        child = node[int(segment)] if isinstance(node, list) else node.get(segment)
        if not isinstance(child, shape):
            child = shape()
            node[segment] = child
        node = child
