"""The admin HTTP API: what ``toolwire proxy keys``, ``budget`` and ``spend`` do, as JSON,
for an admin only (the admin token or an admin's key; anyone else gets 403, the single
``token`` and a person's key included). docs/proxy.md, "Admin API", has examples.

    GET  /admin/keys                      every key (never a secret), spend and what is left
    POST /admin/keys                      {"user", "team", "budget", "models", "admin", "expires"}
    POST /admin/keys/{id}/revoke
    POST /admin/keys/{id}/rotate          {"grace": "1d", "expires": "90d"}
    GET  /admin/budgets?user=NAME|team=NAME
    PUT  /admin/budgets                   {"user"|"team", "budget": "50usd/30d"}
    GET  /admin/spend?by=user,team&user=&team=&model=&since=7d|2026-11-01
"""

from __future__ import annotations

import time
from datetime import UTC, datetime
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import BaseRoute, Route

from toolwire.proxy.errors import BadRequestError, ForbiddenError
from toolwire.proxy.intake import Access, Intake
from toolwire.proxy.operator_data import OperatorData, key_json, subject_of
from toolwire.proxy.people.keys import parse_age
from toolwire.proxy.people.spending import Question


async def admin_only(intake: Intake, request: Request, what: str) -> Access:
    """The request's access if it is an admin's; else 403 saying what it takes."""
    access = await intake.access(request)
    if not access.admin:
        needs = intake.admin_needs()
        raise ForbiddenError(f"{what} needs an admin: {needs}; this request sent {access.sent}")
    return access


class AdminAPI:
    """The routes' handlers over ``OperatorData``."""

    def __init__(self, intake: Intake, data: OperatorData) -> None:
        self.intake, self.data = intake, data

    def routes(self) -> list[BaseRoute]:
        return [
            Route("/admin/keys", self.list_keys, methods=["GET"]),
            Route("/admin/keys", self.create_key, methods=["POST"]),
            Route("/admin/keys/{key_id}/revoke", self.revoke_key, methods=["POST"]),
            Route("/admin/keys/{key_id}/rotate", self.rotate_key, methods=["POST"]),
            Route("/admin/budgets", self.show_budget, methods=["GET"]),
            Route("/admin/budgets", self.set_budget, methods=["PUT", "POST"]),
            Route("/admin/spend", self.spend, methods=["GET"]),
        ]

    async def _body(self, request: Request) -> dict[str, Any]:
        await admin_only(self.intake, request, "the admin API")
        data = await self.intake.body(request, empty={})  # read within max_body_bytes
        if not isinstance(data, dict):
            raise BadRequestError("the body must be a JSON object")
        return data

    async def list_keys(self, request: Request) -> Response:
        await admin_only(self.intake, request, "the admin API")
        return JSONResponse({"keys": await self.data.run(self.data.keys)})

    async def create_key(self, request: Request) -> Response:
        data = await self._body(request)
        record, secret = await self.data.run(lambda: self.data.create(data))
        shown = {"key": key_json(record, time.time()), "secret": secret}
        return JSONResponse(shown, status_code=201, headers={"cache-control": "no-store"})

    async def revoke_key(self, request: Request) -> Response:
        await admin_only(self.intake, request, "the admin API")
        key_id = request.path_params["key_id"]
        record = await self.data.run(lambda: self.data.revoke(key_id))
        return JSONResponse({"key": key_json(record, time.time())})

    async def rotate_key(self, request: Request) -> Response:
        data = await self._body(request)
        key_id = request.path_params["key_id"]
        new, secret, old = await self.data.run(lambda: self.data.rotate(key_id, data))
        now = time.time()
        shown = {"key": key_json(new, now), "secret": secret, "replaced": key_json(old, now)}
        return JSONResponse(shown, status_code=201, headers={"cache-control": "no-store"})

    async def show_budget(self, request: Request) -> Response:
        await admin_only(self.intake, request, "the admin API")
        q = request.query_params
        subject = subject_of(q.get("user"), q.get("team"))
        return JSONResponse((await self.data.run(lambda: self.data.budget(subject))).to_json())

    async def set_budget(self, request: Request) -> Response:
        data = await self._body(request)
        subject = subject_of(data.get("user"), data.get("team"))
        text = data.get("budget")
        if not isinstance(text, str):
            raise BadRequestError("budget must be a string such as 50usd/30d")
        found = await self.data.run(lambda: self.data.set_budget(subject, text))
        return JSONResponse(found.to_json())

    async def spend(self, request: Request) -> Response:
        await admin_only(self.intake, request, "the admin API")
        question = question_of(request.query_params)
        found = await self.data.run(lambda: self.data.spend(question))
        rows = [s.to_json(question.by) for s in found]
        return JSONResponse({"by": list(question.by), "since": question.since, "rows": rows})


def question_of(params: Any) -> Question:
    """``by``, ``user``, ``team``, ``model`` and ``since`` of a query string, checked."""
    by = tuple(g.strip() for g in str(params.get("by") or "user,team").split(",") if g.strip())
    try:
        return Question(by, params.get("user"), params.get("team"), params.get("model"),
                        since_of(params.get("since"))).check()  # fmt: skip
    except ValueError as e:
        raise BadRequestError(f"by: {e}") from e


def since_of(text: str | None) -> float | None:
    """An age (``7d``) before now or a date (``2026-11-01``, UTC unless it says)."""
    if not text:
        return None
    try:
        return time.time() - parse_age(text)
    except ValueError:
        pass
    try:
        when = datetime.fromisoformat(text)
    except ValueError:
        raise BadRequestError(f"since {text!r}: a date (2026-11-01) or an age (7d, 12h)") from None
    return (when if when.tzinfo else when.replace(tzinfo=UTC)).timestamp()


__all__ = ["AdminAPI", "admin_only", "question_of", "since_of"]
