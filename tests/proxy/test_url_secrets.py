"""The proxy's errors to an Anthropic client never carry the credentials of an upstream's
URL (``base_url = "http://user:PASSWORD@host"``): nothing listens there, the error says
which host failed, not the password."""

from __future__ import annotations

import socket
from pathlib import Path

import httpx2
import pytest

from tests.proxy.support import request_body, running, settings_for

PASSWORD = "SECRETPW-a91c"


def _closed_url() -> str:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return f"http://carol:{PASSWORD}@127.0.0.1:{port}"


@pytest.mark.parametrize("stream", [False, True])
def test_an_unreachable_upstream_error_hides_its_password(tmp_path: Path, stream: bool) -> None:
    url = _closed_url()
    with running(settings_for(tmp_path, url, url)) as proxy:
        body = request_body([{"role": "user", "content": "hi"}], stream=stream)
        reply = httpx2.post(f"{proxy}/v1/messages", json=body, timeout=10)
    assert reply.status_code >= 500
    assert reply.json()["type"] == "error"
    message = reply.json()["error"]["message"]
    assert url.rpartition("@")[2].removeprefix("127.0.0.1") in message  # which host
    assert PASSWORD not in reply.text
