"""Build the arguments object of an XML-tags tool call from its elements, as they stream.

Rules (docs/design.md, "Tool calls embedded in text"):

* a leaf's text is its value: CDATA sections verbatim; other text has entities decoded
  (``&lt; &gt; &amp; &quot; &apos;`` and ``&#...;``) and XML whitespace trimmed at the
  ends (whitespace written as ``&#32;`` is kept: it was written on purpose);
* an element with children is an object; text beside children (other than whitespace)
  is an error, since no value could hold both;
* a name repeated among siblings is an array, in order (one occurrence is just a value:
  the format cannot tell a one-element array apart);
* attributes are ignored (``<path type="string">`` is the element ``path``);
* with the tool's parameters schema, a value is typed by its property's schema
  (``_values.typed_element``): ``5`` for an integer is 5, one ``<tags>`` for an array is
  a one-item list;
* the root ``<arguments>`` holds elements, or nothing (``{}``), or, leniently, a JSON
  object as text (some models write that).

``fields``: a top-level name is reported once, when its value can no longer grow: when a
sibling of another name opens, or ``</arguments>`` closes. So ``file_path`` is reported as
soon as ``<content>`` opens, before the content streams. A name repeated further away
(``a, b, a``) extends an array already reported; it is not reported twice.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from toolwire.decode.tags._holdback import SPACE
from toolwire.decode.tags._values import typed_element

_ENTITY = re.compile(r"&(?:(lt|gt|amp|quot|apos)|#([0-9]{1,7})|#[xX]([0-9a-fA-F]{1,6}));")
_NAMED = {"lt": "<", "gt": ">", "amp": "&", "quot": '"', "apos": "'"}


def decode_entities(text: str) -> str:
    """Decode XML's entities; leave anything else (a bare ``&`` in code) as written."""
    if "&" not in text:
        return text
    return _ENTITY.sub(_entity, text)


def _entity(m: re.Match[str]) -> str:
    if m.group(1):
        return _NAMED[m.group(1)]
    code = int(m.group(2)) if m.group(2) else int(m.group(3), 16)
    if 0 < code <= 0x10FFFF and not 0xD800 <= code <= 0xDFFF:
        return chr(code)
    return m.group(0)  # not a character: keep the text the model wrote


class Element:
    """One open element: its text runs (CDATA or not) and its children."""

    __slots__ = ("children", "name", "runs")

    def __init__(self, name: str) -> None:
        self.name = name
        self.runs: list[tuple[bool, list[str]]] = []  # (is CDATA, pieces)
        self.children: dict[str, Any] | None = None

    def add_text(self, text: str, *, cdata: bool) -> None:
        if not text:
            return
        if self.runs and self.runs[-1][0] == cdata:
            self.runs[-1][1].append(text)
        else:
            self.runs.append((cdata, [text]))

    def add_child(self, name: str, value: Any) -> None:
        if self.children is None:
            self.children = {}
        if name not in self.children:
            self.children[name] = value
        elif isinstance(self.children[name], list):  # values are str or dict: a list is ours
            self.children[name].append(value)
        else:
            self.children[name] = [self.children[name], value]

    def leaf_text(self) -> str:
        runs = [(cdata, "".join(pieces)) for cdata, pieces in self.runs]
        if not runs:
            return ""
        # Trim whitespace outside CDATA at the two ends, before decoding (see module doc).
        if not runs[0][0]:
            runs[0] = (False, runs[0][1].lstrip(SPACE))
        if not runs[-1][0]:
            runs[-1] = (False, runs[-1][1].rstrip(SPACE))
        return "".join(text if cdata else decode_entities(text) for cdata, text in runs)

    def value(self) -> Any:
        """The element's value; ``ValueError`` when it mixes text and children."""
        if self.children is None:
            return self.leaf_text()
        if self.leaf_text():
            raise ValueError(f"<{self.name}> mixes text and child elements")
        return self.children


class ArgumentTree:
    """The stack of open elements under ``<arguments>``, and the fields to report."""

    __slots__ = ("_pending", "_properties", "_reported", "_stack", "done", "value")

    def __init__(self, schema: Any = None) -> None:
        properties = schema.get("properties") if isinstance(schema, Mapping) else None
        self._properties: Mapping[str, Any] = properties if isinstance(properties, Mapping) else {}
        self._stack = [Element("arguments")]
        self._pending: str | None = None  # a closed top-level name not reported yet
        self._reported: set[str] = set()
        self.done = False
        self.value: dict[str, Any] = {}

    @property
    def depth(self) -> int:
        """1 when only ``<arguments>`` is open."""
        return len(self._stack)

    @property
    def innermost(self) -> str:
        """Name of the innermost open element."""
        return self._stack[-1].name

    def values(self, fields: tuple[str, ...]) -> tuple[Any, ...]:
        """The values of reported top-level fields (``ToolCallDelta.values``)."""
        if self.done:
            return tuple(self.value[name] for name in fields)
        source = self._stack[0].children or {}
        return tuple(self._typed(name, source[name]) for name in fields)

    def _typed(self, name: str, value: Any) -> Any:
        schema = self._properties.get(name)
        return value if schema is None else typed_element(value, schema)

    def text(self, text: str, *, cdata: bool = False) -> None:
        self._stack[-1].add_text(text, cdata=cdata)

    def open(self, name: str) -> tuple[str, ...]:
        fields: tuple[str, ...] = ()
        if len(self._stack) == 1 and self._pending is not None and self._pending != name:
            fields = self._report()
        self._stack.append(Element(name))
        return fields

    def close(self, name: str) -> tuple[str, ...]:
        """Close the innermost element; ``ValueError`` when ``name`` does not match it."""
        top = self._stack[-1]
        if name != top.name:
            raise ValueError(f"</{name}> closes <{top.name}>")
        if len(self._stack) == 1:
            self.value = {k: self._typed(k, v) for k, v in _root_value(top).items()}
            self.done = True
            return self._report()
        self._stack.pop()
        parent = self._stack[-1]
        if len(self._stack) == 1 and name in self._reported:
            # A far repeat (a, b, a) grows an array already handed out in an event's
            # ``values``: grow a copy, so what was emitted stays as it was.
            parent.children = {**(parent.children or {}), name: list(_as_list(parent, name))}
        parent.add_child(name, top.value())
        if len(self._stack) == 1 and name not in self._reported:
            self._pending = name
        return ()

    def _report(self) -> tuple[str, ...]:
        name, self._pending = self._pending, None
        if name is None:
            return ()
        self._reported.add(name)
        return (name,)


def _as_list(element: Element, name: str) -> list[Any]:
    value = (element.children or {})[name]
    return value if isinstance(value, list) else [value]


def _root_value(root: Element) -> dict[str, Any]:
    if root.children is not None:
        value = root.value()
        assert isinstance(value, dict)
        return value
    text = root.leaf_text()
    if not text:
        return {}
    try:
        parsed = json.loads(text)
    except ValueError:
        parsed = None
    if not isinstance(parsed, dict):
        raise ValueError("<arguments> holds text, not argument elements")
    return parsed


__all__ = ["ArgumentTree", "Element", "decode_entities"]
