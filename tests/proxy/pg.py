"""A throwaway PostgreSQL cluster for the ledger tests: ``initdb`` in a temporary
directory, ``pg_ctl`` on a free loopback port with its Unix socket beside the data.

PostgreSQL refuses to run as root, so as root the cluster belongs to the ``postgres``
user (Debian's package makes it) or ``nobody``, and its commands run through ``runuser``.
Without the binaries (``make deps`` installs them as root) the tests skip in one line.
"""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest

_START_TIMEOUT = 30
# The ledger's tables: rows, and the per-day tables its trigger keeps.
DROP_LEDGER = (
    "DROP TABLE IF EXISTS toolwire_ledger, toolwire_ledger_days, toolwire_ledger_people_days"
)


def _binary(name: str) -> str | None:
    found = shutil.which(name)
    if found:
        return found
    versions = sorted(glob.glob(f"/usr/lib/postgresql/*/bin/{name}"))
    return versions[-1] if versions else None


def _owner() -> str | None:
    """The user the cluster runs as when this process is root (None: not root)."""
    if os.geteuid() != 0:
        return None
    for name in ("postgres", "nobody"):
        try:
            pwd.getpwnam(name)
        except KeyError:
            continue
        return name
    pytest.skip("running as root with neither a postgres nor a nobody user for PostgreSQL")


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _quiet(argv: list[str]) -> None:
    subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT, check=True)


@dataclass
class Cluster:
    """A running throwaway cluster: its URL, and ``stop``/``start`` for outage tests."""

    url: str
    data: Path
    workdir: Path
    port: int
    as_owner: list[str]
    pg_ctl: str

    def start(self) -> None:
        options = f"-p {self.port} -k {self.workdir} -c listen_addresses=127.0.0.1 -c fsync=off"
        _quiet([*self.as_owner, self.pg_ctl, "-D", str(self.data), "-o", options, "-l",
                str(self.workdir / "log"), "-w", "-t", str(_START_TIMEOUT), "start"])  # fmt: skip

    def stop(self) -> None:
        """A fast shutdown: connections are ended, as in a database restart."""
        _quiet([*self.as_owner, self.pg_ctl, "-D", str(self.data), "-m", "fast", "-w", "stop"])


@contextmanager
def cluster() -> Iterator[Cluster]:
    """A new PostgreSQL cluster, stopped and removed at the end (skips without one)."""
    initdb, pg_ctl = _binary("initdb"), _binary("pg_ctl")
    if initdb is None or pg_ctl is None:
        pytest.skip("PostgreSQL (initdb, pg_ctl) is not installed (`make deps` installs it)")
    owner = _owner()
    runuser = shutil.which("runuser")
    if owner is not None and runuser is None:
        pytest.skip("running as root without runuser to start PostgreSQL as another user")
    # Not under pytest's root-only temp dirs: the cluster's owner must reach its directory.
    workdir = Path(tempfile.mkdtemp(prefix="toolwire-pg-"))
    as_owner: list[str] = []
    if owner is not None:
        entry = pwd.getpwnam(owner)
        os.chown(workdir, entry.pw_uid, entry.pw_gid)
        as_owner = [str(runuser), "-u", owner, "--"]
    data, port = workdir / "data", _free_port()
    url = f"postgresql://toolwire@127.0.0.1:{port}/postgres"
    running = Cluster(url, data, workdir, port, as_owner, pg_ctl)
    try:
        _quiet([*as_owner, initdb, "-D", str(data), "-U", "toolwire", "--auth=trust",
                "-E", "UTF8", "--no-sync"])  # fmt: skip
        running.start()
    except subprocess.CalledProcessError as e:
        log = workdir / "log"
        said = log.read_text() if log.exists() else ""
        shutil.rmtree(workdir, ignore_errors=True)
        raise RuntimeError(f"PostgreSQL did not start: {said}") from e
    try:
        yield running
    finally:
        subprocess.run(
            [*as_owner, pg_ctl, "-D", str(data), "-m", "immediate", "-w", "stop"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.STDOUT,
            check=False,
        )
        shutil.rmtree(workdir, ignore_errors=True)


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[str]:
    """A PostgreSQL cluster for the session; yields its ``postgresql://`` URL."""
    with cluster() as running:
        yield running.url


@pytest.fixture
def postgres_cluster() -> Iterator[Cluster]:
    """A cluster of the test's own, which it may stop and start (an outage)."""
    with cluster() as running:
        yield running


@pytest.fixture
def postgres_url(postgres_server: str) -> str:
    """The cluster's URL, its ledger table dropped before the test."""
    import psycopg

    deadline = time.monotonic() + _START_TIMEOUT
    while True:
        try:
            with psycopg.connect(postgres_server, autocommit=True) as db:
                db.execute(DROP_LEDGER)
            return postgres_server
        except psycopg.OperationalError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.1)
