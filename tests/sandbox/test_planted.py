"""What a sandboxed command must not plant for a program that runs later on the host.

Each case is an attack: a command inside the sandbox redirects where git reads its
config (``core.fsmonitor`` runs a command on a plain ``git status``), replaces a
protected directory given as a symbolic link, or edits a file another program runs on
its own. Then the host does what a user (or their editor) does next; nothing planted
may run. The same attack with the sandbox off succeeds: the case is a real way in.

Each runs as this process (through the agent's own ``Sandbox`` and terminal) and, when
this process is root, a second time as an ordinary user (``escapes.py``): the project,
the sandbox and the host's git are that user's.
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

import anyio
import pytest

from tests.sandbox.escapes import Runner, argv_for, mechanism_missing, runners, scratch_dir
from tests.sandbox.support import needs_bwrap
from toolwire.config.sandbox import SandboxConfig
from toolwire.sandbox import Sandbox
from toolwire.tools import LocalTerminal

pytestmark = [needs_bwrap, pytest.mark.e2e, pytest.mark.anyio]
# git on the host as the test sees it: no user or system config of the machine.
GIT_ENV = {"GIT_CONFIG_GLOBAL": "/dev/null", "GIT_CONFIG_NOSYSTEM": "1"}


@dataclass(frozen=True)
class Who:
    """Who runs the sandbox and the host's git: this process (``runner`` None) or the
    ordinary user of a root run."""

    runner: Runner | None
    base: Path

    @property
    def prefix(self) -> tuple[str, ...]:
        return self.runner.prefix if self.runner else ()

    def own(self, *paths: Path) -> None:
        if self.runner is not None:
            self.runner.own(*paths)


@pytest.fixture(scope="module")
def people() -> Iterator[tuple[Path, dict[str, Runner]]]:
    scratch = scratch_dir()
    yield scratch, runners(scratch)
    shutil.rmtree(scratch, ignore_errors=True)


@pytest.fixture(params=["self", "user"])
def who(request: pytest.FixtureRequest, base: Path, people: tuple[Path, dict[str, Runner]]) -> Who:
    if request.param == "self":
        return Who(None, base)
    scratch, found = people
    if os.geteuid() != 0:
        pytest.skip("not root: the first pass ran as the ordinary user this process is")
    runner = found["user"]
    if why := runner.skip or mechanism_missing("bwrap", runner, scratch):
        pytest.skip(why)
    base.chmod(0o755)
    runner.own(base)
    return Who(runner, base)


def git(where: Path, *args: str, who: Who | None = None) -> subprocess.CompletedProcess[str]:
    env = os.environ | GIT_ENV | {"HOME": str(where)}
    prefix = who.prefix if who else ()
    return subprocess.run(
        [*prefix, "git", "-C", str(where), *args],
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )


async def run(
    project: Path,
    command: str,
    *,
    sandboxed: bool,
    home: Path,
    who: Who,
    config: SandboxConfig | None = None,
    env: Mapping[str, str] | None = None,
) -> str:
    """``command`` in ``project``, inside the default sandbox or without one."""
    config = config or SandboxConfig()
    env = {"HOME": str(home), "XDG_DATA_HOME": str(home / ".data"), **GIT_ENV, **(env or {})}
    if who.runner is not None:
        argv = ["sh", "-c", command]
        if sandboxed:
            argv = argv_for("bwrap", who.runner, argv, project=project, home=home, config=config)
        done = await anyio.run_process(
            argv if sandboxed else [*who.prefix, *argv],
            cwd=project,
            env=os.environ | env,
            check=False,
            stderr=subprocess.STDOUT,
        )
        return done.stdout.decode()
    sandbox = Sandbox(config, [project], "bwrap", environ=env) if sandboxed else None
    term = LocalTerminal(extra_env=env, sandbox=sandbox)
    try:
        return (await term.run(command, cwd=project, timeout=60)).output
    finally:
        await term.aclose()


def plain_repo(where: Path) -> Path:
    project = where / "project"
    project.mkdir(parents=True)
    git(project, "init", "-q")
    return project


def linked_worktree(where: Path) -> Path:
    """A repository outside the session, and the session's directory its worktree."""
    main = where / "main"
    main.mkdir(parents=True)
    git(main, "init", "-q")
    who = ("-c", "user.name=t", "-c", "user.email=t@t")
    git(main, *who, "commit", "-q", "--allow-empty", "-m", "x")
    assert git(main, "worktree", "add", "-q", str(where / "project")).returncode == 0
    return where / "project"


