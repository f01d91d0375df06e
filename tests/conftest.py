"""Settings for the whole suite."""

from __future__ import annotations

import os

from hypothesis import settings

# CI (any non-empty $CI) draws the same examples on every run, so that a red build can be
# replayed; locally each run explores new ones.
settings.register_profile("ci", derandomize=True, print_blob=True)
if os.environ.get("CI"):
    settings.load_profile("ci")
