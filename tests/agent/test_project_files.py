"""Files the agent reads on its own, made hostile by the project: a named pipe where an
agent definition or a hook settings file should be, a settings file linked to
``/dev/zero``, an enormous ``AGENTS.md``. None may hang a prompt or grow the agent's
memory; each is skipped with one line, and the prompt is answered.
"""

from __future__ import annotations

import contextlib
import os
import resource
from collections.abc import Callable, Iterator
from pathlib import Path

import anyio
import pytest

from tests.agent.pair import AgentUnderTest
from tests.agent.support import text_of
from toolwire.agent.session.instructions import MAX_BYTES

pytestmark = pytest.mark.anyio
HUGE = 3 * 1024**3  # a sparse file: no disk, but a whole read would be 3 GB of memory


def _fifo(path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    os.mkfifo(path)


def _zero(path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.symlink_to("/dev/zero")


def _huge(path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("wb") as handle:
        handle.write(b"# Rules\n\nBe brief.\n")
        handle.truncate(HUGE)


@contextlib.contextmanager
def _unblocked(root: Path) -> Iterator[None]:
    """On the way out, give any reader stuck on a pipe under ``root`` its end of file
    (so a failing run ends instead of leaving a thread waiting forever)."""
    try:
        yield
    finally:
        for path in root.rglob("*"):
            if path.is_fifo():
                with contextlib.suppress(OSError):
                    os.close(os.open(path, os.O_WRONLY | os.O_NONBLOCK))


CASES: dict[str, tuple[str, Callable[[Path], None]]] = {
    "fifo-agent-definition": (".claude/agents/reviewer.md", _fifo),
    "fifo-hook-settings": (".claude/settings.json", _fifo),
    "settings-linked-to-dev-zero": (".claude/settings.local.json", _zero),
    "fifo-toolwire-settings": (".toolwire/settings.json", _fifo),
    "agent-definition-linked-to-dev-zero": (".toolwire/agents/zero.md", _zero),
    "huge-agents-md": ("AGENTS.md", _huge),
    "fifo-custom-command": (".claude/commands/go.md", _fifo),
    "fifo-gitignore": ("lib/.gitignore", _fifo),  # git opens it for each checkpoint
}


@pytest.mark.parametrize("case", list(CASES))
async def test_a_hostile_project_file_is_skipped_and_the_prompt_answered(
    acp: AgentUnderTest, case: str
) -> None:
    where, make = CASES[case]
    make(acp.root / where)
    acp.model.function = lambda request: "Answered."
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    with _unblocked(acp.root):
        with anyio.fail_after(20):
            sid = await acp.start()
            result = await acp.prompt(sid, "Hello")
            await acp.prompt(sid, "/go")  # reads the command files
    assert result.stop_reason == "end_turn"
    assert "Answered." in text_of(acp.run.notifications())
    grown_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - rss
    assert grown_kb < 200 * 1024, f"the agent grew by {grown_kb} KB reading {where}"


async def test_a_skipped_agent_definition_is_named_to_the_user(acp: AgentUnderTest) -> None:
    _fifo(acp.root / ".claude" / "agents" / "reviewer.md")
    acp.model.function = lambda request: "Answered."
    with _unblocked(acp.root), anyio.fail_after(20):
        sid = await acp.start()
        await acp.prompt(sid, "Hello")
    said = text_of(acp.run.notifications())
    assert "reviewer.md" in said
    assert "is a named pipe (FIFO), not a regular file" in said


async def test_instructions_are_read_up_to_their_cap_from_a_huge_file(
    acp: AgentUnderTest,
) -> None:
    _huge(acp.root / "AGENTS.md")
    acp.model.function = lambda request: "Answered."
    with anyio.fail_after(20):
        sid = await acp.start()
        await acp.prompt(sid, "Hello")
    system = str(acp.model.bodies[0].get("system", ""))
    assert "Be brief." in system
    assert f"AGENTS.md (cut after {MAX_BYTES} of" in system  # the head, never the 3 GB
