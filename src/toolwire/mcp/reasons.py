"""The words for a server that did not start (which server, why, what to check) or
stopped under a call. A server URL's credentials (``user:password@``, ``?token=``) are
masked: these words reach the editor, the logs and the stored transcript."""

from __future__ import annotations

import shlex

from toolwire.config.mcp import mask_args
from toolwire.mcp.link import UnreadableAnswerError
from toolwire.mcp.spec import ServerSpec
from toolwire.secrets import mask_urls


def _leaf(error: BaseException) -> BaseException:
    """The first real error inside anyio's exception groups."""
    while isinstance(error, BaseExceptionGroup) and error.exceptions:
        error = error.exceptions[0]
    return error


def start_failure(spec: ServerSpec, error: BaseException, stderr_path: str | None) -> str:
    """``MCP server 'db' did not start: <why>; check <what>``."""
    error = _leaf(error)
    stderr = f" (its stderr is in {stderr_path})" if stderr_path else ""
    if spec.transport == "stdio":
        line = shlex.join([spec.command or "", *mask_args(list(spec.args))])
        check = f"that `{line}` runs and speaks MCP on stdout{stderr}"
    else:
        check = f"that {spec.url} is reachable and serves MCP over {spec.transport}"
    if isinstance(error, TimeoutError):
        why = f"no answer within {spec.timeout:g} s"
        if spec.source == "config":
            check += f", or raise timeout in [mcp_servers.{spec.name}]"
    elif isinstance(error, FileNotFoundError):
        why = f"command {spec.command!r} not found"
        check = "the command's path and PATH" + (f", and cwd {spec.cwd}" if spec.cwd else "")
    elif isinstance(error, UnreadableAnswerError):
        why = str(error)
    elif isinstance(error, PermissionError):
        why = f"command {spec.command!r} cannot be run ({error.strerror or error})"
        check = "its permissions"
    else:
        text = str(error).strip().splitlines()
        why = f"{type(error).__name__}: {text[0]}" if text else type(error).__name__
    return mask_urls(f"MCP server {spec.name!r} did not start: {why}; check {check}")


def not_running(name: str, stderr_path: str | None) -> str:
    where = f" (its stderr is in {stderr_path})" if stderr_path else ""
    return f"MCP server {name!r} is not running{where}; its tools are unavailable"


def died(name: str, why: str, *, restarted: bool, stderr_path: str | None) -> str:
    """What the model reads when the server stopped under its call."""
    why = mask_urls(why)
    if restarted:
        return (
            f"MCP server {name!r} stopped during this call ({why}); it was restarted, but "
            "the call did not finish: call the tool again if it is still needed"
        )
    where = f"; see its stderr in {stderr_path}" if stderr_path else ""
    return (
        f"MCP server {name!r} stopped during this call ({why}) and is not restarted "
        f"again this session; its tools are withdrawn{where}"
    )


__all__ = ["died", "not_running", "start_failure"]
