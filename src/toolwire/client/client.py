"""``TerminalClient``: the client side of ACP for a terminal, on the official SDK.

It implements the SDK's ``acp.interfaces.Client`` methods a terminal can honour:
``session/update`` (into a ``SessionView``, then the renderer), permission requests, and
``fs/read_text_file`` / ``fs/write_text_file`` inside the session directory. Terminals
(``terminal/*``) and elicitation are not implemented and therefore not advertised
(ACP: omitted capabilities are unsupported; the agent then runs commands itself).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, cast

from acp import Client
from acp.schema import (
    ClientCapabilities,
    FileSystemCapabilities,
    PermissionOption,
    ReadTextFileResponse,
    RequestPermissionResponse,
    ToolCallUpdate,
    WriteTextFileResponse,
)
from acp.utils import serialize_params
from pydantic import BaseModel
from rich.console import Console

from toolwire.client.ask import LineReader, Permissions
from toolwire.client.fs import FileAccess
from toolwire.client.live import LiveRenderer
from toolwire.client.render import PlainRenderer, Renderer
from toolwire.client.view import SessionView


class TerminalClient:
    """Applies what the agent streams and answers what it asks (module docstring)."""

    def __init__(
        self,
        *,
        view: SessionView,
        renderer: Renderer,
        files: FileAccess,
        permissions: Permissions,
    ) -> None:
        self.view = view
        self.renderer = renderer
        self.files = files
        self.permissions = permissions
        self.agent: Any = None

    @classmethod
    def for_terminal(
        cls,
        console: Console,
        cwd: str | Path,
        *,
        live: bool,
        auto_allow: bool,
        reader: LineReader | None,
    ) -> TerminalClient:
        """A client serving ``cwd``, rendering to ``console`` live or line by line."""
        view = SessionView()
        files = FileAccess(cwd)
        kind = LiveRenderer if live else PlainRenderer
        renderer = kind(console, view, files.root)
        permissions = Permissions(renderer, auto=auto_allow, reader=reader)
        return cls(view=view, renderer=renderer, files=files, permissions=permissions)

    @staticmethod
    def capabilities() -> ClientCapabilities:
        """What ``initialize`` advertises: text files yes, terminals no."""
        return ClientCapabilities(
            fs=FileSystemCapabilities(read_text_file=True, write_text_file=True),
            terminal=False,
        )

    def as_sdk_client(self) -> Client:
        """This object typed as the SDK's ``Client`` protocol.

        The protocol also lists terminal and elicitation methods; leaving them out is
        deliberate (not advertised), so the structural type cannot be checked here.
        """
        return cast(Client, self)

    def on_connect(self, conn: Any) -> None:
        """Keep the agent connection (the SDK calls this once connected)."""
        self.agent = conn

    async def session_update(self, session_id: str, update: BaseModel, **kwargs: Any) -> None:
        """Apply one ``session/update`` (in the form the SDK wrote it) and render it."""
        change = self.view.apply(session_id, serialize_params(update))
        self.renderer.show(change)

    async def request_permission(
        self,
        session_id: str,
        tool_call: ToolCallUpdate,
        options: list[PermissionOption],
        **kwargs: Any,
    ) -> RequestPermissionResponse:
        """Show the call as the request describes it (an upsert, as Zed does), then decide."""
        change = self.view.merge_call(serialize_params(tool_call), create=False)
        self.renderer.show(change)
        return await self.permissions.decide(change.call, options)

    async def read_text_file(
        self,
        session_id: str,
        path: str,
        line: int | None = None,
        limit: int | None = None,
        **kwargs: Any,
    ) -> ReadTextFileResponse:
        """``fs/read_text_file``: a file inside the session directory."""
        return ReadTextFileResponse(content=self.files.read(path, line, limit))

    async def write_text_file(
        self, session_id: str, path: str, content: str, **kwargs: Any
    ) -> WriteTextFileResponse:
        """``fs/write_text_file``: an atomic write inside the session directory."""
        self.files.write(path, content)
        return WriteTextFileResponse()

    @property
    def cwd(self) -> Path:
        """The session directory files are served from."""
        return self.files.root


__all__ = ["TerminalClient"]
