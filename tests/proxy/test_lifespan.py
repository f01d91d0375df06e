"""The proxy's upstream HTTP client lives exactly as long as the app."""

from __future__ import annotations

import asyncio
from pathlib import Path

from tests.proxy.support import settings_for
from toolwire.backends.http import HTTPBackend
from toolwire.proxy import create_app
from toolwire.proxy.routing import route
from toolwire.proxy.state import SessionState
from toolwire.proxy.upstream import make_backend


def test_the_lifespan_makes_the_client_and_closes_it(tmp_path: Path) -> None:
    settings = settings_for(tmp_path, "http://127.0.0.1:9/v1", "http://127.0.0.1:9")
    app = create_app(settings)
    proxy = app.state.proxy

    async def main() -> None:
        assert proxy.client is None
        async with app.router.lifespan_context(app):
            client = proxy.client
            assert client is not None
            assert not client.is_closed
            chosen = route("local", SessionState(), settings)
            backend = make_backend(chosen, settings, None, client=client)
            assert isinstance(backend, HTTPBackend)
            assert backend.client is client
        assert client.is_closed
        assert proxy.client is None

    asyncio.run(main())
