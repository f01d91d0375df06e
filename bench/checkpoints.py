"""Benchmark: checkpoints of a 10,000-file repository, 10 files changed per prompt.

Builds, deterministically (fixed seed), a committed git repository of 10,000 files of
200-4,000 bytes of code-like text in 100 directories (about 20 MB), with a ``.gitignore``.
The session's first checkpoint hashes every file once (timed apart). Then for each of
10 prompts: 10 files are rewritten (a line changed), and ``take`` is timed; the shadow
store's growth on disk is measured after each take. Also timed: a checkpoint of the
unchanged tree, ``changed`` since the first snapshot, and a ``restore`` of 100 files.

Targets: a checkpoint takes at most 50 ms; the store grows by about the
changed files only (no full copy per prompt).
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import subprocess
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from toolwire.checkpoints import Checkpoints, after, before

WORDS = ["def", "return", "self", "value", "result", "items", "config", "path", "name"]
_T = TypeVar("_T")


def build(repo: Path, files: int, rng: random.Random) -> list[Path]:
    """A committed repository of ``files`` files; their paths."""
    paths = []
    for i in range(files):
        path = repo / f"pkg{i % 100:02d}" / f"mod{i:05d}.py"
        path.parent.mkdir(parents=True, exist_ok=True)
        lines = [" ".join(rng.choices(WORDS, k=8)) for _ in range(rng.randint(5, 100))]
        path.write_text("\n".join(lines) + "\n")
        paths.append(path)
    (repo / ".gitignore").write_text("__pycache__/\n*.log\n")
    env = {**os.environ, "GIT_AUTHOR_NAME": "b", "GIT_AUTHOR_EMAIL": "b@b"}
    env |= {"GIT_COMMITTER_NAME": "b", "GIT_COMMITTER_EMAIL": "b@b"}
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-q", "-m", "repo"]):
        subprocess.run(["git", *args], cwd=repo, env=env, check=True)
    return paths


def du(path: Path) -> int:
    """Bytes on disk of every file under ``path``."""
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


def timed(run: Callable[[], _T]) -> tuple[float, _T]:
    start = time.perf_counter()
    value = run()
    return (time.perf_counter() - start) * 1000, value


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--files", type=int, default=10_000)
    parser.add_argument("--prompts", type=int, default=10)
    parser.add_argument("--changed", type=int, default=10)
    args = parser.parse_args()
    rng = random.Random(21)
    with tempfile.TemporaryDirectory() as scratch:
        repo = Path(scratch) / "repo"
        repo.mkdir()
        paths = build(repo, args.files, rng)
        source = sum(p.stat().st_size for p in paths)
        cps = Checkpoints.open(Path(scratch) / "data", "bench", [repo])
        first_ms, first = timed(lambda: cps.take(before(1)))
        first_store = du(cps.store)
        rows = []
        for n in range(1, args.prompts + 1):
            changed = rng.sample(paths, args.changed)
            for path in changed:
                path.write_text(path.read_text().replace("value", f"v{n}", 1) + f"# {n}\n")
            changed_bytes = sum(p.stat().st_size for p in changed)
            size = du(cps.store)
            ms, _ = timed(lambda n=n: cps.take(after(n)))
            rows.append((n, ms, du(cps.store) - size, changed_bytes))
        idle_ms, _ = timed(lambda: cps.take("idle"))
        changed_ms, moved = timed(lambda: cps.changed(first))
        restore_ms, report = timed(lambda: cps.restore(first))
    print(f"repository: {args.files:,} files, {source:,} bytes; first checkpoint "
          f"{first_ms:.0f} ms, store {first_store:,} bytes\n")  # fmt: skip
    print("| prompt | take (ms) | store growth (bytes) | changed files (bytes) |")
    print("|---:|---:|---:|---:|")
    for n, ms, grew, changed_bytes in rows:
        print(f"| {n} | {ms:.1f} | {grew:,} | {changed_bytes:,} |")
    times = [r[1] for r in rows]
    growth = statistics.mean(r[2] for r in rows)
    print(f"\ntake: median {statistics.median(times):.1f} ms, max {max(times):.1f} ms; "
          f"unchanged tree {idle_ms:.1f} ms")  # fmt: skip
    print(f"growth per checkpoint: {growth:,.0f} bytes ({growth / source:.3%} of the files)")
    print(f"changed since the first: {len(moved.paths())} files in {changed_ms:.1f} ms; "
          f"restore of them: {restore_ms:.1f} ms ({len(report.restored)} restored)")  # fmt: skip


if __name__ == "__main__":
    main()
