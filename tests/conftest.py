"""Settings for the whole suite."""

from __future__ import annotations

import os
from typing import Any

import pytest
from hypothesis import settings

# No per-example deadline: on a loaded machine (parallel workers, a shared CI runner) a
# slow example is noise, not a bug; speed is measured in bench/, not here.
settings.register_profile("suite", deadline=None)
# CI (any non-empty $CI) also draws the same examples on every run, so that a red build
# can be replayed; locally each run explores new ones.
settings.register_profile("ci", parent=settings.get_profile("suite"), derandomize=True)
settings.load_profile("ci" if os.environ.get("CI") else "suite")

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
