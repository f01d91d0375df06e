"""``[mcp_servers.NAME]``: an MCP server the user runs in every session.

A server is either a command (stdio) or a URL (streamable HTTP, or SSE with
``transport = "sse"``). Keys never live in the file: a header or environment value may
name variables as ``${VAR}`` (expanded when the session starts), and a value that looks
like a literal secret is rejected with a line saying so.
"""

from __future__ import annotations

import re
from typing import Annotated, Any, Final, Literal, Self

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    PositiveFloat,
    StringConstraints,
    ValidationInfo,
    field_validator,
    model_validator,
)

from toolwire.secrets import mask, mask_keys

NonEmpty = Annotated[str, StringConstraints(min_length=1)]
VARIABLE: Final = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")
_SENSITIVE_NAME = re.compile(
    r"(?i)password|passwd|secret|credential"
    r"|(^|[_-])(auth|authorization|key|token|cookie|apikey|pat)($|[_-])"
)
# A run of 24+ key characters with letters and digits (sk-..., ghp_..., a JWT segment):
# what a pasted key looks like, and what a path, a URL or a word does not.
_TOKEN_LIKE = re.compile(r"(?=[A-Za-z0-9_-]*[0-9])(?=[A-Za-z0-9_-]*[A-Za-z])[A-Za-z0-9_-]{24,}")


def looks_secret(name: str, value: str, *, shape: bool = True) -> bool:
    """A literal value that is probably a key: under a sensitive name, or (``shape``)
    token-shaped. ``${VAR}`` parts are not literal: ``"Bearer ${TOKEN}"`` is fine."""
    literal = VARIABLE.sub("", value)
    if VARIABLE.search(value):
        return shape and bool(_TOKEN_LIKE.search(literal))
    if not literal.strip():
        return False
    return bool(_SENSITIVE_NAME.search(name)) or (shape and bool(_TOKEN_LIKE.search(literal)))


# Showing a command line: a flag whose name says it carries a key, and values shaped
# like one (known prefixes, a bearer credential, a long run mixing cases and digits).
_SECRET_FLAG = re.compile(r"(?i)^--?[a-z0-9_-]*(key|token|secret|passw(or)?d|credential|auth)")


def mask_args(args: list[str]) -> list[str]:
    """``args`` as ``toolwire config`` and start failures show them: the value after or
    in a flag named like a key (``--api-key X``, ``--token=X``) and anything shaped like
    a key hidden, every other argument as it is."""
    shown: list[str] = []
    follows_flag = False
    for arg in args:
        flag, eq, value = arg.partition("=")
        if follows_flag and not arg.startswith("-"):
            shown.append(mask(arg))
        elif eq and _SECRET_FLAG.match(flag):
            shown.append(f"{flag}={mask(value)}")
        else:
            shown.append(mask_keys(arg))
        follows_flag = not eq and bool(_SECRET_FLAG.match(arg))
    return shown


class Table(BaseModel):
    """A TOML table, checked as ``toolwire.config.schema.Table`` checks one (that module
    imports this one, so the base is restated here rather than imported)."""

    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)


class McpToolFilter(Table):
    """``tools = {allow = ["read_*"], deny = ["drop_*"]}``: shell-style patterns on the
    server's own tool names; empty ``allow`` means all, ``deny`` wins."""

    allow: list[str] = Field(default_factory=list, description="a list of name patterns")
    deny: list[str] = Field(default_factory=list, description="a list of name patterns")


class McpServerTable(Table):
    """One ``[mcp_servers.NAME]`` table."""

    command: NonEmpty | None = None
    """The program to run (stdio); found on ``PATH``."""
    args: list[str] = Field(default_factory=list, description="a list of strings")
    env: dict[str, str] = Field(default_factory=dict, description="a table of strings")
    """Variables for the command, over a minimal inherited set (``PATH``, ``HOME``, ...)."""
    cwd: NonEmpty | None = None
    url: NonEmpty | None = None
    """The server's endpoint (streamable HTTP unless ``transport = "sse"``)."""
    headers: dict[str, str] = Field(default_factory=dict, description="a table of strings")
    transport: Literal["stdio", "http", "sse"] | None = None
    """Default: ``stdio`` with ``command``, ``http`` with ``url``."""
    enabled: bool = True
    timeout: PositiveFloat = 30.0
    """Seconds the server may take to start and list its tools."""
    tools: McpToolFilter = Field(default_factory=McpToolFilter)
    trusted: bool = False
    """Read-only-hinted tools of a trusted server run without asking in ``ask`` mode."""

    @field_validator("headers", "env")
    @classmethod
    def _no_secrets(cls, values: dict[str, str], info: ValidationInfo) -> dict[str, str]:
        # Header values are checked by shape too; env values hold paths and ids as often.
        for name, value in values.items():
            if looks_secret(name, value, shape=info.field_name == "headers"):
                raise ValueError(
                    f"{name} looks like a literal secret; do not put keys in the config file: "
                    f'export it and write "${{VAR}}" (e.g. "Bearer ${{MY_TOKEN}}")'
                )
        return values

    @model_validator(mode="after")
    def _one_way_to_reach(self) -> Self:
        if (self.command is None) == (self.url is None):
            raise ValueError('set either command = "..." (stdio) or url = "..." (http, sse)')
        if self.command is not None:
            if self.transport not in (None, "stdio"):
                raise ValueError(f'transport = "{self.transport}" needs url, not command')
            if self.headers:
                raise ValueError("headers apply to url servers; use env for a command")
        else:
            if self.transport == "stdio":
                raise ValueError('transport = "stdio" needs command, not url')
            if self.args or self.env or self.cwd:
                raise ValueError("args, env and cwd apply to command servers; remove them here")
        return self

    @property
    def kind(self) -> Literal["stdio", "http", "sse"]:
        """The transport, defaults applied."""
        return self.transport or ("stdio" if self.command is not None else "http")


def expand(value: str, environ: Any) -> tuple[str, list[str]]:
    """``value`` with each ``${VAR}`` replaced from ``environ``; also the names unset."""
    missing: list[str] = []

    def one(match: re.Match[str]) -> str:
        found = environ.get(match.group(1))
        if found is None:
            missing.append(match.group(1))
            return ""
        return str(found)

    return VARIABLE.sub(one, value), missing


__all__ = [
    "VARIABLE",
    "McpServerTable",
    "McpToolFilter",
    "expand",
    "looks_secret",
    "mask_args",
]
