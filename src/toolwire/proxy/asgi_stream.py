"""A streamed response with less machinery per piece than Starlette's ``StreamingResponse``.

``StreamingResponse`` (ASGI spec 2.3, uvicorn's) runs the body in an anyio task group
next to a disconnect listener; here the body is sent from the request's own task and the
listener is one plain asyncio task that cancels it when the client leaves, so a client
that goes away still stops the body (and with it the upstream request) at once, even
while the upstream is silent. Each piece the body yields is sent as it comes.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator, Mapping

from starlette.responses import Response
from starlette.types import Receive, Scope, Send


class EventStreamResponse(Response):
    """``text/event-stream`` from an async generator of bytes; closed however it ends."""

    media_type = "text/event-stream"

    def __init__(self, body: AsyncGenerator[bytes, None], headers: Mapping[str, str]) -> None:
        self.body_iterator = body
        self.status_code = 200
        self.background = None
        self.init_headers(headers)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        task = asyncio.current_task()
        assert task is not None
        state = {"finished": False, "left": False}

        async def listen() -> None:
            while (await receive())["type"] != "http.disconnect":
                pass
            if not state["finished"]:
                state["left"] = True
                task.cancel()

        listener = asyncio.create_task(listen())
        try:
            await send({"type": "http.response.start", "status": 200, "headers": self.raw_headers})
            async for piece in self.body_iterator:
                await send({"type": "http.response.body", "body": piece, "more_body": True})
            # Before the last send: once the response is complete, uvicorn answers the
            # listener's receive() with a disconnect, which must not cancel anything.
            state["finished"] = True
            await send({"type": "http.response.body", "body": b"", "more_body": False})
        except asyncio.CancelledError:
            if not state["left"]:
                raise
            task.uncancel()  # the client left: that ends this response, nothing else
        finally:
            state["finished"] = True
            listener.cancel()
            await self.body_iterator.aclose()


__all__ = ["EventStreamResponse"]
