"""Settings for the whole suite."""

from __future__ import annotations

import os

from hypothesis import settings

# No per-example deadline: on a loaded machine (parallel workers, a shared CI runner) a
# slow example is noise, not a bug; speed is measured in bench/, not here.
settings.register_profile("suite", deadline=None)
# CI (any non-empty $CI) also draws the same examples on every run, so that a red build
# can be replayed; locally each run explores new ones.
settings.register_profile("ci", parent=settings.get_profile("suite"), derandomize=True)
settings.load_profile("ci" if os.environ.get("CI") else "suite")
