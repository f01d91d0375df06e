"""One damaged row in the session store costs that session only.

A row whose ``additional_dirs`` or ``config`` is not JSON (a crash mid-write on an old
version, a hand edit, a disk error) used to fail ``session/list`` for every session.
"""

from __future__ import annotations

import sqlite3

import pytest

from tests.agent.pair import AgentUnderTest
from toolwire.agent.store.database import default_db_path

pytestmark = pytest.mark.anyio


@pytest.mark.parametrize(
    ("column", "value"),
    [("additional_dirs", "not json"), ("config", "[1, 2"), ("title", b"\x00bytes")],
)
async def test_a_damaged_row_is_listed_as_damaged_and_the_others_as_before(
    acp: AgentUnderTest, column: str, value: object
) -> None:
    run = acp.run
    await run.conn.initialize(protocol_version=1)
    good, bad = await acp.start(), await acp.start()
    with sqlite3.connect(default_db_path()) as db:
        db.execute(f"UPDATE sessions SET {column} = ? WHERE id = ?", (value, bad))
    listed = {s.session_id: s for s in (await run.conn.list_sessions()).sessions}
    assert set(listed) == {good, bad}
    assert listed[good].field_meta is None
    damage = listed[bad].field_meta
    assert damage is not None
    assert column in damage["toolwire"]["damaged"]
    # The session itself is still there to open (with defaults for what was lost).
    await run.conn.load_session(cwd=str(acp.root), session_id=bad, mcp_servers=[])
