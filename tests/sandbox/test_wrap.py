"""The bubblewrap command line as a function of the settings, the refusals read from
output, and the Landlock fallback (where the kernel has Landlock)."""

from __future__ import annotations

from pathlib import Path

import pytest

from toolwire.config.sandbox import SandboxConfig
from toolwire.sandbox import Layout, Sandbox, bwrap_argv, refused
from toolwire.sandbox.launch import landlock_abi
from toolwire.tools import LocalTerminal


def pairs(argv: list[str], flag: str) -> list[str]:
    """The first argument after each ``flag``."""
    return [argv[i + 1] for i, a in enumerate(argv[:-1]) if a == flag]


def test_the_command_line_follows_the_settings(tmp_path: Path) -> None:
    root, home = tmp_path / "project", tmp_path / "home"
    (root / ".git" / "hooks").mkdir(parents=True)
    (root / ".claude").mkdir()
    (home / ".ssh").mkdir(parents=True)
    (home / ".netrc").write_text("x")
    data = tmp_path / "data" / "toolwire"
    data.mkdir(parents=True)
    layout = Layout(roots=(root,), home=home, hidden=(data,))
    config = SandboxConfig(deny_read=["~/.ssh", "~/.netrc", "~/.absent"])
    argv = bwrap_argv(config, layout, ["bash", "-c", "ls"], root)
    assert "--unshare-net" in argv
    assert "--die-with-parent" in argv
    assert "--unshare-pid" in argv
    assert argv[argv.index("--ro-bind") + 1 : argv.index("--ro-bind") + 3] == ["/", "/"]
    assert pairs(argv, "--bind") == [str(root)]
    # Read-only inside the writable root, and after it (bwrap applies mounts in order).
    protected = pairs(argv, "--ro-bind")
    assert str(root / ".git") in protected  # the whole of it: config, hooks, commondir
    assert str(root / ".claude") in protected
    assert argv.index(str(root / ".git")) > argv.index("--bind")
    assert str(home / ".ssh") in pairs(argv, "--tmpfs")
    assert str(data) in pairs(argv, "--tmpfs")
    assert argv[argv.index(str(home / ".netrc")) - 1] == "/dev/null"
    assert str(home / ".absent") not in argv
    assert argv[-3:] == ["bash", "-c", "ls"]

    full = bwrap_argv(SandboxConfig(network="full", mode="read-only"), layout, ["true"], root)
    assert "--unshare-net" not in full
    assert pairs(full, "--bind") == []  # read-only: not even the project

    proxied = Layout(roots=(root,), home=home, bridge=tmp_path / "p.sock")
    listed = bwrap_argv(SandboxConfig(network=["pypi.org"]), proxied, ["true"], root)
    assert "--unshare-net" in listed
    assert "HTTPS_PROXY" in pairs(listed, "--setenv")
    assert "http_proxy" in pairs(listed, "--setenv")


def test_a_deny_read_path_holding_the_project_is_not_hidden(tmp_path: Path) -> None:
    layout = Layout(roots=(tmp_path / "home" / "work",), home=tmp_path / "home")
    (tmp_path / "home" / "work").mkdir(parents=True)
    argv = bwrap_argv(SandboxConfig(deny_read=["~"]), layout, ["true"], tmp_path)
    assert str(tmp_path / "home") not in pairs(argv, "--tmpfs")


@pytest.mark.parametrize(
    ("output", "what"),
    [
        ("bash: line 1: /etc/x: Read-only file system\n", "a write"),
        ("unshare: unshare failed: Operation not permitted\n", "an operation"),
        ("PermissionError: [Errno 1] Operation not permitted\n", "an operation"),
        ("curl: (6) Could not resolve host: example.com\n", "a network connection"),
        ("curl: (56) CONNECT tunnel failed, response 403\n", "a network connection"),
        ("chmod: changing permissions of 'x': Operation not permitted\n", None),
        ("kill: (1) - Operation not permitted\n", None),
        ("grep: nothing: No such file or directory\n", None),
    ],
)
def test_refusals_are_read_precisely(output: str, what: str | None) -> None:
    found = refused(output, 1)
    if what is None:
        assert found is None
    else:
        assert (found or "").startswith(what)
    assert refused(output, 0) is None  # a command that succeeded was refused nothing


def test_no_network_refusal_when_the_network_is_full() -> None:
    assert refused("Could not resolve host: x", 6, network=False) is None


@pytest.mark.skipif(landlock_abi() < 1, reason="the kernel has no Landlock")
@pytest.mark.anyio
async def test_landlock_confines_writes_to_the_project(base: Path) -> None:
    project = base / "project"
    sandbox = Sandbox(SandboxConfig(), [project], "landlock", environ={"HOME": str(base / "home")})
    term = LocalTerminal(sandbox=sandbox)
    inside = await term.run("echo a > a.txt && echo ok", cwd=project, timeout=30)
    assert inside.output == "ok\n"
    outside = await term.run(f"echo b > {base / 'outside' / 'b.txt'}", cwd=project, timeout=30)
    assert outside.exit_code != 0
    assert not (base / "outside" / "b.txt").exists()
    assert (await term.run("unshare -U true", cwd=project, timeout=30)).exit_code != 0


@pytest.mark.parametrize(
    ("output", "what"),
    [
        ("bash: line 1: /home/u/out.txt: Read-only file system\n", "a write to ~/out.txt"),
        ("touch: cannot touch '/etc/x y': Read-only file system\n", "a write to /etc/x y"),
        ("OSError: [Errno 30] Read-only file system: '/srv/a'\n", "a write to /srv/a"),
        ("cp: Read-only file system\n", "a write outside the writable directories"),
    ],
)
def test_a_refused_write_names_its_path(output: str, what: str) -> None:
    sandbox = Sandbox(SandboxConfig(), [], "bwrap", environ={"HOME": "/home/u"})
    assert sandbox.refused(output, 1) == what


def test_the_settings_refuse_what_they_cannot_mean() -> None:
    assert SandboxConfig(network=["example.com:8080", "*.github.com"]).network
    with pytest.raises(ValueError, match="pass_env"):
        SandboxConfig(pass_env=["GITHUB_TOKEN=ghp_x"])
    with pytest.raises(ValueError, match="network"):
        SandboxConfig(network=["https://example.com/path"])
