"""The registry of text tool-call formats: one line per format, read by every layer.

A text format is a markup models write tool calls in when they are served without native
tool calling. ``config`` accepts a ``tool_format`` this registry holds, ``decode`` builds its
decoder (``text_decoder``), ``backends`` writes the prompt and the past calls in it
(``render``), and ``toolwire decode --format`` runs it. Names are vLLM's parser names where
vLLM has one (underscores); ``canonical`` also takes the hyphenated spelling of any name and
the aliases listed, so ``qwen3_coder`` and ``deepseek-v3`` work too.

A format's module holds its decoder class, built as ``Class(schemas)`` (the declared tools,
name -> parameters schema, or None), and ``render(name, arguments) -> str``: a call written
the way the model's chat template writes it (the first three formats' renderers are in
``_render``). Modules are imported on first use.

To add a format: write the module, add its line to ``_FORMATS``, and document it in
docs/decoding.md.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final, Protocol

from toolwire.events import Event

_TAGS = "toolwire.decode.tags."


class TextDecoder(Protocol):
    """A decoder of tool calls embedded in text: fed ``str``, emits no ``MessageEnd``."""

    def feed(self, text: str) -> list[Event]: ...

    def close(self) -> list[Event]: ...


@dataclass(frozen=True, slots=True)
class TextFormat:
    """One format: its name, where its decoder and renderer live, how results go back."""

    name: str
    module: str
    """The module under ``toolwire.decode.tags`` holding the decoder class and ``render``."""
    decoder: str
    """The decoder class's name in that module."""
    aliases: tuple[str, ...] = ()
    result_tag: str = "tool_response"
    """The tag a tool's result goes back to the model in (as user text)."""
    rules: str = "The arguments are one JSON object matching the tool's parameter schema."
    """What the prompt says about arguments, after the rendered example."""
    render: str = ""
    """``module:function`` under ``toolwire.decode.tags`` writing a call (default:
    ``render`` in ``module``)."""
    several: tuple[str, str, str] = ("", "\n", "")
    """How the template writes several calls in one answer: the section's opening and
    closing markup (which one call's ``render`` carries too, and several calls share), and
    what goes between two calls."""


_XML = (
    "Each argument is an element named after it. Write a value as plain text; put a "
    "value holding <, & or meaningful surrounding whitespace (code, file contents) in "
    "<![CDATA[...]]>. An object argument is an element with child elements; a list "
    "repeats its element once per item."
)
_QWEN = (
    "Write one <parameter=...> block per argument. A string value is written as is, "
    "on its own lines; any other value as JSON."
)

_KEYS = (
    "Write one <arg_key>/<arg_value> pair per argument. A string value is written as is; "
    "any other value as JSON."
)
_NAMED = (
    "Write one <parameter name=...> element per argument. A string value is written as "
    "is; any other value as JSON."
)
_PYTHONIC = (
    "The calls are one Python list; each argument is KEY=VALUE, the value a Python literal "
    "(strings quoted, True, False, None, lists and dicts)."
)

_DS_OPEN, _DS_CLOSE = "<｜tool▁calls▁begin｜>", "<｜tool▁calls▁end｜>"

