"""MCP tools in the agent: what the editor shows for them, who may run them, running them.

A session's MCP servers (``toolwire.mcp.McpHub``: the editor's from ``mcpServers`` and
the user's ``[mcp_servers.NAME]``) start in the background when the session opens; the
first prompt waits for them (each has its own start timeout), and a server that fails is
told to the user in one line while the session goes on without it.

Their tools are offered next to the built-in ones as ``mcp__<server>__<tool>`` and go
through the same pipeline: the card is named the moment the model names the tool, its
title refined as arguments complete (``describer``), its arguments streamed and staged
like a built-in tool's. Kind comes from the tool's annotations: ``readOnlyHint`` is
``read`` (``search`` for a searching name), ``destructiveHint`` ``delete`` or ``edit``,
``openWorldHint`` ``fetch``, anything else ``other``.

Permission is the built-in tools' rule (``toolwire.agent.turn.policy``): in ``ask`` and
``accept-edits`` every MCP call asks, unless the tool is read-only and its server trusted
(``trusted = true`` in its config table); ``read-only`` runs read-only tools and refuses
the rest; "always allow" and "always reject" hold for the tool for the session. Progress
notifications replace a progress line on the card (the engine throttles them); a cancel
sends the MCP cancellation and ends the call failed.
"""

from __future__ import annotations

import asyncio
import logging
import re
from collections.abc import Callable, Mapping
from typing import Any

from toolwire.agent.session.elicitation import Questions
from toolwire.agent.session.state import Runtime, Session
from toolwire.agent.store.schema import default_db_path
from toolwire.history import ImagePart, TextPart, ToolResultPart, ToolSpec
from toolwire.imaging import SHOWN_BASE64, fitted
from toolwire.mcp import McpTool
from toolwire.tools.threads import off_loop
from toolwire.updates.lifecycle import ToolCallLifecycle
from toolwire.updates.titles import Describer, Description, resolve, shorten
from toolwire.updates.wire import ToolKind, image_content, location, text_content

log = logging.getLogger("toolwire.agent")
_SEARCHING = re.compile(r"search|find|query|list|lookup|grep", re.IGNORECASE)
_DELETING = re.compile(r"delete|remove|drop|destroy|erase|purge", re.IGNORECASE)
_PATHS = ("path", "file_path", "filePath", "file", "filename", "uri")
_DETAIL_KEYS = ("query", "q", "url", "command", "name", "title", "id")


def kind_of(tool: McpTool) -> ToolKind:
    """The ACP kind from the tool's annotations (module doc)."""
    if tool.read_only:
        return "search" if _SEARCHING.search(tool.name) else "read"
    if tool.destructive:
        return "delete" if _DELETING.search(tool.name) else "edit"
    if tool.open_world:
        return "fetch"
    return "other"


def describer(tool: McpTool) -> Describer:
    """Title and locations of a call of ``tool`` from the arguments known so far."""
    kind, label = kind_of(tool), tool.title or tool.name

    def describe(args: Mapping[str, Any], cwd: str) -> Description:
        detail = next((args[k] for k in _DETAIL_KEYS if isinstance(args.get(k), str)), None)
        path = next((args[k] for k in _PATHS if isinstance(args.get(k), str)), None)
        shown = detail or path
        title = shorten(f"{label}: {shown}" if shown else label)
        places = (location(resolve(path, cwd)[1]),) if path and not path.startswith("http") else ()
        return Description(title, kind, places)

    return describe


def specs(session: Session) -> list[ToolSpec]:
    """The session's MCP tools as offered to the model (none before they started)."""
    hub = session.services.mcp
    return [] if hub is None else [t.spec() for t in hub.tools()]


def describers(session: Session) -> dict[str, Describer]:
    hub = session.services.mcp
    return {} if hub is None else {t.model_name: describer(t) for t in hub.tools()}


def read_only_tools(session: Session) -> frozenset[str]:
    """The session's tools that only read (the handoff dedupes them like reads)."""
    hub = session.services.mcp
    return (
        frozenset() if hub is None else frozenset(t.model_name for t in hub.tools() if t.read_only)
    )


