"""Pass-through for Anthropic and Anthropic-compatible backends, with the fixes they need.

The client's Messages body goes upstream as it came (prompt caching, the ``thinking``
parameter, server tools and beta fields all work), except for what would make the
target fail or leak (docs/proxy.md, "Anthropic backends: pass-through"):

* tool results first in their user message, in call order; a call without a result gets
  an error result saying it did not run; a result answering no call becomes text (the
  pairing rules and their words are ``toolwire.history.pairing``'s, as for every other
  backend);
* tool ids normalized to ``^[a-zA-Z0-9_-]+$`` on both sides (unchanged when valid, which
  keeps the bytes and the cache);
* thinking blocks kept only when this backend produced them (``provenance.py``), never a
  signature invented; and the ``thinking`` parameter dropped when the turn a tool loop
  continues no longer starts with its own thinking (the API would refuse it);
* no empty text blocks.

The level of a backend (``passthrough`` in ``[backends.NAME]``):

* ``full`` (the default for Anthropic's own API): everything else is forwarded, the
  ``anthropic-beta`` header included;
* ``core`` (the default for any other ``base_url``: GLM, Kimi, MiniMax, DeepSeek): only
  the fields of the public Messages API; ``cache_control``, beta fields and headers,
  Claude Code's billing block and ``metadata`` are removed, mid-conversation
  ``role: "system"`` messages become user text, ``adaptive`` thinking becomes
  ``enabled`` with a budget, and ``max_tokens`` is capped at 32,000;
* ``off``: the request is rebuilt from the neutral history like any other backend's.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from toolwire.backends.anthropic_import import block_text
from toolwire.config.choices import PassthroughLevel
from toolwire.history.pairing import NOT_RUN, IdMap, orphan_text, pair
from toolwire.proxy.provenance import THINKING_BLOCKS
from toolwire.proxy.translate import MAX_OUTPUT_TOKENS, system_text

ANTHROPIC_HOST = "api.anthropic.com"
CORE_FIELDS = (
    "model",
    "messages",
    "system",
    "max_tokens",
    "stop_sequences",
    "stream",
    "temperature",
    "top_p",
    "top_k",
    "tools",
    "tool_choice",
    "thinking",
)
CORE_TOOL_FIELDS = ("name", "description", "input_schema")
FORWARDED_HEADERS = {
    "full": ("anthropic-version", "anthropic-beta"),
    "core": ("anthropic-version",),
}
MIN_THINKING_BUDGET = 1024  # the API's minimum ``budget_tokens``
ADAPTIVE_BUDGET = 16000  # ``core``: the budget given to an ``adaptive`` request

Block = dict[str, Any]
Owner = Callable[[Any], str | None]  # an assistant message's content -> its producer


def default_level(base_url: str | None) -> PassthroughLevel:
    """``full`` for Anthropic's own API, ``core`` for any other host."""
    host = urlsplit(base_url).hostname if base_url else ANTHROPIC_HOST
    return "full" if host == ANTHROPIC_HOST else "core"


@dataclass(frozen=True, slots=True)
class Prepared:
    """The body to send upstream, the client headers to forward, and what was changed."""

    body: dict[str, Any]
    headers: dict[str, str]
    stripped_thinking: int
    dropped_thinking_param: bool


def prepare(
    body: Mapping[str, Any],
    *,
    level: PassthroughLevel,
    model: str,
    target: str,
    owner: Owner,
    headers: Mapping[str, str],
    prefix: Sequence[Block] = (),
    start: int = 0,
) -> Prepared:
    """The upstream body for ``target``: ``prefix`` (already in Anthropic form, e.g. the
    handoff) then the client's messages from ``start``, fixed as the module says."""
    core = level == "core"
    # The prefix was rendered from the neutral history with its thinking already dropped:
    # none of its turns is kept whole, whoever produced them.
    ids, names = IdMap(64), dict[str, str]()
    head = _Fixer(core=core, keep=lambda content: False, ids=ids, names=names)
    fixer = _Fixer(core=core, keep=lambda content: owner(content) == target, ids=ids, names=names)
    messages = _joined(head.fix(prefix), fixer.fix(body["messages"][start:]))
    out: dict[str, Any] = {k: body[k] for k in CORE_FIELDS if k in body} if core else dict(body)
    out.update(model=model, messages=messages, stream=True)
    if core:
        _core_fields(out)
    dropped = _thinking_rule(out, messages, own_last=fixer.own_last)
    wanted = FORWARDED_HEADERS.get(level, ())
    forwarded = {k: v for k, v in headers.items() if k.lower() in wanted}
    return Prepared(out, forwarded, fixer.stripped, dropped)


