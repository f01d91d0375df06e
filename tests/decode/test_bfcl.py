"""BFCL's calls in every text format decode back to BFCL's ground truth.

The Berkeley Function Calling Leaderboard's cases (``bfcl-eval``'s data, read where it is
installed: ``tests/decode/bfcl_support.py``) of the categories simple, multiple, parallel
and parallel multiple, written in each format of the registry as its model family writes
them, decoded with the case's tools declared. A deterministic sample that runs in well
under a minute: every fourth case of each category whole and in five random chunkings,
every 25th also cut at every byte boundary, and every case a documented miss names.
``python bench/bfcl_formats.py`` runs all of them at every byte boundary.
"""

from __future__ import annotations

from functools import cache

import pytest

from tests.decode.bfcl_support import CATEGORIES, KNOWN, Case, cases, data_dir, known_reason, miss
from toolwire.decode import TEXT_FORMATS

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        data_dir() is None, reason="bfcl-eval is not installed: uv pip install --no-deps bfcl-eval"
    ),
]

STEP, EVERY_CUT_STEP = 4, 25


@cache
def every_case() -> tuple[Case, ...]:
    root = data_dir()
    assert root is not None
    return tuple(case for category in CATEGORIES for case in cases(root, category))


@pytest.mark.parametrize("fmt", TEXT_FORMATS)
def test_bfcl_calls_decode_to_the_ground_truth(fmt: str) -> None:
    documented = {case for label, (_, pairs) in KNOWN.items() for f, case in pairs if f == fmt}
    sample = [(n, c) for n, c in enumerate(every_case()) if n % STEP == 0 or c.id in documented]
    misses: dict[str, str] = {}
    for n, case in sample:
        what = miss(fmt, case, n, every_cut=n % EVERY_CUT_STEP == 0)
        if what is not None:
            misses[case.id] = what
    unexplained = {case: what for case, what in misses.items() if not known_reason(fmt, case)}
    assert not unexplained, f"{fmt}: misses docs/decoding.md does not explain: {unexplained}"
    assert set(misses) == documented, f"{fmt}: documented misses that now agree (update docs)"
    regular = [case for n, case in sample if n % STEP == 0]
    agree = sum(case.id not in misses for case in regular)
    assert agree >= 0.999 * len(regular), f"{fmt}: {agree}/{len(regular)} agree"
