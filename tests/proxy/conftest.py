"""Settings for the proxy's tests."""

from __future__ import annotations

import sys
from collections.abc import Iterator

import pytest


@pytest.fixture(autouse=True)
def _close_gemini_clients() -> Iterator[None]:
    """Close the google-genai clients a test made (``gemini_support.client``): the SDK
    keeps its connections open until then."""
    yield
    support = sys.modules.get("tests.proxy.gemini_support")
    if support is not None:
        while support.OPEN:
            support.OPEN.pop().close()
