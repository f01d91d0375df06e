"""The hub against the reference server (server-everything), over stdio, streamable
HTTP and SSE: text, image, resource and error results, progress, cancel, list changes."""

from __future__ import annotations

import asyncio
import base64
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from tests.mcp.support import (
    assert_gone,
    everything_http,
    everything_script,
    groups,
    hub,
    run,
    until,
)
from toolwire.mcp import McpHub, ServerSpec

pytestmark = [pytest.mark.e2e, pytest.mark.slow]
TRANSPORTS = ("stdio", "http", "sse")


@contextmanager
def everything(transport: str, tmp: Path) -> Iterator[ServerSpec]:
    script = everything_script()
    if transport == "stdio":
        yield ServerSpec(
            name="everything", transport="stdio", command="node", args=(str(script), "stdio")
        )
        return
    mode = "streamableHttp" if transport == "http" else "sse"
    with everything_http(mode, tmp / "server.log") as url:
        yield ServerSpec(name="everything", transport=transport, url=url)  # type: ignore[arg-type]


async def started(spec: ServerSpec) -> McpHub:
    h = hub()
    assert await h.start([spec]) == []
    return h


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_results_map_to_acp_content_and_model_text(transport: str, tmp_path: Path) -> None:
    async def main(spec: ServerSpec) -> None:
        h = await started(spec)
        pgids = groups(h)
        names = {t.model_name for t in h.tools()}
        assert "mcp__everything__get-sum" in names  # kept as the server wrote it
        summed = await h.call("mcp__everything__get-sum", {"a": 2, "b": 3})
        assert summed.text == "The sum of 2 and 3 is 5."
        assert summed.content == [
            {"type": "content", "content": {"type": "text", "text": summed.text}}
        ]
        image = await h.call("mcp__everything__get-tiny-image", {})
        blocks = [c["content"] for c in image.content]
        assert [b["type"] for b in blocks] == ["text", "image", "text"]
        assert blocks[1]["mimeType"] == "image/png"
        assert base64.b64decode(blocks[1]["data"]).startswith(b"\x89PNG")
        assert "[image: image/png, 4 KB]" in image.text
        ref = await h.call("mcp__everything__get-resource-reference", {})
        embedded = ref.content[1]["content"]
        assert embedded["type"] == "resource"
        assert embedded["resource"]["uri"] == "demo://resource/dynamic/text/1"
        assert "[resource: demo://resource/dynamic/text/1]\nResource 1:" in ref.text
        links = await h.call("mcp__everything__get-resource-links", {"count": 2})
        link = links.content[1]["content"]
        assert link["type"] == "resource_link"
        assert link["uri"].startswith("demo://")
        assert "[resource link: " in links.text
        structured = await h.call(
            "mcp__everything__get-structured-content", {"location": "New York"}
        )
        assert isinstance(structured.raw_output, dict)
        assert set(structured.raw_output) == {"temperature", "conditions", "humidity"}
        failed = await h.call("mcp__everything__get-sum", {"a": "two"})
        assert failed.is_error
        assert failed.text
        await h.aclose()
        assert_gone(pgids)

    with everything(transport, tmp_path) as spec:
        run(main(spec))


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_progress_then_a_cancel_mid_way(transport: str, tmp_path: Path) -> None:
    async def main(spec: ServerSpec) -> None:
        h = await started(spec)
        seen: list[tuple[float, float | None, str | None]] = []
        op = "mcp__everything__trigger-long-running-operation"
        done = await h.call(
            op, {"duration": 0.6, "steps": 3}, on_progress=lambda *a: seen.append(a)
        )
        assert [p for p, _, _ in seen] == [1, 2, 3]
        assert seen[0][1] == 3
        assert "Long running operation completed" in done.text
        seen.clear()
        call = asyncio.create_task(
            h.call(op, {"duration": 30, "steps": 60}, on_progress=lambda *a: seen.append(a))
        )
        assert await until(lambda: len(seen) >= 1, within=10)
        call.cancel()
        with pytest.raises(asyncio.CancelledError):
            await call
        # The server is still there for the next call.
        assert (await h.call("mcp__everything__echo", {"message": "hi"})).text == "Echo: hi"
        await h.aclose()

    with everything(transport, tmp_path) as spec:
        run(main(spec))


def test_the_list_changed_notice_after_start_is_read(tmp_path: Path) -> None:
    """server-everything registers tools after the handshake and says so; the hub reads
    the list again (same tools here, so nothing to flag)."""

    async def main(spec: ServerSpec) -> None:
        h = await started(spec)
        link = h._servers["everything"].link
        assert link is not None
        before = len(h.tools())
        assert before >= 10
        assert await until(lambda: link.refreshes >= 1)
        assert len(h.tools()) == before
        await h.aclose()

    with everything("stdio", tmp_path) as spec:
        run(main(spec))
