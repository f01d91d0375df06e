"""What a hook prints, and what it is given, bounded and always encodable: a hook
printing 100 MB costs no memory beyond what is kept, an answer nested 25,000 deep is
ignored, and a lone surrogate in the history never fails a later hooked call."""

from __future__ import annotations

import sys
import tracemalloc
from pathlib import Path

import pytest

from tests.agent.pair import AgentUnderTest
from tests.agent.support import answer
from tests.agent.test_hooks import BASH, home_hooks, read_in, result
from toolwire.agent.session.hooks import run_command
from toolwire.hooks import HookCommand, Outcome, Verdict, verdict

pytestmark = pytest.mark.anyio
DEEP = "{" + '"a":{' * 25_000 + "}" * 25_001


def test_an_answer_nested_too_deeply_is_ignored() -> None:
    assert verdict("PreToolUse", [Outcome("deep", 0, DEEP)]) == Verdict()


async def test_a_deep_answer_leaves_the_turn_going_on(acp: AgentUnderTest) -> None:
    script = Path(acp.tmp_path / "deep.py")
    script.write_text(f"print({DEEP!r})\n", encoding="utf-8")
    home_hooks(acp, "PreToolUse", f"{sys.executable} {script}", matcher="Bash")
    acp.model.script(BASH, "Made.")
    acp.client.answers = ["allow_once"]
    outcome = await acp.prompt(await acp.start(), "Make the file")
    assert outcome.stop_reason == "end_turn"
    assert (acp.root / "made.txt").exists()


async def test_a_hook_printing_100_mb_keeps_its_cap_and_no_more(tmp_path: Path) -> None:
    hook = HookCommand("head -c 100000000 /dev/zero | tr '\\0' a; echo done >&2", timeout=60)
    tracemalloc.start()
    try:
        got = await run_command(hook, b"{}", str(tmp_path), {"PATH": "/usr/bin:/bin"})
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert got.exit_code == 0
    assert got.stdout == "a" * 64_000
    assert got.stderr == "done\n"
    assert peak < 4_000_000, f"{peak:,} bytes held at the peak"


async def test_a_lone_surrogate_in_the_history_reaches_hooks_replaced(acp: AgentUnderTest) -> None:
    body = home_hooks(acp, "PreToolUse", "true", matcher="Bash")
    acp.model.script("Noted.", BASH, "Made.")
    acp.client.answers = ["allow_once"]
    sid = await acp.start()
    await acp.prompt(sid, "half an emoji: \ud83d")
    assert (await acp.prompt(sid, "Make the file")).stop_reason == "end_turn"
    assert (acp.root / "made.txt").exists()
    assert not result(acp.model.requests[-1].messages[-1]).is_error
    transcript = Path(read_in(body)["transcript_path"]).read_text(encoding="utf-8")
    assert "half an emoji: \ufffd" in transcript


async def test_a_lone_surrogate_in_a_calls_arguments_reaches_every_crossing_replaced(
    acp: AgentUnderTest,
) -> None:
    """The arguments a model sent with half a pair: the hook's input, the command line,
    the file written and the next request all get U+FFFD, and the turn goes on."""
    body = home_hooks(acp, "PreToolUse", "true")
    bash = ("tool", "Bash", {"command": "echo 'x\ud83d' > shell.txt"}, "toolu_1")
    write = ("tool", "Write", {"file_path": "w.txt", "content": "y\udc00\n"}, "toolu_2")
    acp.model.script(answer(bash), answer(write), "Made.")
    acp.client.answers = ["allow_once", "allow_once"]
    outcome = await acp.prompt(await acp.start(), "Make the files")
    assert outcome.stop_reason == "end_turn"
    assert (acp.root / "shell.txt").read_text(encoding="utf-8") == "x\ufffd\n"
    assert (acp.root / "w.txt").read_text(encoding="utf-8") == "y\ufffd\n"
    assert read_in(body)["tool_input"]["content"] == "y\ufffd\n"  # the last call's input
    for request in acp.model.requests[1:]:
        assert not result(request.messages[-1]).is_error
