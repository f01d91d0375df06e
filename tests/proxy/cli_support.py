"""What the tests of the real coding CLIs through the proxy share (Codex, opencode,
gemini-cli): a proxy with its ledger in front of two fake upstreams of different families,
each playing one scripted task (``tests/fakes/scripted.py``), and the ledger's rows."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.fakes.http import FakeServer
from tests.fakes.scripted import Call, task
from tests.proxy.people_support import wait_for
from tests.proxy.support import serving, write_config
from toolwire.proxy import create_app, load_settings

# The backend of each family in ``write_config``: ``local`` speaks OpenAI Chat.
BACKENDS = {"anthropic": "claude", "openai": "local"}
Script = tuple[list[Call], str]  # the tool calls an upstream makes, one a request; its answer


@dataclass
class Proxied:
    url: str  # the proxy's base URL
    config: Path
    ledger: Path
    upstreams: dict[str, FakeServer]  # by family


@contextmanager
def proxied(
    tmp: Path,
    family: str,
    calls: list[Call],
    done: str,
    other: Script | None = None,
    extra: str = "",
) -> Iterator[Proxied]:
    """The proxy, its default backend the one of ``family``, in front of an Anthropic and
    an OpenAI Chat upstream that both play the task (the one not of ``family`` plays
    ``other`` when given); ``extra`` adds lines to its ``[proxy]`` table (a ``token``);
    the ledger is flushed on exit."""
    ledger = tmp / "ledger.db"
    plays = {f: (calls, done) if f == family or other is None else other for f in BACKENDS}
    with (
        FakeServer(task("anthropic", *plays["anthropic"])) as anthropic,
        FakeServer(task("openai", *plays["openai"])) as openai,
    ):
        config = write_config(tmp, openai.url, anthropic.url, f'ledger = "{ledger}"\n{extra}')
        text = config.read_text().replace('"local"', f'"{BACKENDS[family]}"')
        config.write_text(text)
        settings = load_settings(config)
        with serving(create_app(settings), settings, lifespan="on") as url:
            yield Proxied(url, config, ledger, {"anthropic": anthropic, "openai": openai})


def ledger_rows(path: Path, count: int) -> list[dict[str, Any]]:
    """The ledger's rows once it holds ``count`` (its writer works off the request path)."""

    def rows() -> list[dict[str, Any]]:
        if not path.exists():
            return []
        with sqlite3.connect(path) as db:
            db.row_factory = sqlite3.Row
            return [dict(r) for r in db.execute("SELECT * FROM toolwire_ledger ORDER BY at")]

    wait_for(lambda: len(rows()) >= count)
    return rows()
