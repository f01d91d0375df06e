"""The team's page as HTML: one document with its style and its charts inline (SVG
drawn here), so the proxy serves everything it needs: no script, no build step, no
other host. Every value shown is escaped; no key's secret is ever in what it is given.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from html import escape
from typing import Any

from toolwire.proxy.people.ledger import LedgerRow
from toolwire.proxy.people.spending import Spend
from toolwire.proxy.people.standing import Standing

BAR = "#3b6fd8"
_ONE = {"people": "person", "teams": "team", "models": "model"}
_STYLE = """
body{font:14px/1.4 system-ui,sans-serif;margin:24px;color:#1d2430;background:#fafbfc}
h1{font-size:20px}h2{font-size:16px;margin-top:28px}
table{border-collapse:collapse;margin:8px 0;background:#fff}
td,th{border:1px solid #dde2ea;padding:4px 8px;text-align:left}
td.n{text-align:right;font-variant-numeric:tabular-nums}
.charts{display:flex;flex-wrap:wrap;gap:16px}.note{color:#5b6577}
form{margin:48px auto;max-width:420px}input{width:100%;padding:6px;margin:8px 0}
"""


@dataclass(frozen=True, slots=True)
class Page:
    """What the page shows (every list already read from the store and the ledger)."""

    people: Sequence[Spend]
    teams: Sequence[Spend]
    models: Sequence[Spend]
    days: Sequence[Spend]
    budgets: Sequence[Standing]
    keys: Sequence[dict[str, Any]]
    backends: Sequence[dict[str, Any]]
    recent: Sequence[LedgerRow]
    since: float
    ledger: bool = True
    notes: list[str] = field(default_factory=list)


def _document(title: str, body: str) -> str:
    return (f"<!doctype html><html lang=en><head><meta charset=utf-8><title>{escape(title)}"
            f"</title><style>{_STYLE}</style></head><body>{body}</body></html>")  # fmt: skip


def login_page(message: str = "") -> str:
    """The form an admin signs in with (the key or the admin token, sent by POST)."""
    said = f"<p class=note id=said>{escape(message)}</p>" if message else ""
    form = ("<form method=post action=/ui/login><h1>toolwire proxy</h1>"
            "<p>Sign in with the admin token or an admin's key.</p>"
            "<input type=password name=key autocomplete=off autofocus>"
            f"<button type=submit>Sign in</button>{said}</form>")  # fmt: skip
    return _document("toolwire proxy: sign in", form)


def render(page: Page) -> str:
    """The whole page."""
    since = datetime.fromtimestamp(page.since, UTC).strftime("%Y-%m-%d")
    total = sum(s.cost for s in page.people)
    parts = [f"<h1>toolwire proxy</h1><p class=note>Spend since {since} (30 days): "
             f"<b id=total data-usd='{total:.6f}'>${total:.2f}</b></p>"]  # fmt: skip
    parts += [f"<p class=note>{escape(n)}</p>" for n in page.notes]
    parts.append("<h2>Spend per day</h2>" + day_chart(page.days))
    pairs = (("people", page.people), ("teams", page.teams), ("models", page.models))
    charts = [bar_chart(name, rows, 0) for name, rows in pairs]
    parts.append("<div class=charts>" + "".join(charts) + "</div>")
    parts.append(_spend_table("people", ("user", "team"), page.people))
    parts.append(_spend_table("teams", ("team",), page.teams))
    parts.append(_spend_table("models", ("model",), page.models))
    parts.append(_budgets(page.budgets))
    parts.append(_keys(page.keys))
    parts.append(_backends(page.backends))
    parts.append(_recent(page.recent))
    return _document("toolwire proxy", "".join(parts))


def bar_chart(name: str, rows: Sequence[Spend], key: int) -> str:
    """Horizontal bars of cost, the largest first (at most 12)."""
    shown = list(rows)[:12]
    top = max((s.cost for s in shown), default=0.0) or 1.0
    height = 22 * max(1, len(shown)) + 8
    bars = []
    for i, s in enumerate(shown):
        label, width, y = escape(s.key[key] or "-"), 240 * s.cost / top, 6 + 22 * i
        bars.append(f"<text x=4 y={y + 13}>{label}</text>"
                    f"<rect class=bar x=120 y={y} width='{width:.1f}' height=16 fill='{BAR}'"
                    f" data-usd='{s.cost:.6f}'/><text x='{124 + width:.1f}' y={y + 13}>"
                    f"${s.cost:.2f}</text>")  # fmt: skip
    return (f"<figure><figcaption>Spend per {_ONE[name]}</figcaption><svg id=chart-{name} "
            f"xmlns='http://www.w3.org/2000/svg' width=430 height={height} font-size=12>"
            f"{''.join(bars)}</svg></figure>")  # fmt: skip


def day_chart(days: Sequence[Spend]) -> str:
    """Vertical bars of each day's cost, oldest left (served and refused counts beside)."""
    ordered = sorted(days, key=lambda s: s.key[0])
    top = max((s.cost for s in ordered), default=0.0) or 1.0
    bars = []
    for i, s in enumerate(ordered):
        h, x = 160 * s.cost / top, 40 + 22 * i
        bars.append(f"<rect class=bar x={x} y='{190 - h:.1f}' width=16 height='{h:.1f}' "
                    f"fill='{BAR}' data-day='{escape(s.key[0])}' data-usd='{s.cost:.6f}'>"
                    f"<title>{escape(s.key[0])}: ${s.cost:.4f}, {s.served} served, "
                    f"{s.refused} refused</title></rect>"
                    + (f"<text x={x} y=206 font-size=10>{escape(s.key[0][5:])}</text>"
                       if i % 5 == 0 else ""))  # fmt: skip
    width = 60 + 22 * max(len(ordered), 1)
    axis = f"<line x1=36 y1=190 x2={width} y2=190 stroke='#8894a8'/>"
    label = f"<text x=2 y=34 font-size=10>${top:.2f}</text>"
    return (f"<svg id=chart-days xmlns='http://www.w3.org/2000/svg' width={width} height=212 "
            f"font-size=11>{axis}{label}{''.join(bars)}</svg>")  # fmt: skip


def _table(table_id: str, head: Sequence[str], rows: Sequence[str]) -> str:
    header = "".join(f"<th>{escape(h)}</th>" for h in head)
    empty = "" if rows else f"<tr><td colspan={len(head)}>none</td></tr>"
    return f"<table id={table_id}><tr>{header}</tr>{''.join(rows)}{empty}</table>"


def _cells(values: Sequence[Any]) -> str:
    return "".join(
        f"<td class=n>{escape(str(v))}</td>" if isinstance(v, int | float) and not
        isinstance(v, bool) else f"<td>{escape(str(v))}</td>" for v in values
    )  # fmt: skip


def _spend_table(name: str, keys: Sequence[str], rows: Sequence[Spend]) -> str:
    head = (*keys, "served", "refused", "input", "output", "cost")
    body = []
    for s in rows:
        data = " ".join(f"data-{k}='{escape(v)}'" for k, v in zip(keys, s.key, strict=True))
        values = (*(v or "-" for v in s.key), s.served, s.refused, s.input_tokens,
                  s.output_tokens)  # fmt: skip
        body.append(f"<tr {data} data-usd='{s.cost:.6f}'>{_cells(values)}"
                    f"<td class=n>${s.cost:.4f}</td></tr>")  # fmt: skip
    return f"<h2>Spend per {_ONE[name]}</h2>" + _table(f"spend-{name}", head, body)


def _budgets(found: Sequence[Standing]) -> str:
    body = []
    for s in found:
        shown = s.to_json()
        body.append(f"<tr data-subject='{escape(s.subject)}' data-left='{shown['left_usd']:.6f}'>"
                    + _cells((s.subject, f"${shown['limit_usd']:.2f}", f"${shown['spent_usd']:.4f}",
                              f"${shown['left_usd']:.4f}", shown["resets"])) + "</tr>")  # fmt: skip
    head = ("budget of", "limit", "spent", "left", "resets")
    return "<h2>Budgets</h2>" + _table("budgets", head, body)


def _keys(keys: Sequence[dict[str, Any]]) -> str:
    body = [f"<tr data-key='{escape(k['id'])}'>" + _cells((k["id"], k["user"], k["team"] or "-",
            k["role"], ",".join(k["models"]) or "any", k["state"], k["expires"] or "never",
            k["created"])) + "</tr>" for k in keys]  # fmt: skip
    head = ("id", "user", "team", "role", "models", "state", "expires", "created")
    return "<h2>Keys</h2>" + _table("keys", head, body)


def _backends(backends: Sequence[dict[str, Any]]) -> str:
    body = []
    for b in backends:
        state = f"cooling {b['cooling_seconds']} s" if b["cooling"] else "ready"
        body.append(f"<tr data-backend='{escape(b['name'])}' data-cooling='{b['cooling_seconds']}'>"
                    + _cells((b["name"], b["provider"], b["model"],
                              " -> ".join(b["fails_over_to"]) or "-", state,
                              b["failures_in_a_row"])) + "</tr>")  # fmt: skip
    head = ("backend", "provider", "model", "fails over to", "health", "failures in a row")
    return "<h2>Backends</h2>" + _table("backends", head, body)


def _recent(rows: Sequence[LedgerRow]) -> str:
    body = []
    for r in rows:
        at = datetime.fromtimestamp(r.at, UTC).strftime("%Y-%m-%d %H:%M:%S")
        body.append(f"<tr data-usd='{r.cost:.6f}'>" + _cells((at, r.user or "-", r.team or "-",
                    r.backend, r.model, r.input_tokens, r.output_tokens, f"${r.cost:.4f}",
                    r.status)) + "</tr>")  # fmt: skip
    head = ("at (UTC)", "user", "team", "backend", "model", "input", "output", "cost", "status")
    return "<h2>Last requests</h2>" + _table("recent", head, body)


__all__ = ["Page", "bar_chart", "day_chart", "login_page", "render"]