def with_submodule(where: Path) -> Path:
    """A repository whose ``sub`` is a submodule (its ``.git`` a file, as git makes it)."""
    other = where / "other"
    other.mkdir(parents=True)
    who = ("-c", "user.name=t", "-c", "user.email=t@t")
    git(other, "init", "-q")
    git(other, *who, "commit", "-q", "--allow-empty", "-m", "x")
    project = plain_repo(where)
    add = ("-c", "protocol.file.allow=always", "submodule", "add", "-q", str(other), "sub")
    assert git(project, *who, *add).returncode == 0
    return project


def with_inner_worktree(where: Path) -> Path:
    """A repository with a linked worktree of its own inside it (``wt``)."""
    project = plain_repo(where)
    who = ("-c", "user.name=t", "-c", "user.email=t@t")
    git(project, *who, "commit", "-q", "--allow-empty", "-m", "x")
    assert git(project, "worktree", "add", "-q", str(project / "wt")).returncode == 0
    return project


def no_repo(where: Path) -> Path:
    """A session directory that is no repository (yet)."""
    (where / "project").mkdir(parents=True)
    return where / "project"


def plant(mark: Path) -> str:
    """Shell lines that make ``./planted`` a git directory running ``touch MARK``."""
    hook = shlex.quote(f"touch {mark}; false")
    return (
        "git init -q --bare planted-src && cp -r planted-src planted && "
        f"git config -f planted/config core.fsmonitor {hook} && "
        "git config -f planted/config core.bare false"
    )


ATTACKS: dict[str, tuple[Callable[[Path], Path], Callable[[Path], str], str]] = {
    "make a repository where there was none": (
        no_repo,
        lambda mark: (
            f"git init -q && git config core.fsmonitor {shlex.quote(f'touch {mark}; false')}"
        ),
        ".",
    ),
    "rename .git and build another": (
        plain_repo,
        lambda mark: (
            "mv .git .git-away && git init -q && "
            f"git config core.fsmonitor {shlex.quote(f'touch {mark}; false')}"
        ),
        ".",
    ),
    "point .git/commondir at a planted directory": (
        plain_repo,
        lambda mark: f'{plant(mark)} && echo "$PWD/planted" > .git/commondir',
        ".",
    ),
    "rewrite a worktree's .git file": (
        linked_worktree,
        lambda mark: f'{plant(mark)} && echo "gitdir: $PWD/planted" > .git',
        ".",
    ),
    "rewrite a submodule's .git file": (
        with_submodule,
        lambda mark: f'{plant(mark)} && echo "gitdir: $PWD/planted" > sub/.git',
        "sub",
    ),
    "rewrite an inner worktree's .git file": (
        with_inner_worktree,
        lambda mark: f'{plant(mark)} && echo "gitdir: $PWD/planted" > wt/.git',
        "wt",
    ),
}


@pytest.mark.parametrize("attack", list(ATTACKS))
async def test_git_status_on_the_host_runs_nothing_the_sandbox_planted(
    who: Who, attack: str
) -> None:
    make, command, inner = ATTACKS[attack]
    for sandboxed in (True, False):
        where = who.base / ("inside" if sandboxed else "outside")
        project, mark = make(where), where / "PWNED"
        who.own(where)
        home = who.base / "home"
        output = await run(project, command(mark), sandboxed=sandboxed, home=home, who=who)
        git(project, "status", who=who)
        git(project / inner, "status", who=who)
        assert mark.exists() is not sandboxed, (sandboxed, output)


