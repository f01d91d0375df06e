"""A negative corpus: texts no text-format decoder may turn into a call of a declared tool.

Written for toolwire (nothing here is copied). Every text is fed to every text format's
decoder, with the tools ``TOOLS`` declared: prose and Markdown that talk about each of the
sixteen formats' markup, code that builds or parses it, JSON that names undeclared tools or
only looks like a call, and real calls of declared tools cut by ``max_tokens`` in the middle
of a value (``cut_calls``).
"""

from __future__ import annotations

from typing import Any

TOOLS: dict[str, dict[str, Any]] = {
    "Read": {"type": "object", "properties": {"file_path": {"type": "string"}}},
    "Write": {
        "type": "object",
        "properties": {"file_path": {"type": "string"}, "content": {"type": "string"}},
    },
    "Bash": {"type": "object", "properties": {"command": {"type": "string"}}},
}
"""The declared tools. Documentation's examples name others (``get_weather``, ``NAME``)."""

# DeepSeek's special tokens use the fullwidth bar and the lower one-eighth block.
_DS_CALLS, _DS_CALL, _DS_SEP = "<｜tool▁calls▁begin｜>", "<｜tool▁call▁begin｜>", "<｜tool▁sep｜>"
_DS_END, _DS_CALLS_END = "<｜tool▁call▁end｜>", "<｜tool▁calls▁end｜>"

PROSE: list[str] = [
    "Hermes models wrap each call in <tool_call> and </tool_call>, with a JSON object inside.",
    "In Qwen3-Coder the block is <tool_call>, then <function=NAME>, then one <parameter=KEY> "
    "per argument, each closed by </parameter>.",
    "The XML-tags format nests <tool_name> and <arguments> inside <tool>.",
    "Llama 3.1 starts a built-in call with <|python_tag|> and ends it with <|eom_id|>.",
    "Llama 4 writes calls as a Python list, like [func_name(param=value)], no JSON.",
    "Mistral puts [TOOL_CALLS] before the list; newer models write [TOOL_CALLS]name[ARGS].",
    f"DeepSeek V3 opens calls with {_DS_CALLS} and separates the type with {_DS_SEP}.",
    f"DeepSeek V3.1 dropped the type: {_DS_CALL}name{_DS_SEP}, then the JSON.",
    "Granite emits <|tool_call|> followed by a JSON list.",
    "Phi-4-mini prefixes its calls with functools and a JSON list.",
    "GLM-4.5 writes <tool_call> and the name, then <arg_key>city</arg_key> and "
    "<arg_value>Paris</arg_value> pairs.",
    "Kimi K2 opens <|tool_calls_section_begin|>, and every call is "
    "<|tool_call_begin|>functions.NAME:IDX before <|tool_call_argument_begin|>.",
    'MiniMax-M2 uses <minimax:tool_call> with <invoke name="..."> and <parameter name="...">.',
    "gpt-oss addresses a tool with <|channel|>commentary to=functions.NAME and ends with "
    "<|call|>; a final answer ends with <|return|>.",
    "Seed-OSS reasons in <seed:think> and calls in <seed:tool_call>.",
    "If a < b and c > d, the answer is [1, 2] and f(x) = x[0].",
]

