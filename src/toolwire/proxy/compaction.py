"""The proxy's compaction: a request that would overflow its backend's window gets the
handoff the session would make to itself (docs/proxy.md, "Smaller windows").

Scaled usage (``scale.py``) makes Claude Code compact in time; a request that still
overflows (one huge file read, a client that does not compact) is compacted here: the
history becomes one handoff block (summary plus the tool context verbatim, deduplicated,
newest first, under a budget sized from the window) and its newest steps go on verbatim
(the call and the result just read), as the agent compacts (``toolwire.context.compact``).
The compaction is kept in the session (a ``toolwire.conversation`` record, as the agent
keeps its own; its point's ``head``: the digest of the compacted history's first
message): later requests continue
from the same block and tail, rebuilt byte for byte, so the upstream's prompt cache
keeps working until the next compaction. With ``[proxy] compaction = false`` the
request is refused instead, in the words Anthropic uses, so Claude Code compacts.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace

from toolwire.config.choices import PassthroughLevel
from toolwire.config.schema import BackendConfig
from toolwire.context import Budget, Window, build_compaction, window_for
from toolwire.conversation import Conversation, ConversationRecord
from toolwire.handoff import history_digest
from toolwire.history import Message
from toolwire.proxy.errors import BadRequestError
from toolwire.proxy.rewrite import View, attributed
from toolwire.proxy.routing import Route
from toolwire.proxy.scale import CLAUDE_WINDOW
from toolwire.proxy.settings import ProxySettings
from toolwire.proxy.state import SessionState


def route_window(
    settings: ProxySettings, chosen: Route, *, level: PassthroughLevel, client: int
) -> Window:
    """The window of the model a request is routed to: its backend's ``context_window``,
    else the model family's (``toolwire.context.windows``)."""
    config: BackendConfig = settings.config.backend(chosen.backend)
    # ``backend_window`` of the config sent ``chosen.model``, without copying the config
    window = window_for(
        chosen.model,
        context_window=config.context_window,
        max_output_tokens=config.max_output_tokens,
        max_tokens=settings.config.limits.max_tokens,
    )
    # A ``full`` pass-through forwards the client's 1M beta with it: a Claude model
    # upstream then has the window the client asked for, not the family's 200k.
    one_m = client > CLAUDE_WINDOW and level == "full" and config.context_window is None
    if one_m and window.source.startswith("family claude"):
        return replace(window, size=client)
    return window


def continued(
    state: SessionState, target: str, history: Sequence[Message]
) -> ConversationRecord | None:
    """The session's compaction for ``target`` if ``history`` continues the one it
    compacted: at least as long, the same first message, and no switch since."""
    record = state.compactions.get(target)
    point = None if record is None else record.point
    if record is None or point is None or point.at > len(history) or not history:
        return None
    switch = state.conversation.point
    if switch is not None and switch.at > point.at:
        return None  # a switch since: its handoff covers more than this compaction did
    return record if first_digest(history) == point.head else None


def first_digest(history: Sequence[Message]) -> str:
    """The digest of the history's first message (a compaction point's ``head``)."""
    return history_digest(history[:1])[:32]


def compacted_view(
    history: Sequence[Message],
    record: ConversationRecord,
    *,
    target: str,
    produced: Mapping[str, str],
) -> View:
    """What ``target`` is sent for ``history`` under the compaction ``record``: the stored
    block and the tail it kept (rebuilt byte for byte), then everything after it."""
    handoff = Conversation.restore(record, history, target).handoff
    if handoff is None:  # the stored point no longer fits the history (logged): send it raw
        return View([], 0, attributed(history, produced))
    later = attributed(history[handoff.switch_at :], produced)
    return View(handoff.context(), handoff.switch_at, later)


def compact(history: Sequence[Message], budget: Budget, *, target: str) -> ConversationRecord:
    """The compaction of the whole ``history`` within ``budget`` (``toolwire.context``:
    deterministic, the newest steps verbatim, an oversized one cut in the middle)."""
    conversation = Conversation(history)
    conversation.compacted(build_compaction(history, budget, target=target), target)
    record = conversation.record()
    assert record.point is not None  # compacted() just set it
    return replace(record, point=replace(record.point, head=first_digest(history)))


def too_long(tokens: int, window: Window, backend: str) -> BadRequestError:
    """The refusal when compaction is off: Anthropic's words, so Claude Code compacts."""
    return BadRequestError(
        f"prompt is too long: {tokens} tokens > {window.room} maximum (toolwire: backend "
        f"{backend!r} has a window of {window.size} tokens ({window.source}), "
        f"{window.reserved} of them kept for the answer; the proxy does not compact: "
        "[proxy] compaction = false)"
    )


__all__ = [
    "compact",
    "compacted_view",
    "continued",
    "first_digest",
    "route_window",
    "too_long",
]