class _Fixer:
    """One pass over the messages: pairing, ids, thinking, empty blocks."""

    def __init__(
        self, *, core: bool, keep: Callable[[Any], bool], ids: IdMap, names: dict[str, str]
    ) -> None:
        self.core = core
        self.keep = keep
        self.stripped = 0
        self.own_last = False
        """Whether the last assistant turn seen is the target's own, kept whole."""
        self._ids = ids
        self._names = names  # client call id -> tool name, every call seen so far
        self._calls: list[tuple[str, str]] = []  # (client id, wire id) not yet answered

    def fix(self, messages: Sequence[Any]) -> list[Block]:
        out: list[Block] = []
        for message in _merged(messages, core=self.core):
            role = message["role"]
            if isinstance(message["content"], str) and not (role == "user" and self._calls):
                if role == "assistant":
                    self._close_loop(out)
                    self.own_last = False  # plain text: no thinking to keep or lose
                out.append(message)  # plain text: nothing to fix, the bytes stay as they came
                continue
            message = {**message, "content": _blocks(message["content"])}
            if role == "assistant":
                self._close_loop(out)
                blocks = self._assistant(message["content"])
            elif role == "user":
                blocks = self._user(message["content"])
            else:  # ``full``: a mid-conversation system message goes as it came
                out.append(message)
                continue
            if blocks:
                out.append({**message, "content": blocks})
        return out

    def _assistant(self, content: list[Block]) -> list[Block]:
        mine = self.own_last = self.keep(content)
        blocks: list[Block] = []
        for block in content:
            kind = block.get("type")
            if kind in THINKING_BLOCKS and not mine:
                self.stripped += 1
                continue
            if kind == "tool_use":
                client_id = str(block.get("id", ""))
                (wire,) = self._ids.turn([client_id])
                self._calls.append((client_id, wire))
                self._names[client_id] = str(block.get("name", ""))
                block = {**block, "id": wire} if wire != client_id else block
            blocks.append(self._clean(block))
        return [b for b in blocks if not _empty_text(b)]

    def _user(self, content: list[Block]) -> list[Block]:
        results = [b for b in content if b.get("type") == "tool_result"]
        result_ids = [str(b.get("tool_use_id", "")) for b in results]
        answers, left = pair([client for client, _ in self._calls], result_ids)
        first = [
            self._clean(_not_run(wire) if i is None else {**results[i], "tool_use_id": wire})
            for (_, wire), i in zip(self._calls, answers, strict=True)
        ]
        orphans = [self._orphan(results[i]) for i in left]
        self._calls = []
        rest = [self._clean(b) for b in content if b.get("type") != "tool_result"]
        return [b for b in (*first, *orphans, *rest) if not _empty_text(b)]

    def _orphan(self, block: Block) -> Block:
        name = self._names.get(str(block.get("tool_use_id", "")))
        content = block.get("content", "")
        if isinstance(content, list):
            content = "\n".join(block_text(b) for b in content if isinstance(b, dict))
        text = orphan_text(name, str(content), is_error=bool(block.get("is_error")))
        return {"type": "text", "text": text}

    def _close_loop(self, out: list[Block]) -> None:
        """Calls nobody answered before the next assistant turn get a 'did not run'."""
        if self._calls:
            out.append({"role": "user", "content": self._user([])})

    def _clean(self, block: Block) -> Block:
        if self.core and "cache_control" in block:
            return {k: v for k, v in block.items() if k != "cache_control"}
        return block


def _joined(head: list[Block], rest: list[Block]) -> list[Block]:
    """``head`` then ``rest``, the messages at the seam merged if they share a role."""
    if head and rest and head[-1]["role"] == rest[0]["role"]:
        seam = _merged([head[-1], rest[0]], core=False)
        return [*head[:-1], *seam, *rest[1:]]
    return [*head, *rest]


