"""What every tool is and returns: ``Tool``, ``ToolResult`` and the ACP shapes it carries.

The shapes' wire form (and ``ToolKind``) belong to ``toolwire.updates.wire``; the
dataclasses here are the typed form a tool fills in, and ``to_acp`` delegates there.

A tool is a stateless object with a name, a JSON schema for the model, an ACP ``kind``,
an ``effect`` (what a call can do, which the permission policy reads) and an async
``run(args, ctx)``; it owns its card too (``describe``, ``card``). ``run`` never raises for a
failure the model caused or can fix (bad input, missing file, refused path, I/O error):
it returns a ``ToolResult`` with ``is_error`` set and a message written for the model.
Cancellation (``asyncio.CancelledError``) always propagates, after cleanup; any other
exception is a bug in toolwire and propagates too, for the agent to report.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar, Literal, TypeAlias

from toolwire.history import ImagePart, ToolResultPart, ToolSpec
from toolwire.tools.card import Card, shown_image
from toolwire.tools.context import ToolContext, ToolLimits
from toolwire.tools.errors import ToolError
from toolwire.tools.search_port import SearchResult
from toolwire.updates.cards import bounded_diff
from toolwire.updates.titles import Description, plain_call
from toolwire.updates.wire import (
    PlanPriority,
    PlanStatus,
    ToolKind,
    diff_content,
    location,
    plan_entry,
    terminal_content,
    text_content,
)

Effect: TypeAlias = Literal["read", "edit", "command", "fetch"]
"""What a tool call can do, for the permission policy."""


@dataclass(frozen=True, slots=True)
class FileDiff:
    """A whole-file change for ACP ``diff`` content; ``old_text`` is None for a new file."""

    path: str
    old_text: str | None
    new_text: str

    def to_acp(self) -> dict[str, Any]:
        """The ACP ``ToolCallContent`` object (``{"type": "diff", ...}``)."""
        return diff_content(self.path, self.new_text, self.old_text)


@dataclass(frozen=True, slots=True)
class Location:
    """A file (absolute path) and optionally a 1-based line the call touches."""

    path: str
    line: int | None = None

    def to_acp(self) -> dict[str, Any]:
        """The ACP ``ToolCallLocation`` object."""
        return location(self.path, self.line)


@dataclass(frozen=True, slots=True)
class PlanEntry:
    """One entry of an ACP ``plan`` update."""

    content: str
    status: PlanStatus
    priority: PlanPriority = "medium"

    def to_acp(self) -> dict[str, Any]:
        """The ACP ``PlanEntry`` object."""
        return plan_entry(self.content, self.status, self.priority)


@dataclass(frozen=True, slots=True)
class CommandOutcome:
    """How a command (``Bash``) ended, for the agent's card; ``raw`` is its ACP
    ``rawOutput`` form, the keys editors read."""

    exit_code: int | None
    """None when the command was killed before it exited; negative: killed by a signal."""
    timed_out: bool
    timeout_s: float
    output_chars: int
    truncated: bool

    def raw(self) -> dict[str, Any]:
        """The ``rawOutput`` fields."""
        return {
            "exit_code": self.exit_code,
            "timed_out": self.timed_out,
            "timeout_s": self.timeout_s,
            "output_chars": self.output_chars,
            "truncated": self.truncated,
        }

    def in_words(self) -> str:
        """How a failed command ended, in words (its output is already on the card)."""
        if self.timed_out:
            return f"Timed out after {self.timeout_s:g} s; the command was killed."
        code = self.exit_code
        if code is not None and code < 0:
            return f"Killed by signal {-code}."
        return f"Exit code {code}."


@dataclass(frozen=True, slots=True)
class ToolResult:
    """What a tool run produced.

    ``content`` is the text for the model (already capped); ``raw_output`` is structured
    data for ACP ``rawOutput``; ``plan`` is set (possibly empty) only by ``TodoWrite``.
    """

    content: str
    is_error: bool = False
    diff: FileDiff | None = None
    locations: tuple[Location, ...] = ()
    raw_output: Mapping[str, Any] | None = None
    plan: tuple[PlanEntry, ...] | None = None
    images: tuple[ImagePart, ...] = ()
    """Images for the model (``Read`` of an image file)."""
    command: CommandOutcome | None = None
    """How the command ended, set by ``Bash`` when it ran one to its end."""
    terminal_id: str | None = None
    """The client terminal that shows the call's output (the card embeds it)."""
    links: tuple[SearchResult, ...] = ()
    """Pages the editor shows as ``resource_link`` content (``WebSearch`` hits)."""

    @classmethod
    def error(cls, message: str, **raw: Any) -> ToolResult:
        """An error result whose ``raw_output`` carries the message and ``raw``."""
        return cls(content=message, is_error=True, raw_output={"error": message, **raw})

    def card(self, limits: ToolLimits, *, command: bool = False) -> Card:
        """What the call's card shows at its end. ``command``: the call ran a command,
        whose output or terminal stays on the card when it fails."""
        raw = self.raw_output
        places = tuple(place.to_acp() for place in self.locations)
        if self.is_error:  # a command in words; it never ran (bad arguments): the error
            line = self.content if self.command is None else self.command.in_words()
            return Card(error=line, raw_output=raw, clear=not command)
        if self.diff is not None:
            change = self.diff
            limit = limits.read_max_chars
            diff = bounded_diff(change.path, change.new_text, change.old_text, limit)
            return Card(content=tuple(diff), raw_output=raw, locations=places)
        if self.links:  # WebSearch: each hit a link the editor can open
            return Card(content=tuple(link.to_acp() for link in self.links), raw_output=raw)
        if self.terminal_id is not None:
            return Card(content=(terminal_content(self.terminal_id),), raw_output=raw)
        if self.images:  # the editor shows the image the model gets (Read of a PNG)
            shown = (text_content(self.content), *map(shown_image, self.images))
            return Card(content=shown, raw_output=raw, locations=places)
        if self.command is not None and self.command.output_chars:
            return Card(raw_output=raw)  # the streamed output, capped by the lifecycle
        return Card(self.content, raw_output=raw, locations=places)

    def to_part(self, call_id: str, name: str) -> ToolResultPart:
        """The history part answering call ``call_id`` of tool ``name``."""
        return ToolResultPart(
            call_id=call_id,
            name=name,
            content=self.content,
            is_error=self.is_error,
            images=self.images,
        )


