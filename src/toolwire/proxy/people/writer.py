"""The ledger's writer: one thread that writes rows in batches and settles reservations,
so neither holds a request, and that loses no row while the database is down.

Rows are made ``storable`` as they are queued, then written ``BATCH`` at a time. A batch
the database refuses for something in it is written row by row: the rows it takes are
kept, a row it still refuses is logged and kept in the spool's ``rejected.jsonl`` with
the reason (never retried: it would fail again). When the database cannot be reached
(``LedgerUnavailableError``, or opening it failed) the rows wait: in memory up to
``memory_rows``, then in this process's spool file (``spool.py``). The writer opens the
ledger again after a backoff (``RETRY_FIRST`` seconds, doubling to ``RETRY_MOST``),
writes what waited, then replays the spool, its own file and any a stopped process
left. At shutdown what is still waiting goes to the spool, which the next start reads
back. ``backlog`` and ``spooled`` are what ``/metrics`` shows; the log says when the
outage starts (and every ``LOG_EVERY`` seconds while it lasts) and when it ends.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import queue
import threading
import time
from collections import deque
from collections.abc import Callable
from functools import partial

from toolwire.proxy.people.ledger import Ledger, LedgerRow, LedgerUnavailableError, storable
from toolwire.proxy.people.spool import REJECTED, Spool

log = logging.getLogger(__name__)
BATCH = 500  # rows per insert at most: a burst is a few round trips, not thousands
RETRY_FIRST = 0.5
RETRY_MOST = 30.0
LOG_EVERY = 30.0
Job = Callable[[], None]
_STOP = object()


class Writer:
    """One thread doing what must not hold a request: settling reservations (``Job``s)
    and writing ledger rows, in the order they were queued (see the module doc).

    ``ledger``: an open ledger; ``opener``: how to open (and reopen) one, tried by the
    thread; ``spool``: where rows wait past ``memory_rows`` while it is down.
    """

    def __init__(
        self,
        ledger: Ledger | None = None,
        *,
        opener: Callable[[], Ledger] | None = None,
        spool: Spool | None = None,
        memory_rows: int = 10_000,
    ) -> None:
        self.ledger = ledger
        self.enabled = ledger is not None or opener is not None
        """Whether rows are kept at all (a ledger is configured)."""
        self._opener, self._spool, self._memory_rows = opener, spool, memory_rows
        self._pending: deque[LedgerRow] = deque()
        self._queue: queue.SimpleQueue[object] = queue.SimpleQueue()
        self._thread: threading.Thread | None = None
        self._start = threading.Lock()
        self._down: tuple[float, str] | None = None  # since when, and why
        self._retry_at, self._delay, self._said = 0.0, RETRY_FIRST, 0.0
        self.rejected = 0
        """Rows the database refused on their own (kept in the spool's rejected file)."""

    @property
    def backlog(self) -> int:
        """Rows waiting to be written: in memory and in the spool."""
        return len(self._pending) + self.spooled

    @property
    def spooled(self) -> int:
        return self._spool.rows if self._spool else 0

    def start(self) -> None:
        """Start the thread now (else the first ``put`` does): it opens the ledger and
        replays what a stopped process spooled."""
        if self._thread is None:
            with self._start:
                if self._thread is None:
                    self._thread = threading.Thread(
                        target=self._run, name="toolwire-ledger", daemon=True
                    )
                    self._thread.start()

    def put(self, item: LedgerRow | Job) -> None:
        self.start()
        self._queue.put(storable(item) if isinstance(item, LedgerRow) else item)

    async def caught_up(self, timeout: float = 2.0) -> None:
        """Wait until what was queued before this call has run (at most ``timeout``).

        A budget refusal waits here first: a response that already ended has its
        settlement queued, and until it runs that reservation still counts its worst
        case, so a client sending its next request at once would be refused on money it
        did not spend."""
        if self._thread is None:
            return
        loop = asyncio.get_running_loop()
        reached = asyncio.Event()
        self.put(partial(_wake, loop, reached))
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(timeout):
                await reached.wait()

    def close(self, timeout: float = 30.0) -> None:
        """Write everything queued (or spool it if the ledger is down), then stop."""
        if self._thread is not None:
            self._queue.put(_STOP)
            self._thread.join(timeout)
            self._thread = None
        if self.ledger is not None:
            self.ledger.close()
            self.ledger = None

    def _run(self) -> None:
        if self._spool is not None:
            self._spool.claim()
        if self.ledger is None and self._opener is not None:
            try:
                self.ledger = self._opener()
            except Exception as e:
                self._lost(str(e).strip() or type(e).__name__)
        stop = False
        while not stop:
            stop = self._take(self._next())
            self._flush()
        if self._down is None:  # down: no reconnect that could outlast the shutdown
            self._flush()
        self._keep()

    def _next(self) -> list[object]:
        """The queued items: waits for one, or until the next retry when rows wait."""
        wait = None  # nothing waits: block until something is queued
        if self.backlog and self._down is not None:
            wait = max(0.0, self._retry_at - time.monotonic())
        elif self.backlog and self.ledger is not None:
            wait = 0.0
        try:
            items = [self._queue.get(timeout=wait) if wait is not None else self._queue.get()]
        except queue.Empty:
            return []
        while len(items) < BATCH:
            try:
                items.append(self._queue.get_nowait())
            except queue.Empty:
                break
        return items

    def _take(self, items: list[object]) -> bool:
        """Run the jobs, keep the rows (spooling past ``memory_rows`` while down); whether
        the stop came."""
        stop = False
        for item in items:
            if item is _STOP:
                stop = True
            elif isinstance(item, LedgerRow):
                self._pending.append(item)
            else:
                _do(item)  # type: ignore[arg-type]
        excess = len(self._pending) - self._memory_rows
        if self._down is not None and excess > 0:
            spilled = [self._pending.pop() for _ in range(excess)][::-1]
            self._spill(spilled)
        return stop

    def _flush(self) -> None:
        """Write what waits in memory, then one batch of the spool, while the ledger takes it."""
        if self.backlog == 0 or not self._connected():
            return
        while self._pending:
            batch = [self._pending.popleft() for _ in range(min(BATCH, len(self._pending)))]
            left = self._write(batch)
            if left:
                self._pending.extendleft(reversed(left))
                return
        if self._spool is not None and self._spool.rows:
            rows, bad = self._spool.take(BATCH)
            for line in bad:
                log.error("toolwire proxy: ledger: an unreadable spooled row skipped: %s", line)
            self._pending.extend(rows)

    def _connected(self) -> bool:
        """Whether to write now: up, or down with its retry due (the ledger reopened)."""
        if self._down is None:
            return self.ledger is not None
        if time.monotonic() < self._retry_at:
            return False
        if self._opener is not None and self.ledger is None:
            try:
                self.ledger = self._opener()
            except Exception as e:
                self._lost(str(e).strip() or type(e).__name__)
                return False
        return self.ledger is not None

    def _recovered(self) -> None:
        assert self._down is not None
        log.warning(
            "toolwire proxy: ledger reachable again after %.0f s; writing %d waiting rows",
            time.time() - self._down[0], self.backlog,
        )  # fmt: skip
        self._down, self._delay = None, RETRY_FIRST
        if self._spool is not None:
            self._spool.claim()

    def _write(self, rows: list[LedgerRow]) -> list[LedgerRow]:
        """Write ``rows`` (one by one if the batch is refused); those not written because
        the ledger went down."""
        assert self.ledger is not None
        try:
            self.ledger.write(rows)
        except LedgerUnavailableError as e:
            self._lost(str(e))
            return rows
        except Exception as e:
            if len(rows) > 1:
                return self._one_by_one(rows)
            self._reject(rows[0], f"{type(e).__name__}: {str(e).strip()}")
            return []
        if self._down is not None:
            self._recovered()
        return []

    def _one_by_one(self, rows: list[LedgerRow]) -> list[LedgerRow]:
        for i, row in enumerate(rows):
            if self._write([row]):
                return rows[i:]
        return []

    def _reject(self, row: LedgerRow, reason: str) -> None:
        self.rejected += 1
        where = self._spool.directory / REJECTED if self._spool else "nowhere (no spool)"
        log.error(
            "toolwire proxy: ledger: a row of user %r was refused (%s); kept in %s",
            row.user, reason, where,
        )  # fmt: skip
        if self._spool is not None:
            self._spool.reject(row, reason)

    def _lost(self, reason: str) -> None:
        """The ledger cannot be reached: rows wait, the next try is after the backoff."""
        now = time.time()
        first = self._down is None
        if first:
            self._down = (now, reason)
        if self._opener is not None and self.ledger is not None:
            _do(self.ledger.close)
            self.ledger = None
        wait, self._delay = self._delay, min(RETRY_MOST, self._delay * 2)
        self._retry_at = time.monotonic() + wait
        if first or now - self._said >= LOG_EVERY:
            self._said = now
            log.warning(
                "toolwire proxy: ledger unreachable (%s); %d rows waiting (%d spooled in %s),"
                " next try in %.1f s",
                reason, self.backlog, self.spooled,
                self._spool.directory if self._spool else "no spool", wait,
            )  # fmt: skip

    def _spill(self, rows: list[LedgerRow]) -> None:
        if self._spool is None:
            log.error("toolwire proxy: ledger: %d rows dropped (no spool, memory full)", len(rows))
            return
        self._spool.append(rows)

    def _keep(self) -> None:
        """At shutdown: what could not be written goes to the spool, for the next start."""
        if self._pending:
            rows = list(self._pending)
            self._pending.clear()
            self._spill(rows)
            if self._spool is not None:
                log.warning(
                    "toolwire proxy: ledger unreachable at shutdown: %d rows kept in %s,"
                    " written when a proxy starts with the ledger reachable",
                    len(rows), self._spool.own_path,
                )  # fmt: skip
        if self._spool is not None:
            self._spool.close()


def _wake(loop: asyncio.AbstractEventLoop, reached: asyncio.Event) -> None:
    with contextlib.suppress(RuntimeError):  # the loop closed meanwhile: nobody waits
        loop.call_soon_threadsafe(reached.set)


def _do(job: Job) -> None:
    try:
        job()
    except Exception:
        # A store that is down must not stop later settlements: said, not raised.
        log.exception("toolwire proxy: a settlement failed")


__all__ = ["BATCH", "Writer"]