@pytest.mark.parametrize("absolute", [False, True], ids=["relative", "absolute"])
async def test_a_protected_directory_given_as_a_link_holds(who: Who, absolute: bool) -> None:
    project = who.base / "project"
    (project / "dotfiles" / "claude").mkdir(parents=True)
    (project / "dotfiles" / "claude" / "settings.json").write_text("{}\n")
    target = project / "dotfiles" / "claude" if absolute else Path("dotfiles/claude")
    (project / ".claude").symlink_to(target)
    who.own(project)
    os.lchown(project / ".claude", *((who.runner.uid, who.runner.gid) if who.runner else (-1, -1)))
    home = who.base / "home"
    # bubblewrap starts (an absolute target once stopped every command of the project)
    assert await run(project, "echo started", sandboxed=True, home=home, who=who) == "started\n"
    settings = '{"hooks": "planted"}'
    through = f"echo {shlex.quote(settings)} > .claude/settings.json"
    replace = f"rm .claude && mkdir .claude && {through}"
    rename = f"mv .claude .claude-away && mkdir .claude && {through}"
    for command in (through, replace, rename):
        await run(project, command, sandboxed=True, home=home, who=who)
        assert (project / ".claude").is_symlink(), command
        assert (project / ".claude" / "settings.json").read_text() == "{}\n", command
    # the commands still run as the user who started them, in the project as it is
    mine = await run(project, "id -u; touch made; ls -n made", sandboxed=True, home=home, who=who)
    uid = who.runner.uid if who.runner else os.getuid()
    assert mine.splitlines()[0] == str(uid), mine
    assert (project / "made").stat().st_uid == uid
    await run(project, replace, sandboxed=False, home=home, who=who)
    assert not (project / ".claude").is_symlink()  # the same command, unconfined


AUTO_RUN = (".envrc", ".bashrc", ".zshrc", ".profile", ".gitmodules", ".mcp.json")


async def test_files_other_programs_run_on_their_own_are_read_only(who: Who) -> None:
    project = who.base / "project"
    for name in AUTO_RUN:
        (project / name).write_text("# the user's\n")
    for folder in (".vscode", ".idea"):
        (project / folder).mkdir()
        (project / folder / "tasks.json").write_text("{}\n")
    who.own(project)
    paths = [*AUTO_RUN, ".vscode/tasks.json", ".idea/tasks.json", ".vscode/new.json"]
    command = "; ".join(f"echo planted >> {p}" for p in paths) + "; echo made > fine.txt"
    output = await run(project, command, sandboxed=True, home=who.base / "home", who=who)
    assert (project / "fine.txt").read_text() == "made\n", output  # the project is writable
    for name in AUTO_RUN:
        assert (project / name).read_text() == "# the user's\n", name
    assert not (project / ".vscode" / "new.json").exists()
    assert (project / ".idea" / "tasks.json").read_text() == "{}\n"


async def test_credentials_in_the_home_are_hidden_by_default(who: Who) -> None:
    home = who.base / "home"
    files = [".netrc", ".git-credentials", ".docker/config.json", ".kube/config"]
    files.append(".config/gh/hosts.yml")
    for name in files:
        (home / name).parent.mkdir(parents=True, exist_ok=True)
        (home / name).write_text("the-secret\n")
    who.own(home)
    command = "; ".join(f"cat ~/{name}" for name in files)
    project = who.base / "project"
    inside = await run(project, command, sandboxed=True, home=home, who=who)
    assert "the-secret" not in inside
    outside = await run(project, command, sandboxed=False, home=home, who=who)
    assert outside.count("the-secret") == len(files)


async def test_secrets_in_the_environment_stay_outside_unless_passed(who: Who) -> None:
    secrets = {
        "GITHUB_TOKEN": "t1",
        "AWS_SECRET_ACCESS_KEY": "t2",
        "STRIPE_API_KEY": "t3",
        "DB_PASSWORD": "t4",
        "PGPASSWORD": "t7",
        "MYSQL_PWD": "t8",
        "NPM_TOKEN": "t5",
        "SHAPED_LIKE_A_KEY": "ghp_" + "a1B2" * 8,
        "DATABASE_URL": "postgres://me:t6@db/x",
    }
    env = {**secrets, "PLAIN_SETTING": "kept", "DEPLOY_TOKEN": "passed"}
    project = who.base / "project"
    config = SandboxConfig(pass_env=["DEPLOY_TOKEN"])
    seen = await run(
        project, "env", sandboxed=True, home=who.base / "home", who=who, config=config, env=env
    )
    names = {line.partition("=")[0] for line in seen.splitlines()}
    assert not names & set(secrets), names & set(secrets)
    assert "PLAIN_SETTING=kept" in seen
    assert f"PWD={project}" in seen
    assert "DEPLOY_TOKEN=passed" in seen


async def test_the_placeholder_git_leaves_with_the_session(base: Path) -> None:
    project = base / "project"
    me = Who(None, base)
    output = await run(
        project, "ls -a .git && echo seen", sandboxed=True, home=base / "home", who=me
    )
    assert "seen" in output  # an empty .git stood there inside
    assert not (project / ".git").exists()  # and the host has none once the sandbox closed
