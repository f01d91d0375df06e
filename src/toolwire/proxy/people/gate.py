"""Who is asking and whether they may spend: keys checked, budgets reserved and settled.

``People`` is the proxy's one entry point: ``identify`` maps an offered key to its
``Caller`` (the record and its user's and team's budgets, cached for at most
``CACHE_SECONDS`` so a revoked key is refused by every replica within a second),
``reserve`` charges a request's worst case against every budget of its caller in one
atomic step of the accounts store, and the ``Hold`` it returns settles at the real usage
once the response ends (through ``Writer``, off the request path) and queues the
ledger row.

The worst case is the input estimate (``Plan.input_tokens``, ``estimate_wire`` of the
body sent) at the input price plus ``max_tokens`` at the output price, of the dearest
backend the request may reach (its fallbacks too). Prices per million tokens times
tokens are micro-dollars, the counters' unit. A backend without ``price_per_mtok``
costs nothing. The settled cost is the provider's count: it can be above the
reservation only when the provider counts more input than the estimate.
"""

from __future__ import annotations

import asyncio
import math
import time
from collections.abc import AsyncGenerator, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import partial
from typing import Any, TypeVar

from toolwire.context.meter import Price, response_cost
from toolwire.events import Event, MessageEnd, StreamError, Usage
from toolwire.proxy.errors import ProxyError
from toolwire.proxy.metrics import Metrics
from toolwire.proxy.people.accounts import Accounts, open_accounts
from toolwire.proxy.people.keys import MICROS, Budget, Charge, KeyRecord, digest, dollars
from toolwire.proxy.people.ledger import LedgerRow, check_ledger, open_ledger
from toolwire.proxy.people.spool import Spool, spool_directory
from toolwire.proxy.people.writer import Writer
from toolwire.proxy.ratelimit import Caller as RateCaller

CACHE_SECONDS = 0.5  # under the 1 s in which a revocation must reach every replica
_ENDINGS = (MessageEnd, StreamError)
_T = TypeVar("_T")


class BudgetExceededError(ProxyError):
    """The request's worst case does not fit a budget: 403 ``permission_error``, which
    Claude Code shows as it is and does not retry (it retries a 429 for minutes)."""

    status = 403
    kind = "permission_error"


class ModelNotAllowedError(ProxyError):
    """The key's ``--models`` patterns do not cover the routed backend or model."""

    status = 403
    kind = "permission_error"


@dataclass(frozen=True, slots=True)
class Caller:
    """A key that was offered and found (not revoked), with its subjects' budgets."""

    key: KeyRecord
    budgets: dict[str, Budget] = field(default_factory=dict)

    @property
    def limited(self) -> RateCaller:
        """Who ``[proxy.limits]`` counts this request against: the key's id, user, team."""
        return RateCaller(self.key.id, self.key.user, self.key.team)

    @property
    def subjects(self) -> list[str]:
        found = [f"user:{self.key.user}"]
        return found + ([f"team:{self.key.team}"] if self.key.team else [])


@dataclass(slots=True)
class Hold:
    """One request's reservation, settled once by ``finish``."""

    people: People
    caller: Caller | None
    session: str
    charges: list[Charge]
    amount: int = 0
    """The worst case reserved (micro-dollars)."""
    finished: bool = False

    def settle(
        self, backend: str, model: str, wire_format: Any, usage: Usage | None, status: str
    ) -> None:
        """The response ended (``metered``): charge what the upstream reported; a stream
        abandoned before it reported anything keeps its worst case (the provider bills it)."""
        cost = self.amount if usage is None else self.people.cost(backend, usage, wire_format)
        self.finish(backend, model, usage, status, cost)

    def finish(self, backend: str, model: str, usage: Usage | None, status: str, cost: int) -> None:
        """Settle at ``cost`` (micro-dollars) and queue the ledger row; later calls do nothing."""
        if self.finished:
            return
        self.finished = True
        self.people.finished(self, backend, model, usage or Usage(), status, cost)


