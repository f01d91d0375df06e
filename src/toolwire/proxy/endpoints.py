"""The proxy's small routes, which neither plan nor open an upstream: ``GET /v1/models``,
``GET /healthz``, ``GET /metrics`` and ``POST /control/switch``."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from functools import partial
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response

from toolwire.proxy.errors import BadRequestError
from toolwire.proxy.intake import Access, Intake
from toolwire.proxy.metrics import Metrics
from toolwire.proxy.people.keys import owner_of
from toolwire.proxy.settings import ProxySettings
from toolwire.proxy.state import IMPLICIT_SESSION, SessionState, check_session, owned_session

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
        served = served_models(self.settings)
        # One listing both families read: Anthropic's fields and OpenAI's side by side.
        data = [
            {"type": "model", "id": i, "display_name": shown, "object": "model"}
            | {"created": 0, "owned_by": "toolwire"}
            for i, shown in served
        ]
        return JSONResponse({"object": "list", "data": data, "has_more": False})

    async def healthz(self, request: Request) -> Response:
        """``GET /healthz``: liveness (no upstream is contacted)."""
        return JSONResponse({"status": "ok"})

    async def render_metrics(self, request: Request) -> Response:
        """``GET /metrics``: Prometheus text (behind the token, like every route but
        ``/healthz``: the counters name the backends and their traffic); an admin's once
        people have keys (it holds every team's spend)."""
        await self.intake.admin(request, "reading /metrics")
        return PlainTextResponse(self.metrics.render(), media_type="text/plain; version=0.0.4")

    async def switch(self, request: Request) -> Response:
        """``POST /control/switch`` ``{"backend": NAME, "session": ID}``: force a backend
        on the sender's own session; with ``"user"`` (and ``"team"``), on that person's,
        which takes an admin unless it is the sender."""
        data = await self.intake.body(request)
        if not isinstance(data, dict):
            raise BadRequestError("the body must be a JSON object")
        name = data.get("backend")
        sid = check_session(str(data.get("session") or IMPLICIT_SESSION))
        if not isinstance(name, str) or name not in self.settings.config.backends:
            known = ", ".join(self.settings.config.backends)
            raise BadRequestError(f"unknown backend {name!r}; defined: {known}")
        whose = await self._whose(request, request.state.access, data)
        await self._update(
            owned_session(sid, None if whose is None else owner_of(*whose)), partial(_force, name)
        )
        reply: dict[str, Any] = {"session": sid, "backend": name}
        if whose is not None:
            reply.update(user=whose[0], team=whose[1])
        return JSONResponse(reply)

    async def _whose(
        self, request: Request, access: Access, data: dict[str, Any]
    ) -> tuple[str, str | None] | None:
        """The person (user, team) whose session a switch names (None: the sessions of the
        token, the admin token or an open proxy, which have no person)."""
        user, team = data.get("user"), data.get("team")
        if not isinstance(user, str | None) or not isinstance(team, str | None):
            raise BadRequestError("user and team must be strings")
        own = access.caller.key if access.caller is not None else None
        if user is None:
            return None if own is None else (own.user, own.team)
        if own is not None and own.user == user and team in (None, own.team):
            return own.user, own.team
        await self.intake.admin(request, f"switching a session of {user}")
        if team is None:
            teams = await self.intake.people.teams(user)
            if len(teams) != 1:
                raise BadRequestError(_teams_refusal(user, teams))
            (team,) = teams
        return user, team


def served_models(settings: ProxySettings) -> list[tuple[str, str]]:
    """The model ids a client may name, with what each is in words: the aliases, then
    each backend as ``backend,model`` (every dialect's listing)."""
    config = settings.config
    aliases = [
        (alias, f"{model or config.backend(name).model} ({name})")
        for alias, (name, _, model) in ((a, t.partition(",")) for a, t in settings.aliases.items())
    ]
    return aliases + [(f"{n},{b.model}", f"{b.model} ({n})") for n, b in config.backends.items()]


def _teams_refusal(user: str, teams: set[str | None]) -> str:
    if not teams:
        return f"no key names user {user!r}: `toolwire proxy keys list` shows who has one"
    named = ", ".join(sorted(t or "(none)" for t in teams))
    return f"user {user!r} has keys in several teams ({named}): name one with team"


def _force(backend: str, state: SessionState) -> None:
    state.forced = backend


__all__ = ["Endpoints", "served_models"]
