"""Calls written in the first three text formats, as toolwire asks the model to write them.

The backends write a past call back into the history in the markup the model was told to
use (``toolwire.decode.textformats.renderer``); each newer format's module has its own.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any


def hermes(name: str, arguments: Mapping[str, Any]) -> str:
    body = json.dumps({"name": name, "arguments": dict(arguments)}, ensure_ascii=False)
    return f"<tool_call>\n{body}\n</tool_call>"


def qwen3_coder(name: str, arguments: Mapping[str, Any]) -> str:
    params = "".join(
        f"<parameter={k}>\n{v if isinstance(v, str) else json.dumps(v)}\n</parameter>\n"
        for k, v in arguments.items()
    )
    return f"<tool_call>\n<function={name}>\n{params}</function>\n</tool_call>"


def xml(name: str, arguments: Mapping[str, Any]) -> str:
    inner = "".join(_xml_element(k, v) for k, v in arguments.items())
    return f"<tool><tool_name>{name}</tool_name><arguments>{inner}</arguments></tool>"


def _xml_element(name: str, value: Any) -> str:
    if isinstance(value, list):
        return "".join(_xml_element(name, item) for item in value)
    if isinstance(value, dict):
        inner = "".join(_xml_element(k, v) for k, v in value.items())
        return f"<{name}>{inner}</{name}>"
    text = value if isinstance(value, str) else json.dumps(value)
    if any(c in text for c in "<&") or text != text.strip():
        # CDATA keeps code verbatim; a "]]>" inside is split across two sections.
        text = "<![CDATA[" + text.replace("]]>", "]]]]><![CDATA[>") + "]]>"
    return f"<{name}>{text}</{name}>"


__all__ = ["hermes", "qwen3_coder", "xml"]