MARKDOWN: list[str] = [
    "Use `<tool_call>` for Hermes and `[TOOL_CALLS]` for Mistral; see the table:\n\n"
    "| format | opener |\n|---|---|\n| glm45 | `<tool_call>NAME` |\n"
    "| kimi_k2 | `<|tool_calls_section_begin|>` |\n| harmony | `<|start|>assistant` |\n",
    "The Qwen3-Coder template, with placeholders:\n\n```xml\n<tool_call>\n<function=NAME>\n"
    "<parameter=KEY>\nVALUE\n</parameter>\n</function>\n</tool_call>\n```\n",
    "A Hermes example:\n\n```\n<tool_call>\n"
    '{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>\n```\n',
    "GLM-4.5's shape:\n\n```\n<tool_call>get_weather\n<arg_key>city</arg_key>\n"
    "<arg_value>Paris</arg_value>\n</tool_call>\n```\n",
    "Kimi's shape:\n\n```\n<|tool_calls_section_begin|><|tool_call_begin|>"
    'functions.get_weather:0<|tool_call_argument_begin|>{"city": "Paris"}'
    "<|tool_call_end|><|tool_calls_section_end|>\n```\n",
    'MiniMax\'s shape:\n\n```xml\n<minimax:tool_call>\n<invoke name="get_weather">\n'
    '<parameter name="city">Paris</parameter>\n</invoke>\n</minimax:tool_call>\n```\n',
    "gpt-oss's shape:\n\n```\n<|start|>assistant<|channel|>commentary "
    'to=functions.get_weather <|constrain|>json<|message|>{"city": "Paris"}<|call|>\n```\n',
    "Seed-OSS's shape:\n\n```\n<seed:tool_call>\n<function=get_weather>\n"
    "<parameter=city>Paris</parameter>\n</function>\n</seed:tool_call>\n```\n",
    'Other shapes, none of them a call here:\n\n```\n[get_weather(city="Paris")]\n'
    '[TOOL_CALLS]get_weather[ARGS]{"city": "Paris"}\n'
    '<|tool_call|>[{"name": "get_weather", "arguments": {"city": "Paris"}}]\n'
    'functools[{"name": "get_weather", "arguments": {"city": "Paris"}}]\n'
    f'{_DS_CALLS}{_DS_CALL}get_weather{_DS_SEP}{{"city": "Paris"}}{_DS_END}{_DS_CALLS_END}\n'
    "<tool><tool_name>get_weather</tool_name><arguments><city>Paris</city></arguments></tool>\n"
    "```\n",
]

CODE: list[str] = [
    "```python\ndef render(name, args):\n"
    '    return "<tool_call>\\n" + json.dumps({"name": name, "arguments": args}) + '
    '"\\n</tool_call>"\n```\n',
    "```python\nSTART = '<|tool_calls_section_begin|>'\nEND = '<|tool_calls_section_end|>'\n"
    "if text.startswith(START):\n    body = text[len(START):text.index(END)]\n```\n",
    "```js\nconst open = `<function=${name}>`;\nconst tag = '<parameter=' + key + '>';\n"
    "if (a<b && b>c) { emit('</function>'); }\n```\n",
    '```rust\nlet re = Regex::new(r"<invoke name=\\"([^\\"]+)\\">").unwrap();\n```\n',
    '```go\nfmt.Printf("<|channel|>%s<|message|>%s<|end|>", channel, body)\n```\n',
    "```python\nHEADER = '<arg_key>' + key + '</arg_key>'\n"
    "VALUE = '<arg_value>' + value + '</arg_value>'\n```\n",
]

JSON: list[str] = [
    '{"name": "get_weather", "parameters": {"city": "Paris"}}',
    'Here it is: {"name": "search", "arguments": {"q": "toolwire"}}',
    '```json\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n```\n',
    '[{"name": "get_weather", "arguments": {"city": "Paris"}}, '
    '{"name": "get_time", "arguments": {}}]',
    '{"type": "function", "function": {"name": "get_weather", "parameters": {"type": '
    '"object", "properties": {"city": {"type": "string"}}}}}',
    '{"name": "Read", "description": "Reads a file from disk.", "input_schema": '
    '{"type": "object", "properties": {"file_path": {"type": "string"}}}}',
    '{"name": "Ada Lovelace", "born": 1815, "known_for": ["the first program"]}',
    '[get_weather(city="Paris"), get_time(zone="UTC")]',
]

