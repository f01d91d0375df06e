"""Text that always encodes: lone surrogates made into U+FFFD, split pairs joined.

A Python ``str`` can hold a UTF-16 surrogate on its own: JSON's ``\\ud83d`` escape
decodes to one (RFC 8259 section 8.2 calls such strings legal JSON whose handling is
"unpredictable"), and so do the CESU-style bytes ``json.loads`` passes through. A prompt
or a model's output can carry one; UTF-8 cannot encode it, and providers refuse it
escaped ("no low surrogate in string"). So every body is cleaned where it is serialized
(``HTTPBackend.body_text``), the agent's store cleans what it writes, the proxy cleans a
request body as it decodes it, and the agent cleans a tool call's arguments the moment
they are whole (``ResponseCollector``), before a hook, a command line, a file or an
address sees them: one bad character becomes U+FFFD instead of a request, or a whole
session, that can never be sent again.

A high surrogate followed by a low one (a pair a stream delivered in two halves) becomes
the character they spell, as UTF-16 reads them.
"""

from __future__ import annotations

import re
from typing import Any

_SURROGATE = re.compile("[\ud800-\udfff]")
# What can make json.loads return a surrogate: a \uD800-\uDFFF escape, or the CESU-8
# bytes ED A0..BF (json decodes bytes with "surrogatepass").
_SURROGATE_IN_JSON = re.compile(rb"\\u[dD][89a-fA-F]|\xed[\xa0-\xbf]")


def encodable(text: str) -> str:
    """``text`` with every lone surrogate replaced by U+FFFD (a valid pair joined)."""
    if _SURROGATE.search(text) is None:
        return text
    return text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")


def utf8(text: str) -> bytes:
    """``text`` as UTF-8, a lone surrogate as U+FFFD: what every text leaving the process
    (a hook's input, a file the agent writes for one, a request body) is encoded with."""
    return encodable(text).encode("utf-8")


def encodable_json(raw: bytes | str, value: Any) -> Any:
    """``value`` (``json.loads(raw)``) with every string in it, keys too, ``encodable``.

    Cheap when ``raw`` holds nothing that decodes to a surrogate (the usual case): the
    value is returned as is.
    """
    data = raw.encode("utf-8", "surrogatepass") if isinstance(raw, str) else raw
    if _SURROGATE_IN_JSON.search(data) is None:
        return value
    return encodable_value(value)


def encodable_value(value: Any) -> Any:
    """``value`` (JSON-shaped) with every string in it, keys too, ``encodable``: walked
    without recursion (a nesting ``json.loads`` accepted must not overflow here), lists
    and dicts changed in place."""
    if isinstance(value, str):
        return encodable(value)
    stack: list[Any] = [value]
    while stack:
        node = stack.pop()
        if isinstance(node, list):
            for i, item in enumerate(node):
                if isinstance(item, str):
                    node[i] = encodable(item)
                elif isinstance(item, list | dict):
                    stack.append(item)
        elif isinstance(node, dict):
            items = list(node.items())
            node.clear()
            for key, item in items:
                if isinstance(item, str):
                    item = encodable(item)
                elif isinstance(item, list | dict):
                    stack.append(item)
                node[encodable(key)] = item
    return value


__all__ = ["encodable", "encodable_json", "encodable_value", "utf8"]
