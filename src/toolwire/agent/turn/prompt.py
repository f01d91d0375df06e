"""What a prompt starts: the text for the model or the built-in command it runs, the
prompt stored, and the notices a session gives once.

``Turn`` (``loop``) runs it first; a built-in command ends the turn here, anything else
goes on to the model requests.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

from toolwire.agent.features import slash
from toolwire.agent.features.commands import Command, custom_commands, resolve
from toolwire.agent.features.compaction import Compactor
from toolwire.agent.features.rewind import Rewinder
from toolwire.agent.session.instructions import Refused
from toolwire.agent.session.state import Runtime, Session
from toolwire.agent.session.turn_state import PromptStopReason
from toolwire.agent.store.database import SessionDatabase
from toolwire.agent.store.records import SessionRecord
from toolwire.agent.store.transcript import user_updates
from toolwire.agent.turn.hooked import TurnHooks
from toolwire.history import ImagePart, Message, Part, TextPart
from toolwire.imaging import fitted
from toolwire.tools.threads import off_loop
from toolwire.updates.builders import MessageChunk, info_update
from toolwire.updates.titles import shorten

#: ``Notices`` keys: the session has its title; the user was told its model takes no images.
TITLED = "titled"
NO_IMAGES = "no-images"
NO_VISION = (
    "The model {name} takes no images (vision = false, or tools as text): it gets a "
    "one-line note in place of each image."
)
Say = Callable[[str], Awaitable[None]]


class Prompt:
    """The start of one prompt turn; ``say`` and ``tell`` are the turn's (stored, and
    kept in another form by a compaction)."""

    def __init__(
        self, session: Session, runtime: Runtime, say: Say, tell: Say, hooks: TurnHooks
    ) -> None:
        self.session = session
        self.runtime = runtime
        self.say = say
        self.tell = tell
        self.hooks = hooks
        self.untold: list[str] = []  # files not read (links out of the project), to say
        self.number: int | None = None  # in the prompt index, once it reaches the model

    async def start(self, blocks: list[Any]) -> PromptStopReason | None:
        """Read the prompt and start it: None when it goes on to the model, else the
        turn's stop reason (a built-in command ran, there is no backend to send it to,
        or a ``UserPromptSubmit`` hook blocked it: nothing is kept)."""
        text, command = await self.read(prompt_text(blocks))
        updates = user_updates(blocks)  # the prompt as the transcript keeps it, either way
        if command is not None:
            return await self.command(updates, *command)
        model, config = self.session.model, self.runtime.config
        if config.no_backend is not None and model.pending == config.default_backend:
            # No key: the bundled demo is never run in the user's project unasked.
            await self.say(config.no_backend)
            return "end_turn"
        hooked = await self.hooks.prompt(text, self.say)
        if hooked is None:
            return "end_turn"
        await self.begin(blocks, hooked, updates)
        return None

    async def read(self, typed: str) -> tuple[str, tuple[Command, str] | None]:
        """The prompt's text for the model, or the built-in command it runs (with its
        argument); the instruction files refreshed, the command files read for a command."""
        session = self.session
        # Stats only, unless a file changed: the system prompt keeps its bytes.
        await asyncio.to_thread(session.services.instructions.refresh, session.who.cwd)
        custom: dict[str, Command] = {}
        refused: list[Refused] = []
        if typed.lstrip().startswith("/"):  # the command files are read only for one
            custom = await asyncio.to_thread(custom_commands, session.who.cwd, None, refused)
        self.untold = session.services.instructions.untold(refused)
        return resolve(typed, custom, session.who.cwd)

    async def command(
        self, updates: list[MessageChunk], command: Command, argument: str
    ) -> PromptStopReason:
        """A built-in command run by toolwire: kept in the transcript (``updates``), never
        sent to the model (``/init`` and custom commands are prompts instead, see ``read``)."""
        session, runtime = self.session, self.runtime
        await runtime.store.call(lambda db: db.append(session.id, updates=updates))
        name = command.name
        if name == "compact":
            compactor = Compactor(session, runtime, self.tell)
            await compactor.run(focus=argument or None, forced=True)
        elif name == "model":
            await self.say(await slash.Slash(session, runtime).model_command(argument))
        elif name == "mode":
            await self.say(await slash.Slash(session, runtime).mode_command(argument))
        elif name == "clear":
            await self.say(await slash.Slash(session, runtime).clear())
        elif name == "rewind":
            await self.say(await Rewinder(session, runtime).command(argument))
        return "end_turn"

    async def begin(self, blocks: list[Any], text: str, updates: list[MessageChunk]) -> None:
        """Start a prompt: ``text`` (the prompt, or what a command expands to) for the
        model, the blocks as typed for the title, ``updates`` for the transcript;
        numbered, and the session's files checkpointed, first (what ``/rewind`` goes back
        to)."""
        session, store = self.session, self.runtime.store
        self.number = await Rewinder(session, self.runtime).prompt_started(prompt_text(blocks))
        message = await off_loop(lambda: prompt_message(blocks, text))  # images are fitted
        session.history.append(message)
        title = None
        if session.services.told.first(TITLED):
            title = shorten(prompt_text(blocks), 60) or "Untitled"

        def keep(db: SessionDatabase) -> tuple[set[str], SessionRecord | None]:
            """The prompt stored (and the session's title, on its first); one trip to the
            store's thread. The ids issued, as another window may have the session open
            and have issued some since it was opened."""
            db.append(session.id, messages=[message], updates=updates)
            record = None if title is None else db.update(session.id, title=title)
            return db.call_ids(session.id), record

        issued, record = await store.call(keep)
        session.services.call_ids.update(issued)
        if record is not None:
            session.services.outbox.update(info_update(record.title, record.updated_at_iso))
        for line in self.untold:
            await self.say(line)
        images = any(isinstance(part, ImagePart) for part in message.parts)
        await self.images_notice(session.model.pending, images=images)

    async def steered(self, blocks: list[Any]) -> None:
        """A message sent while this turn runs (``TurnState.queue``), added before the
        next model request: the user's, in the history and the transcript."""
        session, store = self.session, self.runtime.store
        message = await off_loop(lambda: prompt_message(blocks, prompt_text(blocks)))
        session.history.append(message)
        updates = user_updates(blocks)
        await store.call(lambda db: db.append(session.id, messages=[message], updates=updates))

    async def images_notice(self, name: str, *, images: bool) -> None:
        """Tell the user, once per session, that backend ``name`` gets notes, not images."""
        session = self.session
        if not images or session.services.told.told(NO_IMAGES):
            return
        if not self.runtime.config.backend(name).takes_images:
            session.services.told.first(NO_IMAGES)
            await self.say(NO_VISION.format(name=name))


def prompt_message(blocks: list[Any], text: str | None = None) -> Message:
    """The prompt's content blocks as the user message: its text (``text``, by default
    ``prompt_text``), then each image (advertised: ``image``) as an image part."""
    parts: list[Part] = []
    text = prompt_text(blocks) if text is None else text
    if text:
        parts.append(TextPart(text))
    parts.extend(i for i in (_image(b) for b in blocks) if i is not None)
    return Message("user", tuple(parts))


def _image(block: Any) -> ImagePart | TextPart | None:
    if getattr(block, "type", None) != "image":
        return None
    if block.data:
        return fitted(ImagePart(block.mime_type, block.data))
    return ImagePart(block.mime_type, url=block.uri) if _web(block.uri) else None


def _web(uri: str | None) -> bool:
    # Only a URL the provider can fetch itself; a file: URI means nothing to it.
    return bool(uri) and str(uri).startswith(("https://", "http://"))


def prompt_text(blocks: list[Any]) -> str:
    """The prompt's content blocks as the user message's text.

    Text as is; a resource link as a mention the model can ``Read``; embedded context
    (advertised: ``embeddedContext``) inline with its URI; images are left to
    ``prompt_message``. Audio is not advertised; a client that sends it anyway gets a
    note in its place.
    """
    parts: list[str] = []
    for block in blocks:
        kind = getattr(block, "type", None)
        if kind == "image":
            if not block.data and not _web(block.uri):
                parts.append(f"[image {block.uri or ''} not included: it came without data]")
            continue
        if kind == "text":
            parts.append(block.text)
        elif kind == "resource_link":
            parts.append(f"[@{block.name}]({block.uri})")
        elif kind == "resource":
            resource = block.resource
            text = getattr(resource, "text", None)
            if text is None:
                parts.append(f"[binary resource {resource.uri} not included]")
            else:
                parts.append(f'<context uri="{resource.uri}">\n{text}\n</context>')
        else:
            parts.append(f"[{kind} content not supported by toolwire: omitted]")
    return "\n\n".join(parts)


__all__ = ["NO_IMAGES", "NO_VISION", "TITLED", "Prompt", "prompt_message", "prompt_text"]
