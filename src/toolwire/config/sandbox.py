"""``[tools.sandbox]``: where ``Bash`` commands run (docs/sandbox.md).

``mode`` is what a command may write: the session's directories (``workspace-write``),
nothing (``read-only``), or anything the user can (``off``: no sandbox). ``network`` is
``"none"``, ``"full"`` or a list of host patterns reached through toolwire's proxy.
Where the sandbox cannot run, the session starts with it off and says why.
"""

from __future__ import annotations

import re
from typing import Final, Literal, TypeAlias

from pydantic import BaseModel, ConfigDict, Field, field_validator

SandboxMode: TypeAlias = Literal["workspace-write", "read-only", "off"]
#: What a command must not read, whatever the mode (``~`` is the user's home); toolwire's
#: own data and config directories are hidden too, always.
DEFAULT_DENY_READ: Final[tuple[str, ...]] = (
    "~/.ssh",
    "~/.aws",
    "~/.gnupg",
    "~/.config/gcloud",
    "~/.netrc",
    "~/.git-credentials",
    "~/.docker",
    "~/.kube",
    "~/.config/gh",
)
# A host name, or ``*.`` and a domain: its subdomains (not the domain itself); then
# perhaps ``:PORT`` (without one: 80 and 443 only).
_HOST_PATTERN: Final = re.compile(
    r"(\*\.)?[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?(\.[A-Za-z0-9-]+)*(:[0-9]{1,5})?"
)
_ENV_NAME: Final = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


class SandboxConfig(BaseModel):
    """``[tools.sandbox]``: the sandbox around commands (docs/sandbox.md)."""

    # As ``schema.Table`` (which imports this module): unknown keys are errors.
    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)

    mode: SandboxMode = "workspace-write"
    """``workspace-write``: commands write only the session's directories, ``writable``
    and a private temp; ``read-only``: nothing; ``off``: no sandbox."""
    network: Literal["none", "full"] | list[str] = Field(
        default="none", description='"none", "full" or a list of host patterns'
    )
    """``none``: no network; ``full``: the host's; a list: those hosts only, through a
    proxy (``"pypi.org"``, ``"*.github.com"``), on ports 80 and 443 unless a port is
    given (``"example.com:8080"``)."""
    deny_read: list[str] = Field(
        default_factory=lambda: list(DEFAULT_DENY_READ), description="a list of paths"
    )
    """Paths hidden from commands (``~`` expands to the home directory)."""
    writable: list[str] = Field(default_factory=list, description="a list of paths")
    """More paths commands may write, besides the session's directories."""
    ask: bool = False
    """Whether ``Bash`` still asks in ``ask`` mode while the sandbox is on."""
    escape: Literal["ask", "never"] = "ask"
    """``ask``: a command the sandbox refused leads to one question, whether to run it
    outside; ``never``: no such question, the refusal stands."""
    pass_env: list[str] = Field(default_factory=list, description="a list of variable names")
    """Secret-looking environment variables a command may still see (by name); the rest
    never reach a sandboxed command (``toolwire.sandbox.wrap.SECRET_NAMES``)."""

    @field_validator("network")
    @classmethod
    def _hosts(cls, value: str | list[str]) -> str | list[str]:
        if isinstance(value, list):
            bad = [host for host in value if not _HOST_PATTERN.fullmatch(host)]
            if bad:
                raise ValueError(
                    f"tools.sandbox.network lists {bad[0]!r}: list host names such as "
                    '"pypi.org", "*.github.com" or "example.com:8080" (no scheme or path)'
                )
        return value

    @field_validator("pass_env")
    @classmethod
    def _names(cls, names: list[str]) -> list[str]:
        bad = [name for name in names if not _ENV_NAME.fullmatch(name)]
        if bad:
            raise ValueError(
                f"tools.sandbox.pass_env lists {bad[0]!r}: list the NAMES of environment "
                'variables (e.g. ["GITHUB_TOKEN"]), not their values'
            )
        return names


__all__ = ["DEFAULT_DENY_READ", "SandboxConfig", "SandboxMode"]
