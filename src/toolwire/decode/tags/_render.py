"""Calls written in the markup formats, as toolwire asks the model to write them.

The backends write a past call back into the history in the markup the model was told to
use (``toolwire.decode.textformats.renderer``): the first three formats and the markup
families (GLM, Kimi, MiniMax, Seed-OSS, harmony) here; the JSON families' modules have
their own. A string value is written as is, any other value as JSON.
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


def _value(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def _json(arguments: Mapping[str, Any]) -> str:
    return json.dumps(dict(arguments), ensure_ascii=False)


def glm45(name: str, arguments: Mapping[str, Any]) -> str:
    pairs = "".join(
        f"<arg_key>{k}</arg_key>\n<arg_value>{_value(v)}</arg_value>\n"
        for k, v in arguments.items()
    )
    return f"<tool_call>{name}\n{pairs}</tool_call>"


def kimi_k2(name: str, arguments: Mapping[str, Any]) -> str:
    return (
        "<|tool_calls_section_begin|><|tool_call_begin|>"
        f"functions.{name}:0<|tool_call_argument_begin|>{_json(arguments)}"
        "<|tool_call_end|><|tool_calls_section_end|>"
    )


def minimax_m2(name: str, arguments: Mapping[str, Any]) -> str:
    params = "".join(
        f'<parameter name="{k}">{_value(v)}</parameter>\n' for k, v in arguments.items()
    )
    return f'<minimax:tool_call>\n<invoke name="{name}">\n{params}</invoke>\n</minimax:tool_call>'


def seed_oss(name: str, arguments: Mapping[str, Any]) -> str:
    # Seed-OSS writes a value inline: the decoder keeps it exactly, newlines and all.
    params = "".join(f"<parameter={k}>{_value(v)}</parameter>\n" for k, v in arguments.items())
    return f"<seed:tool_call>\n<function={name}>\n{params}</function>\n</seed:tool_call>"


def harmony(name: str, arguments: Mapping[str, Any]) -> str:
    return (
        f"<|channel|>commentary to=functions.{name} <|constrain|>json"
        f"<|message|>{_json(arguments)}<|call|>"
    )


def xml(name: str, arguments: Mapping[str, Any]) -> str:
    inner = "".join(_xml_element(k, v) for k, v in arguments.items())
    return f"<tool><tool_name>{name}</tool_name><arguments>{inner}</arguments></tool>"


def _xml_element(name: str, value: Any) -> str:
    if isinstance(value, list | dict) and not value:
        # No repeat or child could say "empty": JSON does, and the tool's schema reads it.
        return f"<{name}>{json.dumps(value)}</{name}>"
    if isinstance(value, list) and any(isinstance(item, list) for item in value):
        # Repeats of repeats would flatten: a list of lists is written as JSON.
        return f"<{name}>{json.dumps(value, ensure_ascii=False)}</{name}>"
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


__all__ = ["glm45", "harmony", "hermes", "kimi_k2", "minimax_m2", "qwen3_coder", "seed_oss", "xml"]
