"""What the built-in slash commands do, and the model and mode choices they share with
``session/set_config_option`` and ``session/set_mode``.

``/model NAME`` is the ``model`` config option (the switch, with its handoff, is made at
the next prompt); ``/mode NAME`` is ``set_mode``; both send the same updates. ``/clear``
starts a fresh conversation in the same session: the stored history is kept (the
transcript shows it, marked), but the model sees only what comes after the clear point.
The point is stored (the conversation's record: the index of the first message after it),
so a session loaded or resumed later, in any process, continues after it. The
conversation's history is the history since the last clear: a compaction or a switch
made later is planned on it, and the earlier ones are dropped with it.
``Slash(session, runtime)`` holds them for one session. ``/init`` and custom commands
are prompts (``commands.resolve``).
"""

from __future__ import annotations

from toolwire.agent.features.plan import Modes
from toolwire.agent.session.permissions import MODES
from toolwire.agent.session.state import Runtime, Session
from toolwire.config import choices
from toolwire.config.choices import one_of
from toolwire.conversation import RECORD_KEY


class ChoiceError(ValueError):
    """An unknown model or mode; the message lists the known ones."""


class Slash:
    """The built-in commands of one session, and the choices they share (module doc)."""

    __slots__ = ("runtime", "session")

    def __init__(self, session: Session, runtime: Runtime) -> None:
        self.session = session
        self.runtime = runtime

    async def choose_model(self, name: str) -> None:
        """Make ``name`` the session's model from its next prompt (stored; options sent)."""
        session, runtime = self.session, self.runtime
        backends = runtime.config.backends
        if name not in backends:
            raise ChoiceError(f"unknown model {name!r}; {', '.join(backends)}")
        session.model.choose(name)
        await runtime.store.call(lambda db: db.update(session.id, backend=name))
        session.services.notifier.options_changed()

    async def choose_mode(self, mode: str) -> None:
        """Put the session in ``mode`` from its next decision on (stored; updates sent)."""
        chosen = one_of(choices.MODES, mode)
        if chosen is None:
            raise ChoiceError(f"{mode!r}; use {', '.join(MODES)}")
        await Modes(self.session, self.runtime).set(chosen)

    async def model_command(self, name: str) -> str:
        """``/model NAME``: what the user is told."""
        backends = self.runtime.config.backends.items()
        listed = ", ".join(f"{n} ({b.model})" if b.model else n for n, b in backends)
        if not name:
            return f"The model is {self.session.model.pending}. Models: {listed}. Use /model NAME."
        try:
            await self.choose_model(name)
        except ChoiceError:
            return f"There is no model {name!r}. Models: {listed}."
        if name == self.session.model.active:
            return f"The model stays {name}."
        return (
            f"The model switches to {name} at your next prompt; it gets a handoff of the "
            "conversation so far."
        )

    async def mode_command(self, mode: str) -> str:
        """``/mode NAME``: what the user is told."""
        listed = "; ".join(f"{k}: {d}" for k, (_, d) in MODES.items())
        if not mode:
            return f"The mode is {self.session.rules.mode}. Modes: {listed}"
        try:
            await self.choose_mode(mode)
        except ChoiceError:
            return f"There is no mode {mode!r}. Modes: {listed}"
        label, description = next(v for k, v in MODES.items() if k == mode)
        return f"Mode: {label} ({mode}). {description}"

    async def clear(self) -> str:
        """``/clear``: the model's history starts empty here; the marker for the transcript."""
        session = self.session
        session.conversation.cleared()
        values = {RECORD_KEY: session.conversation.record().to_json()}
        await self.runtime.store.call(lambda db: db.update(session.id, config_values=values))
        return (
            "── New conversation ── The model no longer sees the messages above "
            "(they stay in this transcript)."
        )


__all__ = ["ChoiceError", "Slash"]