class People:
    """Keys, budgets and the ledger as the proxy uses them (see the module doc)."""

    def __init__(
        self,
        accounts: Accounts,
        writer: Writer,
        metrics: Metrics,
        prices: Callable[[str], Price | None],
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.accounts = accounts
        self.writer = writer
        self.metrics = metrics
        self._prices = prices
        self._clock = clock
        self._cache: dict[str, tuple[float, Caller | None]] = {}
        self._any: tuple[float, bool] = (-math.inf, False)
        self.named: Mapping[str, frozenset[str]] = {}
        """Per backend, the models the config gives it (``routing.named_models``)."""

    @classmethod
    def open(
        cls,
        store: str,
        ledger: str,
        prices: Callable[[str], Price | None],
        metrics: Metrics,
        *,
        spool: str = "",
        memory_rows: int = 10_000,
    ) -> People:
        """Keys and budgets beside the session ``store``; rows to ``ledger`` ("": none),
        waiting in the ``spool`` directory (``spool_directory``) while it is down."""
        writer = Writer()
        if ledger:
            check_ledger(ledger)  # a missing driver is a config error now, not an outage
            where = Spool(spool_directory(ledger, spool))
            opener = partial(open_ledger, ledger)
            writer = Writer(opener=opener, spool=where, memory_rows=memory_rows)
            writer.start()
            metrics.watch("toolwire_proxy_ledger_backlog_rows", lambda: writer.backlog)
            metrics.watch("toolwire_proxy_ledger_spooled_rows", lambda: writer.spooled)
            metrics.watch("toolwire_proxy_ledger_rejected_rows", lambda: writer.rejected)
        return cls(open_accounts(store), writer, metrics, prices)

    async def identify(self, offered: Sequence[str]) -> Caller | None:
        """The caller of the first offered key found and not revoked, else None."""
        for secret in offered:
            caller = await self._lookup(digest(secret))
            if caller is not None:
                return caller
        return None

    async def required(self) -> bool:
        """Whether the store holds any key (then every request must carry one)."""
        at, found = self._any
        if time.monotonic() - at > CACHE_SECONDS:
            found = await self._run(self.accounts.any_key)
            self._any = (time.monotonic(), found)
        return found

    async def teams(self, user: str) -> set[str | None]:
        """The teams of ``user``'s keys not revoked (None: a key without a team)."""
        records = await self._run(self.accounts.records)
        return {r.team for r in records if r.user == user and not r.revoked}

    async def _lookup(self, key_digest: str) -> Caller | None:
        cached = self._cache.get(key_digest)
        if cached is not None and time.monotonic() - cached[0] <= CACHE_SECONDS:
            return cached[1]
        caller = await self._run(partial(self._load, key_digest))
        if len(self._cache) > 10_000:  # wrong keys must not grow it without bound
            self._cache.clear()
        self._cache[key_digest] = (time.monotonic(), caller)
        return caller

    def _load(self, key_digest: str) -> Caller | None:
        record = self.accounts.find(key_digest)
        # An expired key is refused like a revoked one (its record stays for ``keys list``).
        if record is None or not record.usable(self._clock()):
            return None
        caller = Caller(record)
        caller.budgets.update(self.accounts.budgets(caller.subjects))
        return caller

    def worst_case(self, backends: Sequence[str], input_tokens: int, max_tokens: int) -> int:
        """Micro-dollars the request can cost at most, on the dearest of ``backends``."""
        worst = 0.0
        for name in backends:
            price = self._prices(name)
            if price is not None:
                worst = max(worst, input_tokens * price.input + max_tokens * price.output)
        return math.ceil(worst)

    def permitted(self, caller: Caller | None, chain: Sequence[tuple[str, str]]) -> list[str]:
        """The backends of ``chain`` (each with the model it would be sent) a request may
        walk: ``ModelNotAllowedError`` when its key's ``--models`` do not cover the
        routed pair (the first); the fallbacks they do not cover are left out (a failover
        must not reach them)."""
        names = [backend for backend, _ in chain]
        if caller is None or not caller.key.models:
            return names
        (first, model), *rest = chain
        if not caller.key.allows(first, model, self.named.get(first, ())):
            patterns = ", ".join(caller.key.models)
            raise ModelNotAllowedError(
                f"this key may not use {first},{model} (it may use: {patterns})"
            )
        return [first] + [b for b, m in rest if caller.key.allows(b, m, self.named.get(b, ()))]

    async def admit(
        self,
        caller: Caller | None,
        session: str,
        backends: Sequence[str],
        tokens: tuple[int, int],
    ) -> Hold | None:
        """The request's hold (None: nobody to charge and no ledger to write), its worst
        case on ``backends`` (``permitted``'s chain). ``tokens``: the input estimate and
        ``max_tokens``."""
        if caller is None and not self.writer.enabled:
            return None
        return await self.reserve(caller, session, self.worst_case(backends, *tokens))

    async def reserve(self, caller: Caller | None, session: str, amount: int) -> Hold:
        """Charge ``amount`` to every budget of ``caller``; ``BudgetExceededError`` if one
        has no room (nothing is charged then)."""
        budgets = caller.budgets if caller else {}
        # The store's clock, not this replica's: every replica must be in one window.
        now = await self._run(self.accounts.now) if budgets else self._clock()
        charges = [
            Charge(f"{s}:{b.window(now)}", b.limit, amount, int(b.resets(now) - now) + 60)
            for s, b in budgets.items()
        ]
        hold = Hold(self, caller, session, charges, amount)
        if not charges:
            return hold
        refused = await self._run(partial(self.accounts.reserve, charges))
        if refused is not None:  # settle what ended first, then ask once more (caught_up)
            await self.writer.caught_up()
            refused = await self._run(partial(self.accounts.reserve, charges))
        if refused is None:
            return hold
        subject = refused.charge.counter.rsplit(":", 1)[0]
        budget = caller.budgets[subject] if caller else None
        hold.charges = []
        hold.finish("", "", None, "refused", 0)
        resets = datetime.fromtimestamp(budget.resets(now) if budget else now, UTC)
        who = subject.replace(":", " ", 1)
        raise BudgetExceededError(
            f"budget exceeded for {who}: {dollars(refused.spent)} of "
            f"{dollars(refused.charge.limit)} spent or reserved this period; this request "
            f"may cost up to {dollars(amount)}; the budget resets at "
            f"{resets.strftime('%Y-%m-%d %H:%M:%S UTC')}"
        )

    def cost(self, backend: str, usage: Usage | None, wire_format: Any) -> int:
        """Micro-dollars ``usage`` cost on ``backend`` (cache reads and writes priced)."""
        price = self._prices(backend)
        if price is None or usage is None:
            return 0
        return round(response_cost(usage, wire_format, price) * MICROS)

    def finished(
        self, hold: Hold, backend: str, model: str, usage: Usage, status: str, cost: int
    ) -> None:
        if hold.charges:
            settle = [Charge(c.counter, c.limit, cost - c.amount, c.ttl) for c in hold.charges]
            self.writer.put(partial(self.accounts.settle, settle))
        key = hold.caller.key if hold.caller else None
        team = (key.team or "") if key else ""
        tokens = (
            usage.input_tokens or 0,
            usage.output_tokens or 0,
            usage.cache_read_tokens or 0,
            usage.cache_write_tokens or 0,
        )
        if self.writer.enabled:
            row = LedgerRow(
                self._clock(), key.user if key else "", team, hold.session,
                backend, model, *tokens, cost / MICROS, status,
            )  # fmt: skip
            self.writer.put(row)
        if status == "refused":
            return
        for kind, count in zip(
            ("input", "output", "cache_read", "cache_write"), tokens, strict=True
        ):
            if count:
                self.metrics.add("toolwire_proxy_team_tokens_total", count, team=team, kind=kind)
        self.metrics.add("toolwire_proxy_team_cost_usd_total", cost / MICROS, team=team)

    async def _run(self, work: Callable[[], _T]) -> _T:
        return await asyncio.to_thread(work) if self.accounts.blocking else work()

    def close(self) -> None:
        self.writer.close()


async def metered(
    events: AsyncGenerator[Event, None],
    first: Event,
    done: Callable[[Usage | None, str], None],
) -> AsyncGenerator[Event, None]:
    """``events`` unchanged; ``done(usage, status)`` once: at the message's end (before it
    is yielded: the relay stops there) with ``ok``, or ``cut`` when the upstream's stream
    broke off (its usage so far); ``(None, "cut")`` when the stream is abandoned first
    (the client left; nothing was reported)."""
    called = False

    def end(event: MessageEnd) -> None:
        nonlocal called
        called = True
        done(event.usage, "cut" if event.stop_reason == "error" else "ok")

    try:
        if isinstance(first, MessageEnd):
            end(first)
        async for event in events:
            if not isinstance(event, _ENDINGS):
                yield event  # the hot path: one check per relayed event
                continue
            batch: list[Event] = [event]
            if isinstance(event, StreamError):
                # The upstream broke off: its decoder ends the message at once, with the
                # usage reported so far, but a relay stops reading at the error. Read on
                # to that end here (nothing more comes from the network).
                async for rest in events:
                    batch.append(rest)
                    if isinstance(rest, MessageEnd):
                        break
            for item in batch:
                if isinstance(item, MessageEnd) and not called:
                    end(item)
                yield item
    finally:
        if not called:
            done(None, "cut")
        await events.aclose()


__all__ = [
    "CACHE_SECONDS",
    "BudgetExceededError",
    "Caller",
    "Hold",
    "ModelNotAllowedError",
    "People",
    "metered",
]
