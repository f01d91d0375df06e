"""Settings for the proxy's tests."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.fakes.http import FakeServer


@pytest.fixture(autouse=True)
def _close_gemini_clients() -> Iterator[None]:
    """Close the google-genai clients a test made (``gemini_support.client``): the SDK
    keeps its connections open until then."""
    yield
    support = sys.modules.get("tests.proxy.gemini_support")
    if support is not None:
        while support.OPEN:
            support.OPEN.pop().close()


@pytest.fixture(autouse=True)
def _close_openai_clients() -> Iterator[None]:
    """Close the openai clients a test made (``dialect_support.openai_client``)."""
    yield
    support = sys.modules.get("tests.proxy.dialect_support")
    if support is not None:
        while support.OPEN_CLIENTS:
            support.OPEN_CLIENTS.pop().close()


@pytest.fixture
def upstream() -> Iterator[FakeServer]:
    """A scripted fake upstream (a test file may define its own ``upstream``)."""
    with FakeServer() as server:
        yield server


@pytest.fixture
def base_url(tmp_path: Path, upstream: FakeServer) -> Iterator[str]:
    """The proxy in front of ``upstream``: its ``/v1`` base URL."""
    from tests.proxy.dialect_support import proxy

    with proxy(tmp_path, upstream) as url:
        yield url