def _merged(messages: Sequence[Any], *, core: bool) -> list[Block]:
    """``core`` turns system messages into user text; runs of one role become one message
    (results first), as the API would read them. A lone string content stays a string."""
    out: list[Block] = []
    for message in messages:
        role = message.get("role")
        content: str | list[Block] = message.get("content") or []
        if not isinstance(content, str) or not content:
            content = _blocks(content)
        if role == "system":
            if not core:
                out.append(dict(message))
                continue
            role = "user"
            text = content if isinstance(content, str) else system_text(content)
            content = [{"type": "text", "text": text}]
        if out and out[-1]["role"] == role:
            merged = [*_blocks(out[-1]["content"]), *_blocks(content)]
            results = [b for b in merged if b.get("type") == "tool_result"]
            others = [b for b in merged if b.get("type") != "tool_result"]
            out[-1] = {**out[-1], "content": [*results, *others]}
        else:
            out.append({**message, "role": role, "content": content})
    return out


def _blocks(content: Any) -> list[Block]:
    if isinstance(content, str):
        return [{"type": "text", "text": content}] if content else []
    if not isinstance(content, list):
        return []
    return [b if isinstance(b, dict) else {"type": "text", "text": str(b)} for b in content]


def _empty_text(block: Block) -> bool:
    return block.get("type") == "text" and not block.get("text")


def _not_run(wire_id: str) -> Block:
    return {"type": "tool_result", "tool_use_id": wire_id, "content": NOT_RUN, "is_error": True}


def _core_fields(body: dict[str, Any]) -> None:
    """``core``: the public API's fields only, in the forms compatible servers accept."""
    body["max_tokens"] = min(int(body.get("max_tokens", 4096)), MAX_OUTPUT_TOKENS)
    if "system" in body:
        text = system_text(body["system"])  # the billing block and cache_control go
        if text:
            body["system"] = text
        else:
            del body["system"]
    if isinstance(body.get("tools"), list):
        tools = [t for t in body["tools"] if isinstance(t, dict) and "input_schema" in t]
        body["tools"] = [{k: t[k] for k in CORE_TOOL_FIELDS if k in t} for t in tools]
        if not body["tools"]:
            del body["tools"]
            body.pop("tool_choice", None)
    thinking = body.get("thinking")
    if isinstance(thinking, dict) and thinking.get("type") == "adaptive":
        budget = min(ADAPTIVE_BUDGET, body["max_tokens"] - 1)
        if budget >= MIN_THINKING_BUDGET:
            body["thinking"] = {"type": "enabled", "budget_tokens": budget}
        else:
            del body["thinking"]


def _thinking_rule(body: dict[str, Any], messages: list[Block], *, own_last: bool) -> bool:
    """Drop ``thinking`` if the turn a tool loop continues does not start with thinking.

    With thinking on, the API requires the last assistant message to open with a thinking
    block when the request answers its tool calls. A turn of this backend's own that did
    not think is fine as it is; one whose thinking was removed (another backend's, or
    unknown) cannot be fixed without inventing a block, so thinking is turned off for
    this request instead.
    """
    thinking = body.get("thinking")
    if not isinstance(thinking, dict) or thinking.get("type") == "disabled":
        return False
    if not messages or messages[-1]["role"] != "user":
        return False
    if not any(b.get("type") == "tool_result" for b in _blocks(messages[-1]["content"])):
        return False
    last = next((m for m in reversed(messages) if m["role"] == "assistant"), None)
    if last is None:
        return False
    content = _blocks(last["content"])
    if content and content[0].get("type") in THINKING_BLOCKS:
        return False
    if own_last:
        return False
    del body["thinking"]
    _drop_thinking_edits(body)
    return True


def _drop_thinking_edits(body: dict[str, Any]) -> None:
    """``context_management`` edits that clear thinking need thinking on: they go too."""
    management = body.get("context_management")
    if not isinstance(management, dict) or not isinstance(management.get("edits"), list):
        return
    edits = [
        e
        for e in management["edits"]
        if not (isinstance(e, dict) and str(e.get("type", "")).startswith("clear_thinking"))
    ]
    if edits:
        body["context_management"] = {**management, "edits": edits}
    else:
        del body["context_management"]


__all__ = ["Prepared", "default_level", "prepare"]
