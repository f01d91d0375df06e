"""``/rewind``: back to just before prompt N, its files and its conversation, and undo.

Every prompt that reaches the model is numbered in the store's prompt index
(``prompt_index``) and has its files checkpointed before and after its turn
(``checkpointing``); ``Turn`` calls ``Rewinder.prompt_started`` and ``prompt_ended``.

A rewind to before prompt N:

* conversation: the stored history and the transcript are cut where prompt N began,
  the conversation record from just before it is put back, and the live session's
  ``Conversation`` is restored from the same record and history (``Conversation.restore``),
  so the next request holds exactly the history before prompt N, in this process and
  after a restart; the reply, stored after the cut, is the transcript's marker;
* code: ``before-N`` is restored, except files changed outside any turn (between
  ``after-(k-1)`` and ``before-k`` for k > N, or since the last ``after-``): those are
  conflicts, kept unless ``force``.

Before it touches anything it takes the ``undo`` snapshot and stores what it cuts, so
``/rewind undo`` puts files and conversation back byte for byte, in any later process.
The files go back all or nothing (``checkpoints.restore``): when one cannot be changed,
or the store fails, nothing is rewound, the conversation included, the ``undo`` snapshot
of the last rewind stays, and the reply names each file and why. A missing ``after-N``
(the agent killed mid-turn) widens the conflicts (``rules.strict_windows``); a missing
``before-N`` is said to have failed, or been pruned, or never taken, as it was.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from toolwire.agent.features import checkpointing
from toolwire.agent.features.rewind_report import Ask, RewindInputError, RewindReport, Scope, parse
from toolwire.agent.session.state import Runtime, Session
from toolwire.agent.store import prompt_index
from toolwire.agent.store.prompt_index import PromptRow
from toolwire.checkpoints import CheckpointError, Checkpoints, RestoreReport, before, missing
from toolwire.conversation import ConversationRecord
from toolwire.imaging import fitted_messages

_T = TypeVar("_T")

UNDO = "undo"
"""The snapshot of the files just before the last rewind (no prompt's: never pruned)."""


@dataclass(frozen=True, slots=True)
class _Code:
    """The files' part of a rewind: the restore's report, or why there was none."""

    report: RestoreReport | None = None
    why_not: str | None = None
    snapshot: str | None = None
    unsure: tuple[str, ...] = ()
    failed: bool = False
    """The store failed: no file was changed, so the conversation is not cut either."""
    """Snapshots the conflict rule lacked (a turn stopped mid-way): it was stricter."""


class Rewinder:
    """The rewinds of one session (module doc). Runs between turns, never during one."""

    __slots__ = ("runtime", "session")

    def __init__(self, session: Session, runtime: Runtime) -> None:
        self.session = session
        self.runtime = runtime

    async def prompt_started(self, text: str) -> int:
        """Number a prompt that reaches the model and checkpoint the files before it;
        call before its message is stored. Its number."""
        session = self.session
        line, record = prompt_index.first_line(text), session.conversation.record().to_json()
        row = await self.runtime.store.call(
            lambda db: prompt_index.add_prompt(db, session.id, line, record)
        )
        await checkpointing.before_prompt(self.runtime.config, session.id, self._dirs(), row.number)
        return row.number

    async def prompt_ended(self, number: int) -> None:
        """Checkpoint the files as the turn of prompt ``number`` left them."""
        await checkpointing.after_prompt(self.runtime.config, self.session.id, self._dirs(), number)

    async def command(self, argument: str) -> str:
        """``/rewind ARGUMENT``: the reply (bad input: one line saying what to do)."""
        try:
            ask = parse(argument)
            if ask.kind == "list":
                return await self.listing()
            report = await (self.undo() if ask.kind == "undo" else self.rewind(ask))
        except RewindInputError as exc:
            return str(exc)
        return report.text(self.session.who.cwd)

    async def listing(self) -> str:
        """The numbered prompts: number, time, first line, files changed since."""
        sid = self.session.id
        rows = await self.runtime.store.call(lambda db: prompt_index.prompts(db, sid))
        if not rows:
            return "No prompts to rewind to yet."
        counts = await self._off_loop(self._changed_counts, [r.number for r in rows])
        lines = ["Prompts (/rewind N [code|conversation|both] [force]; /rewind undo):"]
        for row in rows:
            when = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(row.ts))
            lines.append(f"{row.number}. {when}  {row.first_line}  ({counts[row.number]})")
        return "\n".join(lines)

    async def rewind(self, ask: Ask) -> RewindReport:
        """Go back to just before prompt ``ask.prompt`` (module doc)."""
        sid = self.session.id
        rows = await self.runtime.store.call(lambda db: prompt_index.prompts(db, sid))
        row = next((r for r in rows if r.number == ask.prompt), None)
        if row is None:
            known = f"prompts 1 to {rows[-1].number}" if rows else "no prompts yet"
            raise RewindInputError(
                f"/rewind {ask.prompt}: there is no prompt {ask.prompt} (this session has "
                f"{known}). Use /rewind to list them."
            )
        code = _Code()
        if ask.scope != "conversation":
            code = await self._code(row.number, rows[-1].number, force=ask.force)
            if code.failed or (code.report is not None and code.report.blocked):
                return _report(ask.prompt, ask.scope, code, conversation=False)  # none cut
        talk = ask.scope != "code"
        await self._cut(row if talk else None, code.snapshot)
        return _report(ask.prompt, ask.scope, code, conversation=talk)

    async def undo(self) -> RewindReport:
        """Put back files and conversation as they were just before the last rewind."""
        sid = self.session.id
        found = await self.runtime.store.call(lambda db: prompt_index.pending_undo(db, sid))
        if found is None:
            raise RewindInputError("Nothing to undo: no /rewind since the last undo.")
        code = _Code()
        if found.snapshot is not None:
            code = await self._off_loop(self._restore_undo, found.snapshot)
            if code.report is not None and code.report.blocked:
                return _report(None, "both", code, conversation=False)
        await self.runtime.store.call(lambda db: prompt_index.undo(db, sid))
        await self._reload()
        scope: Scope = "both" if found.snapshot else "conversation"
        return _report(None, scope, code, conversation=bool(found.messages or found.prompts))

    # -- the files -----------------------------------------------------------------------

    async def _off_loop(self, work: Callable[..., _T], *args: Any) -> _T:
        """``work(*args)`` on a thread, holding the session's checkpoint lock."""

        def locked() -> _T:
            with checkpointing.locked(self.session.id):
                return work(*args)

        return await asyncio.to_thread(locked)

    def _dirs(self) -> tuple[str, ...]:
        return (self.session.who.cwd, *self.session.who.additional_dirs)

    async def _code(self, target: int, last: int, *, force: bool) -> _Code:
        why = checkpointing.why_off(self.runtime.config)
        if why is not None:
            return _Code(why_not=why)
        try:
            return await self._off_loop(lambda: self._restore_before(target, last, force=force))
        except CheckpointError as exc:  # before any file moved (``Plan.apply`` undoes)
            return _Code(why_not=f"the checkpoint store failed ({exc})", failed=True)

    def _restore_before(self, target: int, last: int, *, force: bool) -> _Code:
        store = checkpointing.open_store(self.runtime.config, self.session.id, self._dirs())
        taken = {s.name: s for s in store.snapshots()}
        snapshot = taken.get(before(target))
        if snapshot is None:
            failed = store.failure(before(target))
            why = f"the checkpoint before prompt {target} {self._gone(store, target, last)}"
            return _Code(why_not=f"{why}: {failed}" if failed else why)
        conflicts = store.conflicts(target, last)
        # The undo snapshot only once the restore goes ahead: a blocked one must not
        # replace the snapshot an earlier rewind's undo needs.
        report = store.restore(snapshot, keep=() if force else conflicts, mark=UNDO)
        return _Code(report, snapshot=UNDO, unsure=tuple(missing(target, last, taken)))

    def _gone(self, store: Checkpoints, prompt: int, last: int) -> str:
        """Why there is no checkpoint before ``prompt``: taking it failed, retention
        dropped it (older than the last ``keep`` prompts), or it was never taken."""
        if store.failure(before(prompt)) is not None:
            return "failed"
        if prompt <= last - checkpointing.keep(self.runtime.config):
            return "is gone (pruned)"
        return "was not taken (checkpoints were off)"

    def _restore_undo(self, name: str) -> _Code:
        store = checkpointing.open_store(self.runtime.config, self.session.id, self._dirs())
        snapshot = store.get(name)
        if snapshot is None:
            return _Code(why_not="the snapshot taken before the rewind is gone")
        return _Code(store.restore(snapshot))

    def _changed_counts(self, numbers: list[int]) -> dict[int, str]:
        why = checkpointing.why_off(self.runtime.config)
        if why is not None or not checkpointing.exists(self.session.id):
            return dict.fromkeys(numbers, why or "no checkpoint")
        store = checkpointing.open_store(self.runtime.config, self.session.id, self._dirs())
        taken = {s.name: s for s in store.snapshots()}  # one git call, not one per prompt
        counts: dict[int, str] = {}
        for n in numbers:
            snapshot = taken.get(before(n))
            try:
                changed = None if snapshot is None else len(store.changed(snapshot).paths())
            except CheckpointError:
                counts[n] = "changes unknown: the checkpoint store failed"
                continue
            files = "1 file" if changed == 1 else f"{changed} files"
            gone = f"checkpoint {self._gone(store, n, numbers[-1])}"
            counts[n] = gone if changed is None else f"{files} changed since"
        return counts

    # -- the conversation ------------------------------------------------------------------

    async def _cut(self, row: PromptRow | None, snapshot: str | None) -> None:
        sid, now = self.session.id, self.session.conversation.record().to_json()
        await self.runtime.store.call(lambda db: prompt_index.cut(db, sid, row, now, snapshot))
        if row is not None:
            await self._reload()

    async def _reload(self) -> None:
        """The live conversation from the stored record and history, as a restart would
        build it; the meter (its window, its cost so far) carries over."""
        session, sid = self.session, self.session.id
        record, stored = await self.runtime.store.call(
            lambda db: (db.get(sid), fitted_messages(db.messages(sid)))
        )
        config = {} if record is None else record.config
        point = ConversationRecord.from_config(config)
        session.conversation.rewound(point, stored, session.model.active)


def _report(prompt: int | None, scope: Scope, code: _Code, *, conversation: bool) -> RewindReport:
    made = RewindReport(prompt, scope, conversation=conversation, code=code.why_not)
    if code.report is not None:
        done = code.report
        made.restored, made.removed = list(done.restored), list(done.removed)
        made.recreated, made.skipped = list(done.recreated), dict(done.skipped)
        made.conflicts = list(done.kept)  # the conflicts that differ from the checkpoint
        made.blocked = dict(done.blocked)
        made.unsure = [n for n in code.unsure if n.startswith("after-")]
    return made


__all__ = ["UNDO", "Rewinder"]
