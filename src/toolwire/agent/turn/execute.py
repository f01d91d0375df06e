"""Running one tool call the model made: permission, execution, and what the editor sees.

The call's ``ToolCallLifecycle`` (already ``pending`` with its final ``rawInput``) moves
to ``in_progress`` when the tool starts and ends ``completed`` or ``failed``; every change
goes through the update engine, so output frames are coalesced, throttled and bounded
(docs/agent.md "Tools"). What the result shows (the tool's card, ``ToolResult.card``):

* ``Edit``/``Write``: the diff (``oldText``/``newText``), never prose over it;
* ``Bash`` in a client terminal: the ``{"type": "terminal"}`` content, added as soon as
  the terminal exists; locally: the output tail while running, the capped output at the
  end, and the exit status in words on failure;
* ``TodoWrite``: an ACP ``plan`` update, plus a short summary on the call;
* anything else: the tool's text result (capped by the lifecycle).

The model gets ``ToolResult.to_part`` (text written for it), whatever the editor shows.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from acp.schema import PermissionOption

from toolwire.agent.protocol.outbox import Ticker
from toolwire.agent.protocol.ports import ClientTerminal
from toolwire.agent.session import mcp_calls
from toolwire.agent.session.hooks import SessionHooks
from toolwire.agent.session.permissions import answer, options, preview
from toolwire.agent.session.state import Runtime, Session
from toolwire.agent.turn import sandboxing
from toolwire.agent.turn.agent_terminal import AgentTerminal
from toolwire.agent.turn.collect import CollectedCall
from toolwire.agent.turn.hooked import ToolHooks, hook_name
from toolwire.agent.turn.policy import Traits, builtin_traits, decide, mcp_traits, refusal, rejected
from toolwire.history import ToolResultPart
from toolwire.hooks.protocol import Permission
from toolwire.mcp import McpTool
from toolwire.tools import TOOLS, LocalTerminal, Tool, ToolContext, ToolResult, get_tool
from toolwire.updates.engine import UpdateEngine
from toolwire.updates.lifecycle import ToolCallLifecycle
from toolwire.updates.wire import terminal_content

log = logging.getLogger("toolwire.agent")


class PermissionCancelledError(Exception):
    """The client answered a permission request ``cancelled``: the turn is over."""


class Executor:
    """Runs the calls of one turn, one at a time, in the order the model made them."""

    def __init__(
        self, session: Session, runtime: Runtime, engine: UpdateEngine, ticker: Ticker
    ) -> None:
        self.session = session
        self.runtime = runtime
        self.engine = engine
        self.ticker = ticker
        self.plan: list[dict[str, Any]] | None = None
        self.hooks = ToolHooks(SessionHooks(session, runtime))

    async def execute(self, call: CollectedCall, life: ToolCallLifecycle) -> ToolResultPart:
        """Run ``call`` (or refuse it) and end its lifecycle; the result for the model."""
        if call.error is not None:  # the lifecycle already ended it failed, with the error
            return _error(call, f"Invalid tool arguments: {call.error}. Send valid JSON.")
        tool = get_tool(call.name)
        allowed = self.session.who.tool_names
        if tool is not None and allowed is not None and tool.name not in allowed:
            tool = None  # a subagent whose type does not have it
        extra = (
            self.session.services.mcp.tool(call.name)
            if self.session.services.mcp is not None
            else None
        )
        if tool is None and extra is not None:
            return await self._mcp(call, life, extra)
        if tool is None:
            offered = [n for n in TOOLS if allowed is None or n in allowed]
            known = ", ".join([*offered, *(t.model_name for t in self._mcp_tools())])
            return self._refuse(call, life, f"There is no tool named {call.name!r}; use {known}.")
        args: Mapping[str, Any] = call.arguments if isinstance(call.arguments, Mapping) else {}
        ctx = self.session.services.tools
        hook, refused = await self.hooks.before(call.name, call.id, args)
        if refused is None:  # refused whatever the answer (WebFetch's address): not asked
            refused = await tool.vet(args, ctx)
        if refused is None:
            sandboxed = sandboxing.asks_not(self.session)
            traits = builtin_traits(tool, args, sandboxed=sandboxed)
            show = lambda: preview(tool, args, ctx)  # noqa: E731
            refused = await self._permit(traits, life, show=show, hook=hook)
        if refused is not None:
            return self._refuse(call, life, refused)
        return await self.hooks.after(call.name, args, await self._run(tool, call, life))

    async def _mcp(
        self, call: CollectedCall, life: ToolCallLifecycle, tool: McpTool
    ) -> ToolResultPart:
        args: Mapping[str, Any] = call.arguments if isinstance(call.arguments, Mapping) else {}
        name = hook_name(tool)
        hook, refused = await self.hooks.before(name, call.id, args)
        if refused is None:
            refused = await self._permit(mcp_traits(tool), life, hook=hook)
        if refused is not None:
            return self._refuse(call, life, refused)

        def send(changed: ToolCallLifecycle) -> None:
            self.ticker.send(self.engine.update(changed))

        part = await mcp_calls.run_call(self.session, send, call.id, call.name, args, life)
        return await self.hooks.after(name, args, part)

    def _mcp_tools(self) -> list[McpTool]:
        return [] if self.session.services.mcp is None else self.session.services.mcp.tools()

    async def _permit(
        self,
        traits: Traits,
        life: ToolCallLifecycle,
        show: Callable[[], Awaitable[list[dict[str, Any]] | None]] | None = None,
        hook: Permission | None = None,
    ) -> str | None:
        """None when the call may run; else the tool error it is answered with. Asks when
        the policy says so (``show`` gives what is approved, e.g. an edit's diff) and
        remembers "always" answers for the session. A ``PreToolUse`` hook's ``allow``
        skips the question and its ``ask`` asks anyway, never past a refusing mode."""
        session = self.session
        decision = decide(traits, session.rules.mode, session.rules)
        if decision == "deny":
            return refusal(traits, session.rules.mode, session.rules)
        if hook == "allow" or (decision == "allow" and hook != "ask"):
            return None
        choice = await self._ask(traits.subject, life, show)
        if choice == "cancelled":
            raise PermissionCancelledError
        if choice == "reject_always":
            session.rules.never.add(traits.rule)
        if choice in ("reject", "reject_always"):
            return rejected(traits)
        if choice == "allow_always":
            session.rules.always.add(traits.rule)
        return None

    async def _ask(
        self,
        name: str,
        life: ToolCallLifecycle,
        show: Callable[[], Awaitable[list[dict[str, Any]] | None]] | None,
        choices: list[PermissionOption] | None = None,
        title: str | None = None,
    ) -> str:
        shown = await show() if show is not None else None
        if shown is not None:
            life.set_content(shown)  # what is being approved, shown before the question
            self.ticker.send(self.engine.update(life))
        try:
            notes, payload = self.engine.permission(life.tool_call_id)
            if title is not None:
                payload = {**payload, "title": title}
            self.ticker.send(notes)
            asked = self.session.services.notifier.ask(payload, choices or options(name))
            choice = answer(await asked)
        except BaseException:  # cancelled, or the client went away: nothing was applied
            _withdraw(life, shown)
            raise
        if choice not in ("allow_once", "allow_always"):
            _withdraw(life, shown)
        return choice

    async def _run(
        self, tool: Tool, call: CollectedCall, life: ToolCallLifecycle
    ) -> ToolResultPart:
        life.run()
        self.ticker.send(self.engine.update(life))
        owned = self._agent_terminal(tool, call, life)
        result = await tool.run(call.arguments, self._context(tool, life, owned=owned))
        hidden = sandboxing.hidden_by(self.session, result, call.arguments)
        what = None if hidden is not None else sandboxing.refused_by(self.session, result)
        if hidden is not None:
            result = hidden
        elif what is not None:
            result = await self._outside(tool, call, life, result, what)
        if owned is not None:  # v2: the output is the terminal's, the card shows it
            owned.exit(result.command.exit_code if result.command is not None else None)
            result = dataclasses.replace(result, terminal_id=owned.terminal_id)
        self._finish(tool, life, result)
        return result.to_part(call.id, call.name)

    async def _outside(
        self,
        tool: Tool,
        call: CollectedCall,
        life: ToolCallLifecycle,
        result: ToolResult,
        what: str,
    ) -> ToolResult:
        """The sandbox refused the command: ask once whether to run it outside (not with
        ``escape = "never"``). The question names the sandbox and what it refused."""
        if not sandboxing.may_escape(self.session):
            return sandboxing.noted(result, what, "never")
        title = sandboxing.question(what, str(call.arguments.get("command", "")))
        choice = await self._ask(tool.name, life, None, sandboxing.options(), title)
        if choice == "cancelled":
            raise PermissionCancelledError
        if choice == "allow_always":
            self.session.rules.unsandbox()
        if choice in ("allow_once", "allow_always"):
            result = await tool.run(call.arguments, self._context(tool, life, outside=True))
        return sandboxing.noted(result, what, choice)

    def _agent_terminal(
        self, tool: Tool, call: CollectedCall, life: ToolCallLifecycle
    ) -> AgentTerminal | None:
        """In a v2 session a command gets a terminal the agent owns (v2 has no other)."""
        if tool.kind != "execute" or self.runtime.protocol < 2:
            return None
        command = str(call.arguments.get("command", ""))
        owned = AgentTerminal(
            self.session.services.outbox, f"{call.id}-term", command, self.session.who.cwd
        )
        life.set_content([terminal_content(owned.terminal_id)])
        self.ticker.send(self.engine.update(life) + self.engine.flush())
        return owned

    def _context(
        self,
        tool: Tool,
        life: ToolCallLifecycle,
        *,
        outside: bool = False,
        owned: AgentTerminal | None = None,
    ) -> ToolContext:
        def on_output(text: str) -> None:
            if owned is not None:
                owned.output(text)
                return
            life.output(text)
            self.ticker.send(self.engine.update(life))

        def on_created(terminal_id: str) -> None:
            life.set_content([terminal_content(terminal_id)])
            # Flushed at once: ACP wants the terminal on the call before its release.
            self.ticker.send(self.engine.update(life) + self.engine.flush())

        ctx = self.session.services.tools.with_output(on_output)
        local = ctx.terminal
        if isinstance(local, LocalTerminal) and (outside or self.session.rules.unsandboxed):
            ctx = dataclasses.replace(ctx, terminal=local.unconfined())
        if self._client_terminals(tool):
            base = ctx.terminal if isinstance(ctx.terminal, LocalTerminal) else LocalTerminal()
            client = ClientTerminal(
                self.runtime.client, self.session.wire_id, base, on_created, self._refused
            )
            ctx = dataclasses.replace(ctx, terminal=client)
        return ctx

    def _client_terminals(self, tool: Tool) -> bool:
        """Commands go to the client's terminals: it offers them and has not refused one."""
        terminals = self.runtime.capabilities.terminal
        return (
            tool.kind == "execute" and bool(terminals) and not self.session.rules.terminal_refused
        )

    def _refused(self, why: str) -> None:
        """The client refused a terminal: said once, and later commands run here."""
        if self.session.rules.terminal_refused is None:
            log.info("session %s: the client refused a terminal: %s", self.session.id, why)
            self.session.services.notifier.notice(sandboxing.terminal_notice(why))
        self.session.rules.refuse_terminal(why)

    def _finish(self, tool: Tool, life: ToolCallLifecycle, result: ToolResult) -> None:
        if result.plan is not None:
            self.plan = [entry.to_acp() for entry in result.plan]
            self.ticker.send(self.engine.plan(self.plan))
        tool.card(result, self.session.services.tools.limits).end(life)
        self.ticker.send(self.engine.update(life))

    def _refuse(self, call: CollectedCall, life: ToolCallLifecycle, message: str) -> ToolResultPart:
        life.fail(message)
        self.ticker.send(self.engine.update(life))
        return _error(call, message)


def _withdraw(life: ToolCallLifecycle, shown: list[dict[str, Any]] | None) -> None:
    """A previewed diff that will not be applied leaves the card: the call's end then
    shows why instead (a rejection, a cancel), as an error result does."""
    if shown is not None and life.stage != "end":
        life.set_content(())


def _error(call: CollectedCall, message: str) -> ToolResultPart:
    return ToolResultPart(call.id, call.name, message, is_error=True)


__all__ = ["Executor", "PermissionCancelledError"]
