"""The permission rule (``toolwire.agent.turn.policy``) over every mode, kind of tool and
session rule: built-in and MCP tools are decided by one function, and a refused call is
told in the same words whichever kind of tool it was."""

from __future__ import annotations

import pytest

from toolwire.agent.turn.policy import (
    SessionRules,
    Traits,
    builtin_traits,
    decide,
    mcp_traits,
    refusal,
    rejected,
)
from toolwire.config.choices import MODES, Mode
from toolwire.mcp import McpTool
from toolwire.tools import get_tool

TRAITS = {
    "built-in read": Traits("Grep", "read"),
    "built-in edit": Traits("Edit", "edit"),
    "built-in command": Traits("Bash", "command"),
    "MCP trusted read": Traits("mcp__s__get", "read", mcp=True, trusted=True),
    "MCP untrusted read": Traits("mcp__s__get", "read", mcp=True),
    "MCP trusted write": Traits("mcp__s__put", "command", mcp=True, trusted=True),
    "MCP untrusted write": Traits("mcp__s__put", "command", mcp=True),
}
RULES = ("none", "always allow", "always reject")
MODE_ORDER = ("ask", "accept-edits", "read-only", "plan", "bypass")
#: Per kind of tool, per mode (in ``MODE_ORDER``): the decision under each of ``RULES``
#: (a: allow, ?: ask, d: deny).
TABLE = {
    "built-in read": ("aad", "aad", "aad", "aad", "aaa"),
    "built-in edit": ("?ad", "aad", "ddd", "ddd", "aaa"),
    "built-in command": ("?ad", "?ad", "ddd", "ddd", "aaa"),
    "MCP trusted read": ("aad", "aad", "aad", "aad", "aaa"),
    "MCP untrusted read": ("?ad", "?ad", "aad", "aad", "aaa"),
    "MCP trusted write": ("?ad", "?ad", "ddd", "ddd", "aaa"),
    "MCP untrusted write": ("?ad", "?ad", "ddd", "ddd", "aaa"),
}
LETTER = {"a": "allow", "?": "ask", "d": "deny"}


def _rules(rule: str, name: str) -> SessionRules:
    if rule == "always allow":
        return SessionRules(always={name})
    if rule == "always reject":
        return SessionRules(never={name})
    return SessionRules()


CASES = [
    pytest.param(kind, mode, rule, LETTER[row[m][r]], id=f"{kind}-{mode}-{rule}")
    for kind, row in TABLE.items()
    for m, mode in enumerate(MODE_ORDER)
    for r, rule in enumerate(RULES)
]


def test_the_table_covers_every_mode() -> None:
    assert set(MODE_ORDER) == set(MODES)


@pytest.mark.parametrize(("kind", "mode", "rule", "expected"), CASES)
def test_decide(kind: str, mode: Mode, rule: str, expected: str) -> None:
    traits = TRAITS[kind]
    rules = _rules(rule, traits.name)
    assert decide(traits, mode, rules) == expected
    if expected == "deny":  # the model is told why, in words that fit the cause
        text = refusal(traits, mode, rules)
        if rule == "always reject":
            assert f"always reject {traits.name}" in text
            assert "Do not call it again" in text
        else:
            assert f"{mode} mode" in text


def test_a_rejection_reads_the_same_for_every_tool() -> None:
    texts = {rejected(t).replace(t.name, "NAME") for t in TRAITS.values()}
    assert len(texts) == 1


def test_traits_of_built_in_and_mcp_tools() -> None:
    def builtin(name: str) -> Traits:
        tool = get_tool(name)
        assert tool is not None
        return builtin_traits(tool)

    assert builtin("Read") == Traits("Read", "read")
    assert builtin("TodoWrite") == Traits("TodoWrite", "read")
    assert builtin("Write") == Traits("Write", "edit")
    assert builtin("Bash") == Traits("Bash", "command")
    tool = McpTool("mcp__s__get", "s", "get", None, "", {}, read_only=True, trusted=True)
    assert mcp_traits(tool) == Traits("mcp__s__get", "read", mcp=True, trusted=True)


@pytest.mark.parametrize("mode", ["ask", "accept-edits", "read-only", "plan"])
def test_a_fetch_is_asked_per_host_in_every_mode_but_bypass(mode: Mode) -> None:
    tool = get_tool("WebFetch")
    assert tool is not None
    docs = builtin_traits(tool, {"url": "https://docs.python.org/3/"})
    other = builtin_traits(tool, {"url": "https://evil.example/?q=secret"})
    assert (docs.subject, docs.rule) == ("docs.python.org", "WebFetch docs.python.org")
    allowed = SessionRules(always=frozenset({docs.rule}))
    assert decide(docs, mode, allowed) == "allow"
    assert decide(other, mode, allowed) == "ask"
    rejected_host = SessionRules(never=frozenset({other.rule}))
    assert decide(other, mode, rejected_host) == "deny"
    assert "evil.example" in refusal(other, mode, rejected_host)
    assert decide(docs, mode, rejected_host) == "ask"
    assert decide(other, "bypass", rejected_host) == "allow"
