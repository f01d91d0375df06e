"""Two proxy replicas on one Redis: a ``previous_response_id`` answered by one is
continued by the other (the answer is kept in the shared session store)."""

from __future__ import annotations

from pathlib import Path

import openai
import pytest

from tests.fakes.http import FakeServer
from tests.proxy.dialect_support import proxy, text_reply, upstream_messages
from tests.proxy.test_redis import redis_server, redis_url  # noqa: F401 (fixtures)
from toolwire.proxy.stores import RedisStore

pytestmark = [pytest.mark.e2e, pytest.mark.xdist_group("redis-server")]


def test_a_chain_started_on_one_replica_continues_on_the_other(
    tmp_path: Path,
    redis_url: str,  # noqa: F811
) -> None:
    with FakeServer() as upstream:
        upstream.script(
            text_reply("anthropic", "One."),
            text_reply("openai", "Two."),
            text_reply("anthropic", "Three."),
        )
        (tmp_path / "a").mkdir()
        (tmp_path / "b").mkdir()
        store_a, store_b = RedisStore(redis_url), RedisStore(redis_url)
        with (
            proxy(tmp_path / "a", upstream, store=store_a) as a,
            proxy(tmp_path / "b", upstream, store=store_b) as b,
        ):
            one = openai.OpenAI(base_url=a, api_key="k", max_retries=0)
            two = openai.OpenAI(base_url=b, api_key="k", max_retries=0)
            with one, two:
                first = one.responses.create(model="claude,claude-up", input="Q1")
                second = two.responses.create(
                    model="local,qwen3", input="Q2", previous_response_id=first.id
                )
                third = one.responses.create(
                    model="claude,claude-up", input="Q3", previous_response_id=second.id
                )
    assert third.output_text == "Three."
    sent = upstream_messages(upstream.requests[2].json())
    order = [sent.index(t) for t in ("Q1", "One.", "Q2", "Two.", "Q3")]
    assert order == sorted(order)
