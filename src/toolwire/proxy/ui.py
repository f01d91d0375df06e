"""``GET /ui``: the team's page, for an admin (docs/proxy.md, "The team's page").

An admin signs in once with the admin token or an admin's key (``POST /ui/login``, a
form): the page then rides on a cookie holding a random sign-in id of this process
(``HttpOnly``, ``SameSite=Strict``, ``Path=/ui``, eight hours), never the key. A
request may instead carry the credential itself (``Authorization: Bearer``), as every
other route takes it. Anyone else gets the form again with 403: a person's key, the
single ``token``, a wrong key. The page reads the last 30 days of the ledger (through
its per-day table) and the store in one thread, off the loop.
"""

from __future__ import annotations

import secrets
import threading
import time
from typing import Any
from urllib.parse import parse_qs

from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response
from starlette.routing import BaseRoute, Route

from toolwire.proxy.errors import ProxyError
from toolwire.proxy.intake import Intake
from toolwire.proxy.operator_data import OperatorData
from toolwire.proxy.people.spending import Question, regrouped
from toolwire.proxy.ui_page import Page, login_page, render

COOKIE = "toolwire_ui"
SIGNED_IN_SECONDS = 8 * 3600
WINDOW_DAYS = 30
RECENT = 25
FORM_BYTES = 8192  # a sign-in form is a key: a few hundred bytes
_NO_STORE = {"cache-control": "no-store"}


class TeamPage:
    """The page's routes and its sign-ins (in this process's memory)."""

    def __init__(self, intake: Intake, data: OperatorData) -> None:
        self.intake, self.data = intake, data
        self._signed: dict[str, float] = {}  # sign-in id -> when it ends
        self._lock = threading.Lock()

    def routes(self) -> list[BaseRoute]:
        return [
            Route("/ui", self.page, methods=["GET"]),
            Route("/ui/login", self.login, methods=["POST"]),
            Route("/ui/logout", self.logout, methods=["POST"]),
        ]

    async def page(self, request: Request) -> Response:
        if not (self._cookie_ok(request) or await self._header_ok(request)):
            offered = bool(request.headers.get("authorization") or request.headers.get("x-api-key"))
            status = 403 if offered else 401
            said = "this credential is not an admin's" if offered else ""
            return HTMLResponse(login_page(said), status_code=status, headers=_NO_STORE)
        page = await self.data.run(self._read)
        return HTMLResponse(render(page), headers=_NO_STORE)

    async def login(self, request: Request) -> Response:
        key = await _form_key(request)
        try:
            access = await self.intake.access_of([key] if key else [])
        except ProxyError:
            access = None
        if access is None or not access.admin:
            said = "the page needs the admin token or an admin's key"
            return HTMLResponse(login_page(said), status_code=403, headers=_NO_STORE)
        sign_in = secrets.token_urlsafe(32)
        with self._lock:
            now = time.time()
            self._signed = {k: v for k, v in self._signed.items() if v > now}
            self._signed[sign_in] = now + SIGNED_IN_SECONDS
        answer = RedirectResponse("/ui", status_code=303, headers=_NO_STORE)
        answer.set_cookie(COOKIE, sign_in, max_age=SIGNED_IN_SECONDS, path="/ui",
                          httponly=True, samesite="strict")  # fmt: skip
        return answer

    async def logout(self, request: Request) -> Response:
        with self._lock:
            self._signed.pop(request.cookies.get(COOKIE, ""), None)
        answer = RedirectResponse("/ui", status_code=303)
        answer.delete_cookie(COOKIE, path="/ui")
        return answer

    def _cookie_ok(self, request: Request) -> bool:
        sign_in = request.cookies.get(COOKIE)
        with self._lock:
            ends = self._signed.get(sign_in or "")
        return ends is not None and ends > time.time()

    async def _header_ok(self, request: Request) -> bool:
        try:
            return (await self.intake.access(request)).admin
        except ProxyError:
            return False

    def _read(self) -> Page:
        """Everything the page shows, read in one go (blocking)."""
        since = time.time() - WINDOW_DAYS * 86400
        notes: list[str] = []
        # Two questions, seen four ways: days, people and teams from the first (a few
        # thousand groups), models from the second; users by models would be far more.
        every = self._spend(Question(("day", "user", "team"), since=since), notes)
        ways = (("people", (1, 2)), ("teams", (2,)), ("days", (0,)))
        views = {name: regrouped(every, keep) for name, keep in ways}
        views["models"] = self._spend(Question(("model",), since=since), notes)
        recent: list[Any] = []
        if self.data.settings.ledger:
            recent = self._safely(lambda: self.data.recent(RECENT), notes, [])
        keys = self.data.keys()
        subjects = {f"user:{k['user']}" for k in keys} | {f"team:{k['team']}" for k in keys
                                                          if k["team"]}  # fmt: skip
        return Page(views["people"], views["teams"], views["models"], views["days"],
                    self.data.budgets(subjects), keys, self.data.backends(), recent, since,
                    bool(self.data.settings.ledger), notes)  # fmt: skip

    def _spend(self, question: Question, notes: list[str]) -> list[Any]:
        if not self.data.settings.ledger:
            if not notes:
                notes.append("No ledger: set [proxy] ledger to see spend.")
            return []
        found: list[Any] = self._safely(lambda: self.data.spend(question), notes, [])
        return found

    @staticmethod
    def _safely(work: Any, notes: list[str], default: Any) -> Any:
        try:
            return work()
        except Exception as e:  # the page still shows keys, budgets and backends
            said = f"The ledger could not be read ({type(e).__name__})."
            if said not in notes:
                notes.append(said)
            return default


async def _form_key(request: Request) -> str:
    """The form's ``key`` field (url-encoded; a form past ``FORM_BYTES`` has none)."""
    data = bytearray()
    async for chunk in request.stream():
        data += chunk
        if len(data) > FORM_BYTES:
            return ""
    values = parse_qs(data.decode("utf-8", "replace")).get("key") or [""]
    return values[0].strip()


__all__ = ["COOKIE", "TeamPage"]
