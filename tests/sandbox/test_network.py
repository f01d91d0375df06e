"""The network allow list: a listed host answers through the proxy, others do not.

The "internet" is a local fake HTTP server; its name (``fake.test``) is pinned to
127.0.0.1 by the proxy's resolver, which is how a test stands in for DNS.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from tests.sandbox.support import needs_bwrap
from toolwire.config.sandbox import SandboxConfig
from toolwire.sandbox import Sandbox
from toolwire.sandbox.proxy import allowed, matches
from toolwire.tools import LocalTerminal

pytestmark = pytest.mark.anyio


class Hello(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        body = f"hello from {self.headers['Host']}\n".encode()
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def fake_site() -> Iterator[int]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), Hello)
    thread = threading.Thread(target=server.serve_forever, args=(0.02,), daemon=True)
    thread.start()
    yield server.server_address[1]
    server.shutdown()
    server.server_close()
    thread.join()


async def pinned(host: str, port: int) -> list[str]:
    return ["127.0.0.1"] if host.endswith(".test") else []


def curl(*args: str) -> str:
    return "curl -fsS -m 10 " + " ".join(args)


@needs_bwrap
@pytest.mark.e2e
async def test_a_listed_host_answers_through_the_proxy_and_others_do_not(
    base: Path, fake_site: int
) -> None:
    project = base / "project"
    config = SandboxConfig(network=[f"fake.test:{fake_site}", "bare.test"])
    sandbox = Sandbox(config, [project], "bwrap", resolver=pinned)
    term = LocalTerminal(sandbox=sandbox)
    try:
        plain = await term.run(curl(f"http://fake.test:{fake_site}/"), cwd=project, timeout=30)
        assert plain.output == f"hello from fake.test:{fake_site}\n", plain.output
        tunnel = curl("--proxytunnel", f"http://fake.test:{fake_site}/")
        tunnelled = await term.run(tunnel, cwd=project, timeout=30)
        assert tunnelled.output.startswith("hello from fake.test"), tunnelled.output
        other = await term.run(curl(f"http://other.test:{fake_site}/"), cwd=project, timeout=30)
        assert other.exit_code != 0
        assert "hello" not in other.output
        # Listed without a port: 80 and 443 only, not the port this site listens on.
        bare = await term.run(curl(f"http://bare.test:{fake_site}/"), cwd=project, timeout=30)
        assert bare.exit_code != 0
        assert "hello" not in bare.output
        # The proxy's own address is no way around it: no route to the host's loopback.
        direct = await term.run(
            curl(f"http://127.0.0.1:{fake_site}/", "--noproxy '*'"), cwd=project, timeout=30
        )
        assert direct.exit_code != 0
        assert "hello" not in direct.output
    finally:
        await term.aclose()
    # Without the sandbox the same names are not proxied at all: the list is the sandbox's.
    free = await LocalTerminal().run(
        curl(f"http://127.0.0.1:{fake_site}/"), cwd=project, timeout=30
    )
    assert free.output.startswith("hello")


async def test_patterns_and_private_addresses() -> None:
    assert matches("api.github.com", ["*.github.com"]) == "*.github.com"
    assert matches("github.com", ["*.github.com"]) is None
    assert matches("evilgithub.com", ["*.github.com"]) is None
    assert matches("PyPI.org.", ["pypi.org"]) == "pypi.org"

    async def to(address: str) -> Any:
        async def resolver(host: str, port: int) -> list[str]:
            return [address]

        return resolver

    # A wildcard never reaches a private or loopback address; a name listed exactly may.
    assert await allowed("x.corp.example", 443, ["*.corp.example"], await to("10.0.0.5")) is None
    assert await allowed("x.corp.example", 443, ["*.corp.example"], await to("93.184.216.34"))
    assert await allowed("db.local", 80, ["db.local"], await to("127.0.0.1")) == "127.0.0.1"
    assert await allowed("other.example", 80, ["db.local"], await to("93.184.216.34")) is None
    # A listed host is the web's (80, 443) unless its pattern names a port.
    public = await to("93.184.216.34")
    assert await allowed("example.com", 443, ["example.com"], public)
    assert await allowed("example.com", 22, ["example.com"], public) is None
    assert await allowed("example.com", 5432, ["example.com"], public) is None
    assert await allowed("example.com", 8080, ["example.com:8080"], public)
    assert await allowed("example.com", 443, ["example.com:8080"], public) is None
