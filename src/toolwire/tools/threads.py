"""Blocking file work off the event loop, in threads that never hold the process up.

Not ``asyncio.to_thread``: its threads belong to the loop's default executor, which
``asyncio.run`` joins on the way out (``loop.shutdown_default_executor``, without a
time limit before Python 3.12) and ``concurrent.futures`` joins again at interpreter exit.
One call stuck in the kernel (a read of a named pipe, a hung network mount) would then
keep the agent alive after stdin closed or a SIGTERM. A daemon thread does not: "the
entire Python program exits when only daemon threads are left"
(https://docs.python.org/3/library/threading.html#thread-objects). A cancelled caller
stops waiting at once; the thread's late result is dropped.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import threading
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")


async def off_loop(work: Callable[[], T], name: str = "toolwire-io") -> T:
    """``work()`` run in a new daemon thread; its result or exception, awaited."""
    loop = asyncio.get_running_loop()
    future: asyncio.Future[T] = loop.create_future()
    context = contextvars.copy_context()

    def settle(result: T | None, error: BaseException | None) -> None:
        if future.done():
            return  # the caller was cancelled: nobody wants the result
        if error is not None:
            future.set_exception(error)
        else:
            future.set_result(result)  # type: ignore[arg-type]  # T when error is None

    def target() -> None:
        try:
            result = context.run(work)
        except BaseException as exc:  # handed to the awaiting task, which raises it
            outcome: tuple[T | None, BaseException | None] = (None, exc)
        else:
            outcome = (result, None)
        with contextlib.suppress(RuntimeError):  # the loop is closed: nobody waits
            loop.call_soon_threadsafe(settle, *outcome)

    threading.Thread(target=target, name=name, daemon=True).start()
    return await future


__all__ = ["off_loop"]
