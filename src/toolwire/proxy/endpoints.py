"""The proxy's small routes, which neither plan nor open an upstream: ``GET /v1/models``,
``GET /healthz``, ``GET /metrics`` and ``POST /control/switch``."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from functools import partial

from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response

from toolwire.proxy.errors import BadRequestError
from toolwire.proxy.intake import Intake
from toolwire.proxy.metrics import Metrics
from toolwire.proxy.settings import ProxySettings
from toolwire.proxy.state import SessionState, check_session

# A change to one session's stored state, run where the store's calls belong.
Update = Callable[[str, Callable[[SessionState], None]], Awaitable[None]]


class Endpoints:
    """The small routes' handlers, over the proxy's settings, metrics and session store."""

    def __init__(
        self, settings: ProxySettings, metrics: Metrics, intake: Intake, update: Update
    ) -> None:
        self.settings, self.metrics, self.intake = settings, metrics, intake
        self._update = update

    async def models(self, request: Request) -> Response:
        """``GET /v1/models``: the ``[proxy.aliases]`` (Claude Code's picker lists those),
        then each backend as ``backend,model`` (what ``/model`` accepts)."""
        await self.intake.authorize(request)
        config = self.settings.config
        aliases = [
            (alias, f"{model or config.backend(name).model} ({name})")
            for alias, (name, _, model) in (
                (a, t.partition(",")) for a, t in self.settings.aliases.items()
            )
        ]
        backends = [(f"{n},{b.model}", f"{b.model} ({n})") for n, b in config.backends.items()]
        data = [
            {"type": "model", "id": i, "display_name": shown} for i, shown in aliases + backends
        ]
        return JSONResponse({"data": data, "has_more": False})

    async def healthz(self, request: Request) -> Response:
        """``GET /healthz``: liveness (no upstream is contacted)."""
        return JSONResponse({"status": "ok"})

    async def render_metrics(self, request: Request) -> Response:
        """``GET /metrics``: Prometheus text (behind the token, like every route but
        ``/healthz``: the counters name the backends and their traffic)."""
        await self.intake.authorize(request)
        return PlainTextResponse(self.metrics.render(), media_type="text/plain; version=0.0.4")

    async def switch(self, request: Request) -> Response:
        """``POST /control/switch`` ``{"backend": NAME, "session": ID}``: force a backend."""
        data = await self.intake.body(request)
        if not isinstance(data, dict):
            raise BadRequestError("the body must be a JSON object")
        name, sid = data.get("backend"), check_session(str(data.get("session") or "default"))
        if not isinstance(name, str) or name not in self.settings.config.backends:
            known = ", ".join(self.settings.config.backends)
            raise BadRequestError(f"unknown backend {name!r}; defined: {known}")
        await self._update(str(sid), partial(_force, name))
        return JSONResponse({"session": sid, "backend": name})


def _force(backend: str, state: SessionState) -> None:
    state.forced = backend


__all__ = ["Endpoints"]
