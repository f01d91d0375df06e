"""Choosing a session's upstream key from a backend's pool (``toolwire.proxy.pools``)."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from tests.proxy.support import write_config
from toolwire.config.schema import ConfigError
from toolwire.proxy import load_settings
from toolwire.proxy.pools import choose

POOL = ["K1", "K2", "K3", "K4"]
SESSIONS = [f"session-{n}" for n in range(400)]


def _never(env: str) -> bool:
    return False


def test_sessions_spread_over_the_pool_and_each_chooses_the_same_key_every_time() -> None:
    chosen = {s: choose(POOL, s, None, _never) for s in SESSIONS}
    assert chosen == {s: choose(POOL, s, None, _never) for s in SESSIONS}
    counts = Counter(chosen.values())
    assert set(counts) == set(POOL)
    assert min(counts.values()) > len(SESSIONS) / len(POOL) / 2  # roughly even


def test_removing_a_key_moves_only_its_sessions() -> None:
    before = {s: choose(POOL, s, None, _never) for s in SESSIONS}
    after = {s: choose(["K1", "K2", "K4"], s, None, _never) for s in SESSIONS}
    moved = {s for s in SESSIONS if before[s] != after[s]}
    assert moved == {s for s in SESSIONS if before[s] == "K3"}


def test_a_cooling_key_is_left_and_the_pinned_key_is_kept_after_it_is_back() -> None:
    session = SESSIONS[0]
    first = choose(POOL, session, None, _never)
    moved = choose(POOL, session, first, lambda env: env == first)
    assert moved != first
    # The pin now names the new key: the session stays there (its prompt cache is there).
    assert choose(POOL, session, moved, _never) == moved


def test_when_every_key_cools_the_pinned_one_is_kept() -> None:
    assert choose(POOL, SESSIONS[0], "K2", lambda env: True) == "K2"
    assert choose(POOL, SESSIONS[0], None, lambda env: True) in POOL


def test_a_pin_to_a_key_no_longer_in_the_pool_is_ignored() -> None:
    assert choose(["K1", "K2"], SESSIONS[0], "K9", _never) in ("K1", "K2")


def test_api_key_envs_must_be_variable_names(tmp_path: Path) -> None:
    config = write_config(tmp_path, "http://127.0.0.1:9", "http://127.0.0.1:9")
    text = config.read_text().replace(
        'model = "claude-up"', 'model = "claude-up"\napi_key_envs = ["K1", "sk-ant-abc123"]'
    )
    config.write_text(text)
    with pytest.raises(ConfigError) as raised:
        load_settings(config)
    assert "NAMES of the environment variables" in str(raised.value)
    assert "sk-ant-abc123" not in str(raised.value)