class Tool(ABC):
    """Base of the agent's tools. Subclasses set the class attributes and ``_run``."""

    name: ClassVar[str]
    description: ClassVar[str]
    kind: ClassVar[ToolKind]
    effect: ClassVar[Effect] = "read"
    """What a call can do: ``read`` never asks; ``edit``, ``command`` and ``fetch`` ask
    as the session's mode says (``toolwire.agent.turn.policy``)."""
    input_schema: ClassVar[dict[str, Any]]

    def spec(self) -> ToolSpec:
        """The tool as offered to the model."""
        return ToolSpec(
            name=self.name, description=self.description, input_schema=self.input_schema
        )

    def describe(self, args: Mapping[str, Any], cwd: str) -> Description:
        """Title, kind and locations of a call from the arguments known so far (they
        stream in: any may be missing); paths resolve against ``cwd`` as strings. By
        default the tool's name, its kind and the file a ``file_path``/``path`` names."""
        return plain_call(self.name, self.kind, args, cwd)

    def proposed(self, args: Mapping[str, Any], old: str | None) -> str | None:
        """The text an edit would leave in its file, from the text there now (None: no
        file), for the diff the user approves; None when the call edits nothing or it
        cannot be known first (the run will say why)."""
        return None

    @property
    def needs_permission(self) -> bool:
        """Whether a call may have to be approved: anything but a read."""
        return self.effect != "read"

    def scope(self, args: Mapping[str, Any]) -> str | None:
        """What of ``args`` a permission is given for, when less than the whole tool
        (``WebFetch``: the URL's host); None: the tool."""
        return None

    async def vet(self, args: Mapping[str, Any], ctx: ToolContext) -> str | None:
        """Why the call would be refused whatever the user answers (``WebFetch``: a
        loopback address), checked before anyone is asked; None: nothing known."""
        return None

    def card(self, result: ToolResult, limits: ToolLimits) -> Card:
        """What the call's card shows when it ends with ``result``; a command keeps its
        output or terminal on the card when it fails."""
        return result.card(limits, command=self.kind == "execute")

    async def run(self, args: Mapping[str, Any], ctx: ToolContext) -> ToolResult:
        """Run the tool; expected failures come back as error results, never raised."""
        if not isinstance(args, Mapping):
            return ToolResult.error(f"{self.name} expects a JSON object of arguments.")
        try:
            return await self._run(args, ctx)
        except ToolError as exc:
            return ToolResult.error(str(exc))
        except UnicodeDecodeError as exc:
            return ToolResult.error(f"The file is not UTF-8 text ({exc.reason}); it was not read.")
        except OSError as exc:
            return ToolResult.error(_describe_os_error(exc))

    @abstractmethod
    async def _run(self, args: Mapping[str, Any], ctx: ToolContext) -> ToolResult:
        """The tool's work; may raise ``ToolError`` / ``OSError`` for expected failures."""


def _describe_os_error(exc: OSError) -> str:
    reason = exc.strerror or exc.__class__.__name__
    where = f": {exc.filename}" if exc.filename else ""
    return f"{reason}{where}"


__all__ = [
    "Card",
    "CommandOutcome",
    "Effect",
    "FileDiff",
    "Location",
    "PlanEntry",
    "PlanPriority",
    "PlanStatus",
    "Tool",
    "ToolError",
    "ToolKind",
    "ToolResult",
]
