"""Tool definitions shaped like the ones MCP servers and Claude Code send (written here).

Each exercises what generators really emit: zod's draft-07 output with ``$schema`` and
``additionalProperties: false``, pydantic's ``$defs``/``$ref``/``anyOf``-with-null and
``title`` on every field, hand-written server schemas with type lists, ``const``,
``format``, ``examples``, free-form maps, arrays without ``items``, recursion, and a
description far longer than any limit ever documented.
"""

from __future__ import annotations

from typing import Any

from toolwire.history import ToolSpec

DRAFT7 = "http://json-schema.org/draft-07/schema#"
LONG_DESCRIPTION = "Runs a shell command in the session's terminal. " + " ".join(
    f"Rule {n}: quote paths with spaces and prefer absolute paths." for n in range(120)
)


def _zod(properties: dict[str, Any], required: list[str]) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": properties,
        "required": required,
        "additionalProperties": False,
        "$schema": DRAFT7,
    }


CLAUDE_CODE_STYLE: list[ToolSpec] = [
    ToolSpec(
        "Bash",
        LONG_DESCRIPTION,
        _zod(
            {
                "command": {"type": "string", "description": "The command to execute"},
                "timeout": {"type": "number", "description": "Optional timeout in ms"},
                "run_in_background": {"type": "boolean"},
            },
            ["command"],
        ),
    ),
    ToolSpec(
        "MultiEdit",
        "Several edits to one file, applied in order.",
        _zod(
            {
                "file_path": {"type": "string", "description": "Absolute path"},
                "edits": {
                    "type": "array",
                    "minItems": 1,
                    "items": {
                        "type": "object",
                        "properties": {
                            "old_string": {"type": "string"},
                            "new_string": {"type": "string"},
                            "replace_all": {"type": "boolean", "default": False},
                        },
                        "required": ["old_string", "new_string"],
                        "additionalProperties": False,
                    },
                },
            },
            ["file_path", "edits"],
        ),
    ),
    ToolSpec(
        "WebFetch",
        "Fetch a URL and answer a question about it.",
        _zod(
            {
                "url": {"type": "string", "format": "uri", "description": "The URL"},
                "prompt": {"type": "string"},
            },
            ["url", "prompt"],
        ),
    ),
    ToolSpec(
        "NotebookEdit",
        "Replace, insert or delete a notebook cell.",
        _zod(
            {
                "notebook_path": {"type": "string"},
                "cell_id": {"type": "string"},
                "new_source": {"type": "string"},
                "cell_type": {"type": "string", "enum": ["code", "markdown"]},
                "edit_mode": {"type": "string", "enum": ["replace", "insert", "delete"]},
            },
            ["notebook_path", "new_source"],
        ),
    ),
    ToolSpec(
        "Grep",
        "Search file contents.",
        _zod(
            {
                "pattern": {"type": "string"},
                "-i": {"type": "boolean"},
                "-A": {"type": "number"},
                "multiline": {"type": "boolean"},
            },
            ["pattern"],
        ),
    ),
    ToolSpec("ExitPlanMode", "Leave plan mode.", _zod({}, [])),
]

_PYDANTIC_DEFS = {
    "Filter": {
        "title": "Filter",
        "type": "object",
        "properties": {
            "field": {"title": "Field", "type": "string"},
            "op": {"title": "Op", "enum": ["eq", "lt", "gt"], "type": "string"},
            "value": {
                "title": "Value",
                "anyOf": [{"type": "string"}, {"type": "number"}, {"type": "null"}],
            },
        },
        "required": ["field", "op"],
    },
    "Order": {"title": "Order", "enum": ["asc", "desc"], "type": "string"},
}

MCP_STYLE: list[ToolSpec] = [
    ToolSpec(
        "mcp__issues__search_issues",
        "Search the tracker's issues.",
        {
            "$defs": _PYDANTIC_DEFS,
            "title": "search_issuesArguments",
            "type": "object",
            "properties": {
                "query": {"title": "Query", "type": "string", "examples": ["label:bug"]},
                "filters": {
                    "title": "Filters",
                    "type": "array",
                    "items": {"$ref": "#/$defs/Filter"},
                    "default": [],
                },
                "order": {"$ref": "#/$defs/Order", "default": "desc"},
                "limit": {
                    "title": "Limit",
                    "anyOf": [{"type": "integer", "minimum": 1}, {"type": "null"}],
                    "default": None,
                },
                "since": {"title": "Since", "type": "string", "format": "date-time"},
            },
            "required": ["query"],
        },
    ),
    ToolSpec(
        "mcp__everything__get-sum",
        "Adds two numbers.",
        {
            "type": "object",
            "properties": {"a": {"type": "number"}, "b": {"type": "number"}},
            "required": ["a", "b"],
            "additionalProperties": False,
            "$schema": "http://json-schema.org/draft-07/schema#",
        },
    ),
    ToolSpec(
        "mcp__db__query",
        "Run a parameterized SQL query.",
        {
            "type": "object",
            "properties": {
                "sql": {"type": "string", "pattern": "^\\s*(SELECT|WITH)\\b"},
                "params": {"type": "array", "description": "Positional parameters"},
                "options": {"type": "object", "additionalProperties": True},
            },
            "required": ["sql"],
        },
    ),
    ToolSpec(
        "mcp__mail__send",
        "Send an e-mail.",
        {
            "type": "object",
            "properties": {
                "to": {"type": "array", "items": {"type": "string", "format": "email"}},
                "cc": {"type": ["array", "null"], "items": {"type": "string"}},
                "priority": {"type": "integer", "enum": [1, 2, 3]},
                "kind": {"const": "plain"},
                "id": {"type": "string", "format": "uuid"},
                "attachment": {
                    "oneOf": [
                        {"type": "object", "properties": {"path": {"type": "string"}}},
                        {"type": "object", "properties": {"url": {"type": "string"}}},
                    ]
                },
                "headers": {
                    "type": "object",
                    "properties": {"reply-to": {"type": "string"}},
                    "additionalProperties": {"type": "string"},
                },
            },
            "required": ["to", "subject"],
        },
    ),
    ToolSpec(
        "mcp__fs__tree",
        "A directory tree.",
        {
            "type": "object",
            "properties": {"root": {"$ref": "#/$defs/Node"}},
            "$defs": {
                "Node": {
                    "type": "object",
                    "properties": {
                        "name": {"type": "string"},
                        "children": {"type": "array", "items": {"$ref": "#/$defs/Node"}},
                    },
                }
            },
        },
    ),
    ToolSpec(
        "mcp__browser__click",
        "Click an element.",
        {
            "allOf": [
                {"type": "object", "properties": {"selector": {"type": "string"}}},
                {"properties": {"button": {"type": "string", "default": "left"}}},
            ],
            "required": ["selector"],
        },
    ),
    ToolSpec("mcp__time__now", "The current time.", {"type": "object"}),
    ToolSpec("mcp__weird__no_schema", "A server that sent no schema.", {}),
]

ALL = CLAUDE_CODE_STYLE + MCP_STYLE

BAD_NAMES = [
    "mcp__notes__notes.search",  # MCP allows dots; Anthropic and OpenAI do not
    "mcp__my server__do it",
    "mcp__" + "very_long_server_name_" * 3 + "__tool",  # over 64 characters
    "mcp__café__ménu",
    "9lives",  # Gemini wants a letter or _ first
]