_CONTENT = "print(1)\nprint(2)\n"
_JSON_ARGS = '{"file_path": "a.py", "content": "print(1)\\nprint(2)\\n"}'
WHOLE_CALLS: dict[str, str] = {
    "hermes": f'<tool_call>\n{{"name": "Write", "arguments": {_JSON_ARGS}}}\n</tool_call>',
    "qwen3-coder": "<tool_call>\n<function=Write>\n<parameter=file_path>\na.py\n</parameter>\n"
    f"<parameter=content>\n{_CONTENT}\n</parameter>\n</function>\n</tool_call>",
    "xml-tags": "<tool><tool_name>Write</tool_name><arguments><file_path>a.py</file_path>"
    f"<content><![CDATA[{_CONTENT}]]></content></arguments></tool>",
    "llama3_json": f'<|python_tag|>{{"name": "Write", "parameters": {_JSON_ARGS}}}',
    "pythonic": '[Write(file_path="a.py", content="print(1)\\nprint(2)\\n")]',
    "mistral": f"[TOOL_CALLS]Write[ARGS]{_JSON_ARGS}",
    "deepseek_v3": f"{_DS_CALLS}{_DS_CALL}function{_DS_SEP}Write\n```json\n{_JSON_ARGS}\n```"
    f"{_DS_END}{_DS_CALLS_END}",
    "deepseek_v31": f"{_DS_CALLS}{_DS_CALL}Write{_DS_SEP}{_JSON_ARGS}{_DS_END}{_DS_CALLS_END}",
    "granite": f'<|tool_call|>[{{"name": "Write", "arguments": {_JSON_ARGS}}}]',
    "phi4_mini": f'functools[{{"name": "Write", "arguments": {_JSON_ARGS}}}]',
    "glm45": "<tool_call>Write\n<arg_key>file_path</arg_key>\n<arg_value>a.py</arg_value>\n"
    f"<arg_key>content</arg_key>\n<arg_value>{_CONTENT}</arg_value>\n</tool_call>",
    "kimi_k2": "<|tool_calls_section_begin|><|tool_call_begin|>functions.Write:0"
    f"<|tool_call_argument_begin|>{_JSON_ARGS}<|tool_call_end|><|tool_calls_section_end|>",
    "minimax_m2": '<minimax:tool_call>\n<invoke name="Write">\n<parameter name="file_path">'
    f'a.py</parameter>\n<parameter name="content">{_CONTENT}</parameter>\n</invoke>\n'
    "</minimax:tool_call>",
    "openai_harmony": "<|start|>assistant<|channel|>commentary to=functions.Write "
    f"<|constrain|>json<|message|>{_JSON_ARGS}<|call|>",
    "seed_oss": "<seed:tool_call>\n<function=Write>\n<parameter=file_path>a.py</parameter>\n"
    f"<parameter=content>{_CONTENT}</parameter>\n</function>\n</seed:tool_call>",
    "qwen3_xml": "<tool_call>\n<function=Write>\n<parameter=file_path>\na.py\n</parameter>\n"
    f"<parameter=content>\n{_CONTENT}\n</parameter>\n</function>\n</tool_call>",
}
"""A call of a declared tool in each of the sixteen formats, as its template writes it."""


def cut_calls() -> dict[str, str]:
    """Each whole call cut by ``max_tokens`` inside its ``content`` value (after
    ``print(1)`` and the first characters of ``print(2)``), with a line of prose before."""
    return {
        fmt: "Writing the file now.\n" + call[: call.index("print(2") + 3]
        for fmt, call in WHOLE_CALLS.items()
    }


def corpus() -> dict[str, str]:
    """Every text, by a label that says where it comes from."""
    out: dict[str, str] = {}
    for kind, texts in (("prose", PROSE), ("markdown", MARKDOWN), ("code", CODE), ("json", JSON)):
        out.update({f"{kind}-{n}": text for n, text in enumerate(texts)})
    out.update({f"cut-{fmt}": text for fmt, text in cut_calls().items()})
    return out
