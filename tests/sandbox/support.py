"""What the sandbox tests share: the skip, decided before any test starts anything."""

from __future__ import annotations

import pytest

from toolwire.sandbox.probe import probe

WHY_NOT = probe().reason
needs_bwrap = pytest.mark.skipif(
    probe().mechanism != "bwrap",
    reason=f"no sandbox here ({WHY_NOT}; `make deps` installs bubblewrap as root)",
)
