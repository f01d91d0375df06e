"""The shell classifier: read-only only when every segment is known and safe."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from toolwire.handoff import classify_command
from toolwire.handoff.shell import parse_command

READ_ONLY = [
    "cat f",
    "ls -la",
    "ls",
    "git log --oneline",
    "git status",
    "git diff HEAD~1 -- src/a.py",
    "git --no-pager log -n 5",
    "git -C sub status",
    "git branch",
    "git branch -a -v",
    "git branch --list 'feat*'",
    "git tag",
    "git remote -v",
    "git stash list",
    "git config --get user.name",
    "grep x f | head",
    "grep -rn 'TODO' src | sort | uniq -c | head -20",
    "cd src && ls",
    "pwd; ls",
    "ls;",
    "ls\n",
    "echo 'a; rm -rf /'",
    'echo "a && b || c | d ; e"',
    'grep "x > y" f',
    "grep 'a$' f",
    "echo 50$",
    "sed -n 1,20p f",
    "sed -n '$p' f",
    "find . -name '*.py' -type f",
    "rg -n foo src",
    "head -c 100 f && tail -n 5 f",
    "wc -l a b c",
    "timeout 10 cat f",
    "python --version",
    "node -v",
    "date +%Y",
    "sort -n f",
    "ls # list the files",
    "ls \\\n  -la",
    "test -f a && echo yes || echo no",
    "command -v rg",
    "env",
]

SIDE_EFFECTING = [
    ("git status && rm -rf build", "rm is not a known"),
    ("cat a > b", "redirection"),
    ("cat a >> b", "redirection"),
    ("find . -delete", "-delete"),
    ("find . -name '*.o' -exec rm {} \\;", "-exec"),
    ("sed -i s/a/b/ f", "sed"),
    ("sed -ni 1p f", "sed"),
    ("sed 's/a/b/w out' f", "sed script"),
    ("echo $(whoami)", "command substitution"),
    ("echo `whoami`", "command substitution"),
    ('echo "$(whoami)"', "command substitution"),
    ("diff <(ls a) <(ls b)", "redirection"),
    ("cat <<EOF\nhello\nEOF", "here-document"),
    ("cat <<< hi", "here-document"),
    ("sleep 10 &", "background"),
    ("ls &> out", "redirection"),
    ("ls |& cat", "redirection"),
    ("ls 2>/dev/null", "redirection"),
    ("(cd src && ls)", "subshell"),
    ("echo $HOME", "variable expansion"),
    ('grep "${PATTERN}" f', "variable expansion"),
    ("echo $'a\\nb'", "ANSI-C"),
    ("FOO=1 ls", "environment assignment"),
    ("rm -rf build", "rm is not"),
    ("git commit -m 'ls'", "git commit may change"),
    ("git branch new-feature", "git branch in a form"),
    ("git -c core.pager=evil log", "git option -c"),
    ("git diff --output=patch.txt", "--output"),
    ("git log --ext-diff", "--ext-diff"),
    ("git config user.name me", "git config in a form"),
    ("git stash", "git stash in a form"),
    ("pytest -q", "pytest is not"),
    ("make build", "make is not"),
    ("npm install", "npm is not"),
    ("python script.py", "python is not"),
    ("./ls", "program given by path"),
    ("/bin/ls", "program given by path"),
    ("sort -o out f", "sort -o"),
    ("rg --pre ./x foo", "--pre"),
    ("tree -o out", "tree -o"),
    ("uniq in out", "uniq with an output file"),
    ("date -s 2020-01-01", "date may set"),
    ("xargs rm < list", "redirection"),
    ("ls | xargs rm", "xargs is not"),
    ("tee out", "tee is not"),
    ("ls && ", "empty command"),
    ("&& ls", "empty command"),
    ("", "empty command"),
    ("   ", "empty command"),
    ("ls ;; pwd", "case syntax"),
    ("echo 'unbalanced", "unbalanced quote"),
    ('echo "unbalanced', "unbalanced quote"),
    ("ls \\", "trailing backslash"),
    ("timeout -s KILL 5 ls", "timeout with options"),
    ("env FOO=1 ls", "env with arguments"),
    ("printf -v x hi", "printf with flags"),
]


@pytest.mark.parametrize("command", READ_ONLY)
def test_read_only(command: str) -> None:
    verdict = classify_command(command)
    assert verdict.read_only, verdict.reason


@pytest.mark.parametrize(("command", "why"), SIDE_EFFECTING)
def test_side_effecting(command: str, why: str) -> None:
    verdict = classify_command(command)
    assert verdict.kind == "side-effecting"
    assert why in verdict.reason


def test_quoted_operators_are_words_not_separators() -> None:
    parsed = parse_command("echo 'a && b' && ls")
    assert parsed.segments == (("echo", "a && b"), ("ls",))
    assert parsed.operators == ("&&",)


def test_normalized_spelling_ignores_whitespace_and_quoting_style() -> None:
    same = ["ls  -la", "ls -la ", "'ls' \"-la\"", "ls\t-la"]
    assert {classify_command(c).normalized for c in same} == {"ls -la"}
    assert classify_command("echo 'a  b'").normalized != classify_command("echo 'a b'").normalized


def test_unparseable_keeps_exact_text_as_key() -> None:
    assert classify_command("  echo 'oops  ").normalized == "echo 'oops"


SHELLISH = st.text(alphabet=st.sampled_from(list("ab |&;<>()$`'\"\\#\n {}=-")), max_size=40)


@given(st.one_of(SHELLISH, st.text(max_size=60)))
def test_never_raises_and_always_says_why(command: str) -> None:
    verdict = classify_command(command)
    assert verdict.kind in ("read-only", "side-effecting")
    assert verdict.reason
    if verdict.kind == "read-only":  # its dedup key names the same read-only command
        assert classify_command(verdict.normalized) == verdict
