"""Compaction, the switch and the request count the same system prompt and tools.

The compaction budget used to re-derive "the tools" on its own: every built-in tool,
``WebSearch`` always, never ``Task``, never a subagent's subset; so it sized its room
for a request other than the one sent. Both now read ``request_shape``.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.agent.pair import agent_under_test
from tests.agent.test_web_search import searxng
from tests.fakes.http import FakeServer
from toolwire.agent.features.compaction import Compactor
from toolwire.agent.session.request_shape import request_shape
from toolwire.agent.session.state import Session, SessionIdentity
from toolwire.agent.turn.request import Requests
from toolwire.context import ContextMeter, backend_window, estimate_request
from toolwire.context.tokens import estimate_text, estimate_tools

pytestmark = pytest.mark.anyio


async def _silent(line: str) -> None:
    raise AssertionError(f"nothing is said here: {line}")


async def test_compaction_counts_the_tools_the_request_sends(tmp_path: Path) -> None:
    with FakeServer(respond=searxng) as server:
        web = f'\n[tools.web]\nsearch = "searxng"\nsearxng_url = "{server.url}"\n'
        async with agent_under_test(tmp_path, config=web) as acp:
            acp.model.script("Hello.")
            sid = await acp.start()
            assert (await acp.prompt(sid, "Hi")).stop_reason == "end_turn"
            session, runtime = acp.run.agent._sessions[sid], acp.run.agent._rt()
            # A subagent's view of the same session: only its own built-in tools.
            who = session.who
            subset = SessionIdentity(who.id, who.cwd, tool_names=("Read", "Grep"))
            child = Session(subset, session.services, session.model, session.rules)
            for each in (session, child):
                config = runtime.config
                window = backend_window(config.backend(session.model.active), config.limits)
                gauge = ContextMeter(window)
                request, raw = Requests(each, runtime).build(gauge)
                fixed = estimate_text(request.system) + estimate_tools(list(request.tools))
                assert Compactor(each, runtime, _silent)._fixed() == fixed
                assert raw == estimate_request(request.system, request.messages, request.tools)
            names = [t.name for t in request_shape(session, runtime.config).tools]
            sub = [t.name for t in request_shape(child, runtime.config).tools]
    assert "Task" in names  # offered this turn
    assert "WebSearch" in names  # toolwire searches
    assert sub == ["Read", "Grep"]  # a subagent gets its subset and no Task
