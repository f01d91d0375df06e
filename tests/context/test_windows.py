"""The context window a backend gets: config first, then the family table, then a
conservative default."""

from __future__ import annotations

import re
from dataclasses import replace

import pytest

from tests.helpers import REPO
from toolwire.config.schema import BackendConfig, LimitsConfig
from toolwire.context import FAMILIES, UNKNOWN_WINDOW, backend_window, family, window_for
from toolwire.providers import PROFILES, Family


@pytest.mark.parametrize(
    ("model", "size"),
    [
        ("claude-sonnet-4-5-20250929", 200_000),
        ("anthropic/claude-opus-4-1", 200_000),
        ("gpt-4o-mini", 128_000),
        ("gpt-4.1-nano", 1_047_576),
        ("gpt-4", 8_192),
        ("models/gemini-2.5-pro", 1_048_576),
        ("gemini-1.5-pro-002", 2_097_152),
        ("qwen3-coder:30b", 262_144),
        ("GLM-4.6", 200_000),
    ],
)
def test_families_match_dated_prefixed_and_tagged_ids(model: str, size: int) -> None:
    assert window_for(model).size == size
    assert window_for(model).known


def test_the_longest_prefix_wins() -> None:
    row = family("gpt-4o-2024-08-06")
    assert row is not None
    assert row[0] == "gpt-4o"


def test_an_unknown_model_gets_the_conservative_default_and_says_so() -> None:
    window = window_for("my-finetune-7b")
    assert window.size == UNKNOWN_WINDOW
    assert not window.known
    assert window.source == "unknown model"


def test_configured_values_win_and_the_answer_never_takes_more_than_half() -> None:
    window = window_for("claude-sonnet-4", context_window=24_000, max_output_tokens=2_048)
    assert (window.size, window.reserved, window.source) == (24_000, 2_048, "config")
    assert window.room == 21_952
    assert window_for("x", context_window=8_000, max_output_tokens=8_000).reserved == 4_000


def test_the_reserved_answer_is_what_each_request_asks_for() -> None:
    limits = LimitsConfig(max_tokens=8192)
    sonnet = BackendConfig(name="c", provider="anthropic", model="claude-sonnet-4")
    assert backend_window(sonnet, limits).reserved == 8192  # the table's 64k, capped
    small = BackendConfig(name="s", provider="anthropic", model="claude-3-haiku")
    assert backend_window(small, limits).reserved == 4096  # the model's own limit


def test_the_documented_table_is_the_one_in_the_code() -> None:
    doc = (REPO / "docs" / "context.md").read_text(encoding="utf-8")
    rows = re.findall(r"^\| `([^`]+)` \| ([\d,]+) \| ([\d,]+) \|$", doc, re.MULTILINE)
    documented = [(p, int(w.replace(",", "")), int(o.replace(",", ""))) for p, w, o in rows]
    assert documented == list(FAMILIES)


def test_a_profile_registered_later_is_seen_by_a_model_already_looked_up(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # ``family`` keeps its answers per model id: a new profile must still count.
    assert family("zz-later-model") is None
    later = replace(PROFILES["anthropic"], families=(Family("zz-later", 123_456, 1_000),))
    monkeypatch.setitem(PROFILES, "zz-later", later)
    assert window_for("zz-later-model").size == 123_456
    monkeypatch.delitem(PROFILES, "zz-later")
    assert family("zz-later-model") is None
