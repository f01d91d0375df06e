"""What the person running the proxy gets on top of the Messages API: the budget
headers (``budget_headers.py``), the admin HTTP API (``admin_api.py``) and the team's
page (``ui.py``), mounted by ``app.py`` through ``operator_routes`` and
``operator_middleware`` so the app itself names them once."""

from __future__ import annotations

from starlette.middleware import Middleware
from starlette.routing import BaseRoute

from toolwire.proxy.admin_api import AdminAPI
from toolwire.proxy.budget_headers import BudgetHeaders
from toolwire.proxy.failover import Cooldowns
from toolwire.proxy.intake import Intake
from toolwire.proxy.latencies import Latencies
from toolwire.proxy.metrics import Metrics
from toolwire.proxy.operator_data import OperatorData
from toolwire.proxy.ui import TeamPage


def operator_routes(intake: Intake, cooldowns: Cooldowns) -> list[BaseRoute]:
    """The admin API's and the page's routes."""
    data = OperatorData(intake, cooldowns)
    return AdminAPI(intake, data).routes() + TeamPage(intake, data).routes()


def operator_middleware(intake: Intake, metrics: Metrics) -> list[Middleware]:
    """The latency histograms, and the budget headers on every keyed response."""
    return [
        Middleware(Latencies, metrics=metrics),
        Middleware(BudgetHeaders, people=intake.people),
    ]


__all__ = ["operator_middleware", "operator_routes"]