# One line per format, long as it may be: an added format is one line here.
# fmt: off
_FORMATS: Final[tuple[TextFormat, ...]] = (
    TextFormat("xml-tags", "xml", "XmlTagsDecoder", ("xml_tags",), "tool_result", _XML, "_render:xml"),  # noqa: E501
    TextFormat("hermes", "hermes", "HermesDecoder", render="_render:hermes"),
    TextFormat("qwen3-coder", "qwen", "Qwen3CoderDecoder", ("qwen3_coder",), rules=_QWEN, render="_render:qwen3_coder"),  # noqa: E501
    TextFormat("llama3_json", "llama", "Llama3JsonDecoder", ("llama4_json",), several=("", "; ", "")),  # noqa: E501
    TextFormat("pythonic", "pythonic", "PythonicDecoder", ("llama4_pythonic",), rules=_PYTHONIC, several=("[", ", ", "]")),  # noqa: E501
    TextFormat("mistral", "mistral", "MistralDecoder", several=("", "", "")),
    TextFormat("deepseek_v3", "deepseek", "DeepSeekV3Decoder", several=(_DS_OPEN, "\n", _DS_CLOSE)),
    TextFormat("deepseek_v31", "deepseek", "DeepSeekV31Decoder", render="deepseek:render_v31", several=(_DS_OPEN, "", _DS_CLOSE)),  # noqa: E501
    TextFormat("granite", "jsonlist", "GraniteDecoder", render="jsonlist:render_granite", several=("<|tool_call|>[", ", ", "]")),  # noqa: E501
    TextFormat("phi4_mini", "jsonlist", "Phi4MiniDecoder", ("phi4_mini_json",), render="jsonlist:render_phi4_mini", several=("functools[", ", ", "]")),  # noqa: E501
    TextFormat("glm45", "glm45", "Glm45Decoder", ("glm47",), rules=_KEYS, render="_render:glm45"),
    TextFormat("kimi_k2", "kimi_k2", "KimiK2Decoder", render="_render:kimi_k2", several=("<|tool_calls_section_begin|>", "", "<|tool_calls_section_end|>")),  # noqa: E501
    TextFormat("minimax_m2", "minimax_m2", "MiniMaxM2Decoder", rules=_NAMED, render="_render:minimax_m2", several=("<minimax:tool_call>\n", "", "</minimax:tool_call>")),  # noqa: E501
    TextFormat("openai_harmony", "harmony", "HarmonyDecoder", ("harmony", "gpt_oss"), render="_render:harmony", several=("", "<|start|>assistant", "")),  # noqa: E501
    TextFormat("seed_oss", "seed_oss", "SeedOssDecoder", rules=_QWEN, render="_render:seed_oss"),
    TextFormat("qwen3_xml", "qwen", "Qwen3CoderDecoder", rules=_QWEN, render="_render:qwen3_coder"),
)
# fmt: on

FORMATS: Final[dict[str, TextFormat]] = {f.name: f for f in _FORMATS}
"""Every text format, by its canonical name, in the order toolwire lists them."""
TEXT_FORMATS: Final[tuple[str, ...]] = tuple(FORMATS)

_NAMES: Final[dict[str, str]] = {
    spelling.replace("-", "_"): f.name for f in _FORMATS for spelling in (f.name, *f.aliases)
}


def canonical(name: str) -> str | None:
    """The registered name ``name`` stands for (any alias or spelling), or None."""
    return _NAMES.get(name.strip().lower().replace("-", "_"))


def text_format(name: str) -> TextFormat:
    """The format named ``name`` (any alias or spelling); ``KeyError`` with the names else."""
    known = canonical(name)
    if known is None:
        raise KeyError(f"unknown tool format {name!r}; use one of: {', '.join(TEXT_FORMATS)}")
    return FORMATS[known]


def text_decoder(name: str, schemas: Mapping[str, Any] | None = None) -> TextDecoder:
    """A fresh decoder for ``name``, given the declared tools (name -> parameters schema)."""
    fmt = text_format(name)
    cls = getattr(importlib.import_module(_TAGS + fmt.module), fmt.decoder)
    decoder: TextDecoder = cls(schemas)
    return decoder


def renderer(name: str) -> Callable[[str, Mapping[str, Any]], str]:
    """``render(tool name, arguments) -> text`` for ``name``: a call as its model writes it."""
    fmt = text_format(name)
    module, _, function = (fmt.render or f"{fmt.module}:render").partition(":")
    render: Callable[[str, Mapping[str, Any]], str] = getattr(
        importlib.import_module(_TAGS + module), function
    )
    return render


def render_many(name: str) -> Callable[[Sequence[tuple[str, Mapping[str, Any]]]], str]:
    """``render([(tool name, arguments), ...]) -> text`` for ``name``: several calls in one
    answer, as its model writes them (one section around them all where the format has one)."""
    fmt = text_format(name)
    one = renderer(name)
    opening, between, closing = fmt.several

    def render(calls: Sequence[tuple[str, Mapping[str, Any]]]) -> str:
        bodies = [one(tool, arguments) for tool, arguments in calls]
        inner = [body.removeprefix(opening).removesuffix(closing) for body in bodies]
        return opening + between.join(inner) + closing

    return render


__all__ = [
    "FORMATS",
    "TEXT_FORMATS",
    "TextDecoder",
    "TextFormat",
    "canonical",
    "render_many",
    "renderer",
    "text_decoder",
    "text_format",
]
