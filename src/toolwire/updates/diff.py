"""Field-level change detection by value: which fields of a tool call really changed.

swissarmyhammer/claude-agent compares ``content``/``locations`` by *length* and
``rawInput`` by *presence*, so an edit inside a same-length list, or a new ``rawInput``,
is never sent. Here every field is compared by JSON value, deeply:

1. identity: ``old is new`` is the common case (states share unchanged values), O(1);
2. Python ``==`` (C code: ``memcmp`` for strings, short-circuits on identical sub-objects),
   so an unchanged 1 MB string costs one ``memcmp`` and a changed one usually far less;
3. only when ``==`` holds, a strict walk rules out what ``==`` conflates but JSON does not
   (``True == 1``, ``1 == 1.0``, ``0.0 == -0.0``). It skips identical sub-objects and does
   not re-read strings, so its cost is the number of *rebuilt* containers, not bytes.

A hash fingerprint would not be cheaper for large values here: hashing a new string
reads all of it, as ``memcmp`` does, and for a string already seen identity wins first.
The detector may only err towards "changed" (a list where a tuple was: one spare
update), never towards "same" (which would lose state on the client).
"""

from __future__ import annotations

from typing import Any

from toolwire.updates.wire import FieldName, ToolCallState

_SEQUENCES = (list, tuple)


def same(old: Any, new: Any) -> bool:
    """True when ``old`` and ``new`` are the same JSON value."""
    if old is new:
        return True
    try:
        equal = bool(old == new)
    except Exception:  # a value that cannot compare is not JSON: call it changed
        return False
    return equal and _strict(old, new)


def _strict(a: Any, b: Any) -> bool:
    """``a == b`` holds; check the types JSON tells apart (bool/int/float, -0.0)."""
    if a is b:
        return True
    ta, tb = type(a), type(b)
    if ta is not tb and not (ta in _SEQUENCES and tb in _SEQUENCES):
        return False
    if ta is str:
        return True  # == already compared the characters
    if ta is float:
        return repr(a) == repr(b)
    if ta is dict:
        return all(_strict(v, b[k]) for k, v in a.items())
    if ta in _SEQUENCES:
        return all(map(_strict, a, b))
    return True


def changed_fields(old: ToolCallState, new: ToolCallState) -> list[FieldName]:
    """The fields of ``new`` whose values differ from ``old``, in wire order."""
    if old is new:
        return []
    out: list[FieldName] = []
    if old.title != new.title:
        out.append("title")
    if old.kind != new.kind:
        out.append("kind")
    if old.status != new.status:
        out.append("status")
    if not same(old.content, new.content):
        out.append("content")
    if not same(old.locations, new.locations):
        out.append("locations")
    if not same(old.raw_input, new.raw_input):
        out.append("raw_input")
    if not same(old.raw_output, new.raw_output):
        out.append("raw_output")
    return out


__all__ = ["changed_fields", "same"]
