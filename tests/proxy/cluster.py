"""A throwaway Redis Cluster for the proxy's tests: three ``redis-server`` primaries
(``cluster-enabled yes``) on free loopback ports, joined by ``redis-cli --cluster
create``; and ``store_url``, which runs a test on one Redis and on the cluster.

The cluster starts once per session (about 2 s) and is stopped at its end; without
``redis-server`` or ``redis-cli`` its tests skip in one line.
"""

from __future__ import annotations

import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis
from redis.cluster import ClusterNode, RedisCluster

_START_TIMEOUT = 20.0


def _free_port() -> int:
    """A free port whose cluster bus port (the port plus 10000) is free and valid too."""
    while True:
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
            sock.bind(("127.0.0.1", 0))
            port = int(sock.getsockname()[1])
        if port + 10000 > 65535:
            continue
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as bus:
            try:
                bus.bind(("127.0.0.1", port + 10000))
            except OSError:
                continue
        return port


def _start(binary: str, workdir: Path, port: int) -> subprocess.Popen[bytes]:
    home = workdir / str(port)
    home.mkdir()
    command = [binary, "--port", str(port), "--bind", "127.0.0.1", "--save", ""]
    command += ["--appendonly", "no", "--cluster-enabled", "yes"]
    command += ["--cluster-config-file", "nodes.conf", "--dir", str(home)]
    with (home / "redis.log").open("wb") as log:  # the server keeps its own descriptor
        return subprocess.Popen(command, cwd=home, stdout=log, stderr=subprocess.STDOUT)


def _wait_ready(ports: list[int]) -> None:
    """Every node answers and sees the cluster whole (``cluster_state:ok``)."""
    deadline = time.monotonic() + _START_TIMEOUT
    for port in ports:
        client = redis.Redis(host="127.0.0.1", port=port, socket_timeout=1)
        try:
            while True:
                try:
                    info = client.execute_command("CLUSTER INFO")  # type: ignore[no-untyped-call]
                    if dict(info).get("cluster_state") in ("ok", b"ok"):
                        break
                except redis.ConnectionError:
                    pass
                if time.monotonic() > deadline:
                    raise RuntimeError(f"the Redis Cluster was not ready in {_START_TIMEOUT} s")
                time.sleep(0.05)
        finally:
            client.close()


@pytest.fixture(scope="session")
def redis_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A three-node Redis Cluster for the session; yields its ``redis-cluster://`` URL."""
    server, cli = shutil.which("redis-server"), shutil.which("redis-cli")
    if server is None or cli is None:
        pytest.skip("redis-server and redis-cli are needed for a Redis Cluster")
    workdir = tmp_path_factory.mktemp("redis-cluster")
    ports = [_free_port() for _ in range(3)]
    processes = [_start(server, workdir, port) for port in ports]
    try:
        for port in ports:
            _wait_pong(port)
        nodes = [f"127.0.0.1:{port}" for port in ports]
        subprocess.run(
            [cli, "--cluster", "create", *nodes, "--cluster-yes"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.STDOUT,
            check=True,
            timeout=_START_TIMEOUT,
        )
        _wait_ready(ports)
        yield "redis-cluster://" + ",".join(nodes)
    finally:
        for process in processes:
            process.terminate()
        for process in processes:
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


def _wait_pong(port: int) -> None:
    deadline = time.monotonic() + _START_TIMEOUT
    client = redis.Redis(host="127.0.0.1", port=port, socket_timeout=1)
    try:
        while True:
            try:
                if client.ping():
                    return
            except redis.ConnectionError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError(f"redis-server on {port} did not answer in {_START_TIMEOUT} s")
            time.sleep(0.05)
    finally:
        client.close()


def empty_cluster(url: str) -> None:
    """Every primary of the cluster at ``url`` emptied."""
    host, _, port = url.removeprefix("redis-cluster://").split(",")[0].rpartition(":")
    client = RedisCluster(startup_nodes=[ClusterNode(host, int(port))])  # type: ignore[no-untyped-call]
    try:
        client.flushdb(target_nodes=RedisCluster.PRIMARIES)
    finally:
        client.close()


@pytest.fixture(params=["redis", "redis-cluster"])
def store_url(request: pytest.FixtureRequest) -> str:
    """The URL of an emptied single Redis, then of an emptied Redis Cluster."""
    if request.param == "redis":
        return str(request.getfixturevalue("redis_url"))
    url = str(request.getfixturevalue("redis_cluster"))
    empty_cluster(url)
    return url
