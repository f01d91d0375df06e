"""People's keys, budgets and the ledger on the OpenAI routes: the same gate and the same
ledger rows as ``/v1/messages`` (``test_people.py``), the key sent as a Bearer token."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import openai
import pytest

from tests.fakes.http import FakeServer
from tests.proxy.people_support import answering, priced_config, proxied, served, wait_for
from toolwire.proxy import load_settings
from toolwire.proxy.people.accounts import issue

USAGE = {"input_tokens": 120, "cache_read_input_tokens": 3000}
OUTPUT = 40


def _ledger(path: Path) -> list[tuple[Any, ...]]:
    with sqlite3.connect(path) as db:
        return db.execute(
            'SELECT "user", team, backend, input_tokens, output_tokens, cache_read_tokens,'
            " status FROM toolwire_ledger ORDER BY at"
        ).fetchall()


def test_each_dialect_request_is_charged_to_the_person_in_the_ledger(tmp_path: Path) -> None:
    ledger = tmp_path / "spend.db"
    with FakeServer(respond=answering(USAGE, OUTPUT)) as upstream:
        config = priced_config(tmp_path, upstream.url, f'ledger = "{ledger}"')
        with served(load_settings(config)) as (url, proxy):
            # A request without an output limit reserves 32,000 output tokens ($3.20 here)
            # until it settles: room for three at once.
            _, secret = issue(proxy.people.accounts, "alice", team="eng", budget="20usd/30d")
            with openai.OpenAI(base_url=f"{url}/v1", api_key=secret, max_retries=0) as client:
                ask: Any = [{"role": "user", "content": "hi"}]
                chat = client.chat.completions.create(model="claude-up", messages=ask)
                answer = client.responses.create(model="claude-up", input="hi", store=False)
                streamed = list(client.responses.create(model="claude-up", input="hi", stream=True))
            wait_for(lambda: len(_ledger(ledger)) == 3)
    assert chat.usage is not None
    assert chat.usage.completion_tokens == OUTPUT
    # OpenAI counts cache reads as input; the Anthropic upstream counted them apart.
    assert chat.usage.prompt_tokens == 120 + 3000
    assert chat.usage.prompt_tokens_details is not None
    assert chat.usage.prompt_tokens_details.cached_tokens == 3000
    assert answer.output_text == "ok"
    assert streamed[-1].type == "response.completed"
    row = ("alice", "eng", "claude", 120, OUTPUT, 3000, "ok")
    assert _ledger(ledger) == [row, row, row]


def test_over_budget_is_refused_in_openais_shape(tmp_path: Path) -> None:
    with proxied(tmp_path, answering({"input_tokens": 10}, 1000)) as (url, proxy, upstream):
        _, secret = issue(proxy.people.accounts, "alice", team="eng", budget="0.25usd/1d")
        with openai.OpenAI(base_url=f"{url}/v1", api_key=secret, max_retries=0) as client:
            ask: Any = [{"role": "user", "content": "hi"}]
            for _ in range(2):
                client.chat.completions.create(model="claude-up", messages=ask, max_tokens=1000)
            with pytest.raises(openai.PermissionDeniedError) as refused:
                client.responses.create(model="claude-up", input="hi", max_output_tokens=1000)
    assert refused.value.status_code == 403
    assert "budget exceeded for user alice" in refused.value.message
    assert refused.value.code == "insufficient_permissions"
    assert len(upstream.requests) == 2
