"""The sandbox ``Bash`` commands run in: bubblewrap, seccomp, and a network allow list.

``probe()`` says whether it can run here; ``Sandbox`` wraps a session's command lines
(``wrap``) and says what it refused (``refused``). The design, what is refused and how
to configure it: docs/sandbox.md.
"""

from __future__ import annotations

from toolwire.sandbox.probe import INSTALL, LANDLOCK_ONLY, Mechanism, Probe, probe
from toolwire.sandbox.refusals import refused
from toolwire.sandbox.runner import Sandbox, toolwire_dirs
from toolwire.sandbox.wrap import Layout, bwrap_argv, landlock_argv

__all__ = [
    "INSTALL",
    "LANDLOCK_ONLY",
    "Layout",
    "Mechanism",
    "Probe",
    "Sandbox",
    "bwrap_argv",
    "landlock_argv",
    "probe",
    "refused",
    "toolwire_dirs",
]
