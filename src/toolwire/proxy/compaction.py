"""The proxy's compaction: a request that would overflow its backend's window gets the
handoff the session would make to itself (docs/proxy.md, "Smaller windows").

Scaled usage (``scale.py``) makes Claude Code compact in time; a request that still
overflows (one huge file read, a client that does not compact) is compacted here: the
history up to its newest exchange becomes one handoff block (summary plus the tool
context verbatim, deduplicated, newest first, under a budget sized from the window), and
the newest exchange (the call and the result just read) goes on verbatim. The point is
kept in the session (``CompactionPoint``): later requests continue from the same block,
rebuilt to the same bytes (the handoff is a pure function of the history), so the
upstream's prompt cache keeps working until the next compaction. With ``[proxy]
compaction = false`` the request is refused instead, in the words Anthropic uses, so
Claude Code runs its own compaction.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace

from toolwire.config.schema import BackendConfig
from toolwire.context import Window, backend_window
from toolwire.handoff import Handoff, build_handoff, history_digest
from toolwire.history import Message
from toolwire.proxy.errors import BadRequestError
from toolwire.proxy.rewrite import View, attributed
from toolwire.proxy.routing import Route
from toolwire.proxy.scale import CLAUDE_WINDOW
from toolwire.proxy.settings import ProxySettings
from toolwire.proxy.state import CompactionPoint, SessionState

# Characters per token when sizing the handoff's budgets from a window: the estimate
# ``toolwire.context.tokens`` makes (3 bytes of UTF-8 a token), on the safe side.
CHARS_PER_TOKEN = 3


def route_window(settings: ProxySettings, chosen: Route, *, level: str, client: int) -> Window:
    """The window of the model a request is routed to: its backend's ``context_window``,
    else the model family's (``toolwire.context.windows``)."""
    config: BackendConfig = settings.config.backend(chosen.backend)
    config = config.model_copy(update={"model": chosen.model})
    window = backend_window(config, settings.config.limits)
    # A ``full`` pass-through forwards the client's 1M beta with it: a Claude model
    # upstream then has the window the client asked for, not the family's 200k.
    one_m = client > CLAUDE_WINDOW and level == "full" and config.context_window is None
    if one_m and window.source.startswith("family claude"):
        return replace(window, size=client)
    return window


def continued(
    state: SessionState, target: str, history: Sequence[Message]
) -> CompactionPoint | None:
    """The session's compaction for ``target`` if ``history`` continues the one compacted
    (no later switch, as long as it was, the same first message)."""
    point = state.compactions.get(target)
    if point is None or point.end > len(history) or not history:
        return None
    if state.switches and state.switches[-1][0] > point.end:
        return None  # a switch since: its handoff covers more than this compaction did
    return point if first_digest(history) == point.first else None


def first_digest(history: Sequence[Message]) -> str:
    """The digest of the history's first message (``CompactionPoint.first``)."""
    return history_digest(history[:1])[:32]


def compacted_view(
    history: Sequence[Message],
    point: CompactionPoint,
    *,
    target: str,
    window: Window,
    produced: Mapping[str, str],
) -> View:
    """What ``target`` is sent for ``history`` under the compaction ``point``."""
    handoff = compact(history[: point.end], window=window, fixed_tokens=point.fixed_tokens)
    later = attributed(history[handoff.switch_at :], produced)
    return View(handoff.context(), handoff.switch_at, later)


def compact(history: Sequence[Message], *, window: Window, fixed_tokens: int) -> Handoff:
    """The handoff that stands for ``history`` within ``window`` (deterministic).

    Everything before the newest exchange (the last assistant turn and what answered
    it) goes into the block; the exchange itself stays verbatim, so the file just read
    always survives.
    """
    split = newest_exchange(history)
    room = max(0, window.room - fixed_tokens) * CHARS_PER_TOKEN
    kept = sum(_chars(m) for m in history[split:])
    # Half of what is left for the tool context, half for the summary and what follows.
    budget = max(0, (room - kept) // 2)
    return build_handoff(
        history,
        split,
        keep_last=0,
        max_tool_context_chars=budget,
        max_tool_result_chars=max(1, budget // 4),
        summary=True,
    )


def newest_exchange(history: Sequence[Message]) -> int:
    """Where the newest exchange starts: the last assistant message (0 without one)."""
    for index in range(len(history) - 1, 0, -1):
        if history[index].role == "assistant":
            return index
    return 0


def too_long(tokens: int, window: Window, backend: str) -> BadRequestError:
    """The refusal when compaction is off: Anthropic's words, so Claude Code compacts."""
    return BadRequestError(
        f"prompt is too long: {tokens} tokens > {window.room} maximum (toolwire: backend "
        f"{backend!r} has a window of {window.size} tokens ({window.source}), "
        f"{window.reserved} of them kept for the answer; the proxy does not compact: "
        "[proxy] compaction = false)"
    )


def _chars(message: Message) -> int:
    return sum(len(str(part)) for part in message.parts)


__all__ = [
    "CHARS_PER_TOKEN",
    "compact",
    "compacted_view",
    "continued",
    "first_digest",
    "newest_exchange",
    "route_window",
    "too_long",
]