def start(session: Session, runtime: Runtime, servers: list[Any]) -> None:
    """Start the session's MCP servers in the background (``ready`` waits for them)."""
    from toolwire.mcp import specs_from_acp, specs_from_config

    wanted = [*specs_from_acp(servers), *specs_from_config(runtime.config)]
    if not wanted:
        return
    from toolwire.mcp.hub import McpHub  # the MCP SDK: only for a session that runs a server

    hub = McpHub(
        log=logging.getLogger("toolwire.mcp"),
        stderr_path=stderr_log(),
        elicitor=Questions(session, runtime),
    )

    async def run() -> None:
        for line in await hub.start(wanted):
            log.warning("session %s: %s", session.id, line)
            session.services.notifier.notice(line)

    session.services.mcp_started(hub, asyncio.create_task(run()))


def stderr_log() -> str | None:
    """Where stdio servers' stderr goes: ``mcp-servers.log`` beside the session store (the
    protocol owns stdout, and the agent's own stderr is the editor's log pane)."""
    path = default_db_path().parent / "mcp-servers.log"
    try:
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    except OSError as exc:
        log.warning("MCP servers' stderr is discarded: cannot create %s: %s", path.parent, exc)
        return None
    return str(path)


async def ready(session: Session) -> None:
    """Wait until the session's servers started (or failed to): before a model request."""
    task = session.services.mcp_start
    if task is not None and not task.done():
        await asyncio.shield(task)


async def stop(session: Session) -> None:
    """Stop the session's servers (and a start still under way)."""
    task, hub = session.services.mcp_start, session.services.mcp
    session.services.mcp_started(None, None)
    if task is not None and not task.done():
        task.cancel()
    if hub is not None:
        await hub.aclose()


async def run_call(
    session: Session,
    send: Callable[[ToolCallLifecycle], None],
    call_id: str,
    name: str,
    args: Mapping[str, Any],
    life: ToolCallLifecycle,
) -> ToolResultPart:
    """Run one MCP call (permission was decided by the caller); ``send`` passes each
    change of the card to the engine."""
    hub = session.services.mcp
    assert hub is not None
    life.run()
    send(life)

    def progress(done: float, total: float | None, message: str | None) -> None:
        amount = f"{done:g}/{total:g}" if total else f"{done:g}"
        line = f"{message} ({amount})" if message else f"Progress: {amount}"
        life.set_content([text_content(line)])
        send(life)

    limit = session.services.tools.limits.output_max_bytes
    result = await hub.call(name, dict(args), on_progress=progress, max_output_bytes=limit)
    content, images, notes = result.content, list[ImagePart](), list[str]()
    if any(_image_block(item) for item in content):  # decoding takes a while: off the loop
        content, images, notes = await off_loop(lambda: _fitted(result.content))
    if result.is_error:
        life.set_content(())
        life.fail(result.text, raw_output=result.raw_output)
    else:
        life.complete(content=content, raw_output=result.raw_output)
    send(life)
    text = "\n".join([result.text, *notes])
    return ToolResultPart(call_id, name, text, is_error=result.is_error, images=tuple(images))


MAX_IMAGES = 4
"""Images of one MCP result passed on to the model (each counts ~1,600 tokens)."""


def _image_block(item: Any) -> dict[str, Any] | None:
    block = item.get("content") if isinstance(item, dict) else None
    return block if isinstance(block, dict) and block.get("type") == "image" else None


def _fitted(
    content: list[dict[str, Any]],
) -> tuple[list[dict[str, Any]], list[ImagePart], list[str]]:
    """The result's images fitted (``toolwire.imaging``): the card's content with each
    image at most ``SHOWN_BASE64`` (else its note), the images for the model (its text
    already names them; a backend without vision turns them into notes), and a note for
    each image that could not be decoded, for the model's text."""
    shown: list[dict[str, Any]] = []
    images: list[ImagePart] = []
    notes: list[str] = []
    for item in content:
        block = _image_block(item)
        if block is None:
            shown.append(item)
            continue
        image = fitted(ImagePart(str(block.get("mimeType") or ""), str(block.get("data") or "")))
        if isinstance(image, TextPart):
            notes.append(image.text)
            shown.append(text_content(image.text))
            continue
        if len(images) < MAX_IMAGES:
            images.append(image)
        if len(image.data) > SHOWN_BASE64:
            shown.append(text_content(image.note("too large to show here")))
        else:
            shown.append(image_content(image.data, image.media_type))
    return shown, images, notes


__all__ = [
    "describer",
    "describers",
    "kind_of",
    "read_only_tools",
    "ready",
    "run_call",
    "specs",
    "start",
    "stop",
]
