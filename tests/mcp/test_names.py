"""Model-facing names: kept where every provider allows them, else rewritten stably."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from toolwire.mcp.names import VALID, assign_names, model_name


def test_a_valid_name_stays_as_the_server_wrote_it() -> None:
    assert model_name("everything", "get-sum") == "mcp__everything__get-sum"
    assert model_name("db", "Run_Query") == "mcp__db__Run_Query"


def test_other_characters_become_underscores() -> None:
    assert model_name("My DB", "run.query") == "mcp__My_DB__run_query"
    assert model_name("files", "lire/écrire") == "mcp__files__lire__crire"


def test_an_over_long_name_is_cut_with_a_stable_hash() -> None:
    long_tool = "x" * 80
    name = model_name("srv", long_tool)
    assert len(name) == 64
    assert VALID.match(name)
    assert name == model_name("srv", long_tool)
    assert name != model_name("srv", "x" * 81)


def test_collisions_are_resolved_the_same_way_whatever_the_order() -> None:
    pairs = [("a__b", "c"), ("a", "b__c"), ("a.b", "c"), ("a_b", "c")]
    first = assign_names(pairs)
    assert first == assign_names(reversed(pairs))
    assert len(set(first.values())) == 4
    assert first[("a", "b__c")] == "mcp__a__b__c"  # valid as written, first in order
    assert first[("a_b", "c")] == "mcp__a_b__c"  # valid as written beats a rewrite
    assert first[("a.b", "c")] != "mcp__a_b__c"
    assert all(VALID.match(name) for name in first.values())


@given(st.lists(st.tuples(st.text(min_size=1), st.text(min_size=1)), max_size=12))
def test_every_assigned_name_is_valid_and_distinct(pairs: list[tuple[str, str]]) -> None:
    names = assign_names(pairs)
    assert len(set(names.values())) == len(names)
    assert all(VALID.match(name) for name in names.values())
