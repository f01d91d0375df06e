"""Settings for the whole suite."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from hypothesis import settings

from tests import helpers

# No per-example deadline: on a loaded machine (parallel workers, a shared CI runner) a
# slow example is noise, not a bug; speed is measured in bench/, not here.
settings.register_profile("suite", deadline=None)
# CI (any non-empty $CI) also draws the same examples on every run, so that a red build
# can be replayed; locally each run explores new ones.
settings.register_profile("ci", parent=settings.get_profile("suite"), derandomize=True)
settings.load_profile("ci" if os.environ.get("CI") else "suite")


@pytest.fixture(autouse=True)
def _heap_not_frozen(monkeypatch: pytest.MonkeyPatch) -> None:
    """``toolwire proxy serve`` freezes the heap it starts with (``serving.settle_heap``).
    Run in a test worker, that would freeze the worker's objects for every later test;
    tests/proxy/test_turns.py checks the real one and unfreezes after it."""
    from toolwire.proxy import serving

    monkeypatch.setattr(serving, "settle_heap", lambda: 0)


@pytest.fixture
def anyio_backend() -> str:
    """Async tests (``pytest.mark.anyio``, anyio's pytest plugin) run on asyncio, the loop
    ``toolwire acp`` and the proxy run on."""
    return "asyncio"


# The tally of tests/decode/test_conformance.py, printed once at the end of the session.
# Here, not in tests/decode/conftest.py: under xdist the controller loads only this one.
# user_properties travel from the workers to the controller with each report.
_TALLIES: list[str] = []


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    if report.when == "call":
        _TALLIES.extend(str(v) for k, v in report.user_properties if k == "conformance_tally")


def pytest_terminal_summary(terminalreporter: Any) -> None:
    for tally in _TALLIES:
        terminalreporter.write_line(f"conformance with the peers' test suites: {tally}")


# -- ../shared: decided per test at collection -------------------------------------------

_RECORDED_STEMS = {name.rsplit(".", 1)[0] for name in helpers.RECORDED_NAMES}


def _reads_shared(item: pytest.Item) -> bool:
    """Parametrized by a recording kept in ../shared (its path, or its name as the decoder
    tests spell it): such a case needs ../shared without each one saying so."""
    params = getattr(getattr(item, "callspec", None), "params", {})
    for value in params.values():
        if isinstance(value, str) and value in _RECORDED_STEMS:
            return True
        if isinstance(value, Path) and value.is_relative_to(helpers.SHARED):
            return True
    return False


# The directories that hold the tests reading ../shared. `make test-bare` (TOOLWIRE_BARE=1)
# collects only these: the whole tree costs it three times the CPU, at the start of
# `make check` when every core is busy. A test that reads ../shared anywhere else stops
# the run, asking for its directory here, so test-bare never misses one.
BARE = ("backends", "cli", "decode")
_TESTS = Path(__file__).parent


def pytest_ignore_collect(collection_path: Path) -> bool | None:
    if not os.environ.get("TOOLWIRE_BARE") or not collection_path.is_relative_to(_TESTS):
        return None
    parts = collection_path.relative_to(_TESTS).parts
    if not parts or parts[0] in BARE:
        return None
    return collection_path.is_dir() or parts[0].startswith("test_")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    absent = pytest.mark.skip(reason="../shared is absent (or hidden by TOOLWIRE_SHARED=none)")
    for item in items:
        if item.get_closest_marker(helpers.MARK) is None and _reads_shared(item):
            item.add_marker(helpers.needs_shared)
        if item.get_closest_marker(helpers.MARK) is not None:
            _in_bare(item)
            if not helpers.HAS_SHARED:
                item.add_marker(absent)
    # The slow tests first: xdist hands tests out in this order, so the long ones start
    # at once and the short ones fill the cores around them, instead of one long test
    # starting last and ending the run alone (the sort keeps the order within each part).
    items.sort(key=lambda item: item.get_closest_marker("slow") is None)


def _in_bare(item: pytest.Item) -> None:
    """Stop the run when a test reading ../shared lives outside ``BARE``."""
    where = item.path.relative_to(_TESTS).parts[0]
    if where not in BARE:
        raise pytest.UsageError(
            f"{item.nodeid} reads ../shared, but tests/{where} is not in BARE "
            "(tests/conftest.py): add it there so that `make test-bare` checks it without ../shared"
        )


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    # Before fixtures: a fixture may read a recording too.
    helpers.current_marks = {mark.name for mark in item.iter_markers()}


def pytest_runtest_logfinish() -> None:
    helpers.current_marks = None
