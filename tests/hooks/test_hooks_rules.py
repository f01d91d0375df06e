"""toolwire.hooks without a process: settings read, matchers, verdicts, trust."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from toolwire.agent.turn.hooked import hook_name
from toolwire.hooks import DEFAULT_TIMEOUT, Outcome, TrustStore, matches, read_sources, verdict
from toolwire.mcp import McpTool


@pytest.mark.parametrize(
    ("matcher", "name", "selected"),
    [
        ("", "Bash", True),
        ("*", "Read", True),
        ("Bash", "Bash", True),
        ("Bash", "BashOutput", False),  # plain names are exact
        ("Edit|Write", "Write", True),
        ("Edit|Write", "Read", False),
        ("mcp__github__.*", "mcp__github__create_issue", True),
        ("mcp__github__.*", "mcp__gitlab__create_issue", False),
        ("Notebook.*", "NotebookEdit", True),
        ("(", "Bash", False),  # a broken pattern selects nothing
    ],
)
def test_matchers(matcher: str, name: str, selected: bool) -> None:
    assert matches(matcher, name) is selected


def test_mcp_tools_are_named_as_claude_code_names_them() -> None:
    tool = McpTool("mcp__my_srv__get-sum", "my.srv", "get.sum", None, "", {})
    assert hook_name(tool) == "mcp__my.srv__get.sum"  # not the provider-safe rewrite
    assert matches("mcp__my.srv__.*", hook_name(tool))


def _settings(path: Path, hooks: object) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"hooks": hooks}), encoding="utf-8")


def test_sources_user_first_and_only_command_hooks(tmp_path: Path) -> None:
    home, project = tmp_path / "home", tmp_path / "project"
    _settings(
        home / ".claude" / "settings.json",
        {"Stop": [{"hooks": [{"type": "command", "command": "a"}]}]},
    )
    hooks = {
        "PreToolUse": [
            {
                "matcher": "Bash",
                "hooks": [
                    {"type": "command", "command": "b", "timeout": 5},
                    {"type": "prompt", "prompt": "is it safe?"},
                ],
            }
        ],
        "Notification": [{"hooks": [{"type": "command", "command": "ignored"}]}],
    }
    _settings(project / ".claude" / "settings.local.json", hooks)
    sources = read_sources(project, home)
    assert [(s.trusted, s.commands()) for s in sources] == [(True, ["a"]), (False, ["b"])]
    assert sources[0].groups[0].commands[0].timeout == DEFAULT_TIMEOUT
    assert sources[1].groups[0].commands[0].timeout == 5
    assert any("prompt hook" in p for p in sources[1].problems)


def test_a_session_in_home_reads_its_file_once_as_trusted(tmp_path: Path) -> None:
    _settings(
        tmp_path / ".claude" / "settings.json",
        {"Stop": [{"hooks": [{"type": "command", "command": "a"}]}]},
    )
    assert [s.trusted for s in read_sources(tmp_path, tmp_path)] == [True]


def test_exit_codes_and_json_answers() -> None:
    blocked = verdict("PreToolUse", [Outcome("x", 2, stderr="nope\n")])
    assert blocked.blocked
    assert blocked.reason == "nope"
    failed = verdict("PreToolUse", [Outcome("x", 1, stderr="oops")])
    assert not failed.blocked
    assert failed.shown == ["PreToolUse hook `x` failed (exit 1): oops"]
    late = verdict("Stop", [Outcome("x", None, timeout=3)])
    assert not late.blocked
    assert "timed out after 3 s" in late.shown[0]
    asks = [
        Outcome("a", 0, json.dumps({"hookSpecificOutput": {"permissionDecision": "allow"}})),
        Outcome(
            "b",
            0,
            json.dumps(
                {
                    "hookSpecificOutput": {
                        "permissionDecision": "deny",
                        "permissionDecisionReason": "r",
                    }
                }
            ),
        ),
        Outcome("c", 0, json.dumps({"hookSpecificOutput": {"permissionDecision": "ask"}})),
    ]
    denied = verdict("PreToolUse", asks)
    assert denied.permission == "deny"
    assert denied.reason == "r"
    assert verdict("PreToolUse", [Outcome("a", 0, '{"decision": "approve"}')]).permission == "allow"
    assert verdict("SessionStart", [Outcome("a", 0, "ctx\n")]).context == ["ctx"]
    assert verdict("PostToolUse", [Outcome("a", 0, "ctx\n")]).context == []
    start = verdict("SessionStart", [Outcome("a", 2, stderr="no")])  # cannot block
    assert not start.blocked
    assert start.shown == ["SessionStart hook `a`: no"]
    stop = verdict("Stop", [Outcome("a", 0, '{"decision": "block", "reason": "go on"}')])
    assert stop.blocked
    assert stop.reason == "go on"


def test_trust_by_content(tmp_path: Path) -> None:
    path = tmp_path / "p" / ".claude" / "settings.json"
    _settings(path, {"Stop": [{"hooks": [{"type": "command", "command": "a"}]}]})
    store = TrustStore(tmp_path / "trust.json")
    [source] = read_sources(tmp_path / "p", tmp_path / "home")
    assert not store.trusted(source)
    store.remember(source)
    assert TrustStore(tmp_path / "trust.json").trusted(source)
    _settings(path, {"Stop": [{"hooks": [{"type": "command", "command": "b"}]}]})
    [changed] = read_sources(tmp_path / "p", tmp_path / "home")
    assert not store.trusted(changed)
