"""Run as a script: fetch a 50 MB body without ``Content-Length`` from a server in this
process with ``max_bytes`` = 5 MB; print the peak resident memory growth once the body is
read (``body``) and after the whole fetch (``total``: the decoded text is a second copy
of the body while it is made), and the bytes kept, as JSON. A process of its own, so the
peak (``VmHWM``) is this fetch's alone."""

from __future__ import annotations

import asyncio
import gc
import json
import sys

from tests.web.servers import head, serve
from toolwire.web import Fetcher, WebSettings, fetch

TOTAL = 50_000_000
MAX_BYTES = 5_000_000
CHUNK = b"a" * 65536


def status(key: str) -> int:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(key + ":"):
                return int(line.split()[1]) * 1024
    raise KeyError(key)


async def stream(writer: asyncio.StreamWriter) -> None:
    writer.write(head("200 OK", "Content-Type: text/plain"))
    sent = 0
    while sent < TOTAL:
        writer.write(CHUNK)
        await writer.drain()
        sent += len(CHUNK)


async def main() -> None:
    settings = WebSettings(allow_hosts=("big.test",), resolve=(("big.test", "127.0.0.1"),))
    async with serve({"/warm": stream, "/": stream}) as server:
        small = Fetcher(WebSettings(settings.allow_hosts, settings.resolve, max_bytes=65536))
        await small.fetch(server.url("/warm", "big.test"))  # imports and first buffers
        gc.collect()
        before = status("VmHWM")
        read, peaks = fetch._read, []

        async def noted(*args: object) -> object:  # the peak as the body is done
            done = await read(*args)  # type: ignore[arg-type]
            peaks.append(status("VmHWM") - before)
            return done

        fetch._read = noted  # type: ignore[assignment]
        fetcher = Fetcher(WebSettings(settings.allow_hosts, settings.resolve, max_bytes=MAX_BYTES))
        page = await fetcher.fetch(server.url("/", "big.test"))
        grown = status("VmHWM") - before
        await asyncio.sleep(0.1)
    found = {"body": peaks[0], "total": grown, "kept": page.bytes_read, "truncated": page.truncated}
    json.dump(found, sys.stdout)


if __name__ == "__main__":
    asyncio.run(main())
