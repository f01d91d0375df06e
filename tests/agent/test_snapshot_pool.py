"""First snapshots never delay a prompt.

Each ``session/new`` starts its session's first snapshot in the background (every file
read once). Forty of them on a project of 2,000 files used to fill the thread pool the
agent does all its other file work in, so a prompt waited for all of them. They run in a
pool of their own now, one at a time, at the lowest priority.
"""

from __future__ import annotations

import pytest

from tests.agent.pair import AgentUnderTest
from toolwire.agent.features import checkpointing
from toolwire.checkpoints import unavailable
from toolwire.checkpoints.store import store_dir

pytestmark = pytest.mark.anyio
SESSIONS = 40
FILES = 2000


def first_snapshots_done(sessions: list[str]) -> int:
    """How many of ``sessions`` have their first snapshot (``start``) written."""
    root = checkpointing.root()
    return sum((store_dir(root, s) / "refs" / "checkpoints" / "start").exists() for s in sessions)


async def test_forty_first_snapshots_do_not_delay_a_prompt(acp: AgentUnderTest) -> None:
    if unavailable() is not None:
        pytest.skip(f"no checkpoints here: {unavailable()}")
    for n in range(FILES):
        folder = acp.root / f"pkg{n // 100}"
        folder.mkdir(exist_ok=True)
        (folder / f"mod{n}.py").write_text(f"VALUE = {n}\n" * 20, encoding="utf-8")
    acp.model.script("Hello.")
    sessions = [await acp.start() for _ in range(SESSIONS)]
    outcome = await acp.prompt(sessions[0], "Hi")
    done = first_snapshots_done(sessions[1:])
    assert outcome.stop_reason == "end_turn"
    # Counted, not timed: behind the snapshots, the prompt is answered once (nearly) all
    # of them are written; ahead of them, while most still wait their turn.
    assert done < (SESSIONS - 1) // 2, f"the prompt waited for {done} other first snapshots"
