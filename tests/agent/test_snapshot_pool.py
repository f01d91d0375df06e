"""First snapshots never delay a prompt.

Each ``session/new`` starts its session's first snapshot in the background (every file
read once). Forty of them on a project of 2,000 files used to fill the thread pool the
agent does all its other file work in, so a prompt waited for all of them. They run in a
pool of their own now, one at a time, at the lowest priority.
"""

from __future__ import annotations

import time

import pytest

from tests.agent.pair import AgentUnderTest
from toolwire.checkpoints import unavailable

pytestmark = pytest.mark.anyio
SESSIONS = 40
FILES = 2000
#: Seconds a prompt may take with the snapshots queued (one answer from the model).
PROMPT = 3.0


async def test_forty_first_snapshots_do_not_delay_a_prompt(acp: AgentUnderTest) -> None:
    if unavailable() is not None:
        pytest.skip(f"no checkpoints here: {unavailable()}")
    for n in range(FILES):
        folder = acp.root / f"pkg{n // 100}"
        folder.mkdir(exist_ok=True)
        (folder / f"mod{n}.py").write_text(f"VALUE = {n}\n" * 20, encoding="utf-8")
    acp.model.script("Hello.")
    sessions = [await acp.start() for _ in range(SESSIONS)]
    began = time.perf_counter()
    outcome = await acp.prompt(sessions[0], "Hi")
    took = time.perf_counter() - began
    assert outcome.stop_reason == "end_turn"
    assert took < PROMPT, f"the prompt took {took:.1f} s behind {SESSIONS} first snapshots"
