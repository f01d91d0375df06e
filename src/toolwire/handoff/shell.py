"""A small, conservative shell lexer: enough to tell a plain command line from a risky one.

The handoff keeps only the latest result of a read-only command, and every occurrence
of anything else (docs/handoff.md). Telling the two apart needs the command split
into simple commands at ``|``, ``&&``, ``||``, ``;`` and newlines, with quoting honoured:
``echo "a && b"`` is one command, ``echo a && b`` two. ``shlex`` cannot do that alone:
with ``punctuation_chars`` it returns a quoted ``"&&"`` and the operator ``&&`` as the
same token. So this lexer reads the line once, character by character, and stops at the
first construct a read-only verdict could not survive:

* redirection (``>``, ``<``, ``&>``, ``|&``), here-documents and here-strings (``<<``);
* command or process substitution (``$(``, backticks, ``<(``) and any ``$`` expansion
  outside single quotes (its value is unknown, so its flags are too);
* background ``&``, subshells and grouping ``(``/``)``;
* anything it cannot parse: unbalanced quotes, a trailing backslash, an empty command.

A hazard is not an error: it only means "treat as side-effecting". Nothing here raises
on any input, and the scan is linear in the length of the line.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass

SEPARATORS = ("|", "&&", "||", ";")
_NAME_START = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ_0123456789@*#?$!-")
_DOUBLE_ESCAPES = frozenset('$`"\\\n')


@dataclass(frozen=True, slots=True)
class ParsedCommand:
    """A command line split into simple commands (their words, quotes removed).

    ``operators[i]`` joins ``segments[i]`` and ``segments[i + 1]``. When ``hazard`` is set
    the line holds a construct that makes it side-effecting, and ``segments`` is empty.
    """

    segments: tuple[tuple[str, ...], ...]
    operators: tuple[str, ...]
    hazard: str | None = None

    def normalized(self) -> str | None:
        """One canonical spelling (re-quoted words, single spaces); None with a hazard."""
        if self.hazard is not None:
            return None
        parts = [" ".join(shlex.quote(w) for w in self.segments[0])]
        for op, words in zip(self.operators, self.segments[1:], strict=True):
            parts.append(f"{op} " + " ".join(shlex.quote(w) for w in words))
        return " ".join(parts)


class _HazardError(Exception):
    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class _Lexer:
    def __init__(self, text: str) -> None:
        self.text = text
        self.i = 0
        self.word: list[str] = []
        self.in_word = False
        self.words: list[str] = []
        self.segments: list[tuple[str, ...]] = []
        self.operators: list[str] = []

    def run(self) -> ParsedCommand:
        try:
            while self.i < len(self.text):
                self._step(self.text[self.i])
            self._end_segment(None)
        except _HazardError as h:
            return ParsedCommand((), (), h.reason)
        return ParsedCommand(tuple(self.segments), tuple(self.operators))

    def _step(self, c: str) -> None:
        if c in " \t":
            self._end_word()
            self.i += 1
        elif c == "\\":
            self._backslash()
        elif c == "'":
            self._single_quote()
        elif c == '"':
            self._double_quote()
        elif c == "$":
            self._dollar(quoted=False)
        elif c == "`":
            raise _HazardError("command substitution")
        elif c in "|&;\n":
            self._operator(c)
        elif c in "<>":
            here = self.text.startswith("<<", self.i)
            raise _HazardError("here-document" if here else "redirection")
        elif c in "()":
            raise _HazardError("subshell or grouping")
        elif c == "#" and not self.in_word:
            end = self.text.find("\n", self.i)  # a comment runs to the end of the line
            self.i = len(self.text) if end < 0 else end
        else:
            self._char(c, 1)

    def _char(self, c: str, advance: int) -> None:
        self.word.append(c)
        self.in_word = True
        self.i += advance

    def _backslash(self) -> None:
        if self.i + 1 >= len(self.text):
            raise _HazardError("trailing backslash")
        nxt = self.text[self.i + 1]
        if nxt == "\n":
            self.i += 2  # line continuation
        else:
            self._char(nxt, 2)

    def _single_quote(self) -> None:
        end = self.text.find("'", self.i + 1)
        if end < 0:
            raise _HazardError("unbalanced quote")
        self.word.append(self.text[self.i + 1 : end])
        self.in_word = True
        self.i = end + 1

    def _double_quote(self) -> None:
        self.in_word = True
        self.i += 1
        while self.i < len(self.text):
            c = self.text[self.i]
            if c == '"':
                self.i += 1
                return
            if c == "\\" and self.text[self.i + 1 : self.i + 2] in _DOUBLE_ESCAPES:
                self.word.append(self.text[self.i + 1])
                self.i += 2
            elif c == "`":
                raise _HazardError("command substitution")
            elif c == "$":
                self._dollar(quoted=True)
            else:
                self.word.append(c)
                self.i += 1
        raise _HazardError("unbalanced quote")

    def _dollar(self, *, quoted: bool) -> None:
        nxt = self.text[self.i + 1] if self.i + 1 < len(self.text) else ""
        if nxt == "(":
            raise _HazardError("command substitution")
        if nxt == "{" or nxt in _NAME_START:
            raise _HazardError("variable expansion")
        if nxt in ("'", '"') and not quoted:
            raise _HazardError("ANSI-C or locale quoting")
        self.word.append("$")  # a lone ``$`` is literal
        self.in_word = True
        self.i += 1

    def _operator(self, c: str) -> None:
        two = self.text[self.i : self.i + 2]
        if two in ("&&", "||"):
            op, width = two, 2
        elif two in ("|&", "&>"):
            raise _HazardError("redirection")
        elif c == "&":
            raise _HazardError("background &")
        elif two == ";;":
            raise _HazardError("case syntax")
        else:
            op, width = (";" if c == "\n" else c), 1
        self._end_segment(op)
        self.i += width

    def _end_word(self) -> None:
        if self.in_word:
            self.words.append("".join(self.word))
        self.word, self.in_word = [], False

    def _end_segment(self, op: str | None) -> None:
        self._end_word()
        words, self.words = tuple(self.words), []
        if words:
            self.segments.append(words)
            if op is not None:
                self.operators.append(op)
        elif op is None and self.operators and self.operators[-1] == ";":
            self.operators.pop()  # ``ls;`` and a final newline end a list harmlessly
        elif op != ";" or not self.segments:
            raise _HazardError("empty command")  # ``&& ls``, ``ls |``, or nothing at all
        # else: a blank line or a stray ``;`` after a command adds nothing


def parse_command(text: str) -> ParsedCommand:
    """Split ``text`` into simple commands, or say which construct makes that unsafe."""
    return _Lexer(text).run()


__all__ = ["SEPARATORS", "ParsedCommand", "parse_command"]
