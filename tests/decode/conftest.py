"""Fixtures for the decode tests."""

from typing import Any

import pytest

_TALLIES: list[str] = []


@pytest.hookimpl(trylast=True)
def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    # user_properties travel from xdist workers to the controller with the report, so
    # the tally of test_conformance.py is printed once, whatever the number of workers.
    if report.when == "call":
        _TALLIES.extend(str(v) for k, v in report.user_properties if k == "conformance_tally")


def pytest_terminal_summary(terminalreporter: Any) -> None:
    for tally in _TALLIES:
        terminalreporter.write_line(f"conformance with the peers' test suites: {tally}")
