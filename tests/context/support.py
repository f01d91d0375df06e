"""Histories for the context tests: a long tool loop over files the test names."""

from __future__ import annotations

from toolwire.history import Message, TextPart, ToolCallPart, ToolResultPart, tool_results, user

TASK = "Read every file under src/ and tell me which one defines parse_config."


def file_text(index: int, size: int = 8000) -> str:
    """A file whose first line names it and whose lines say where they are."""
    lines = [f"# FILE {index}\n"]
    n = 1
    while sum(len(line) for line in lines) < size:
        lines.append(
            f"{n:6}\tvalue_{index}_{n} = compute({index}, {n})  # line {n} of file {index}\n"
        )
        n += 1
    return "".join(lines)[:size]


def read_loop(files: int, *, size: int = 8000, backend: str = "small") -> list[Message]:
    """One user turn in which the model reads ``files`` files, one call per response."""
    history = [user(TASK)]
    for i in range(files):
        call = ToolCallPart(f"call_{i}", "Read", {"file_path": f"/project/src/f{i}.py"})
        history.append(Message("assistant", (TextPart(f"Reading f{i}.py."), call), backend))
        history.append(tool_results([ToolResultPart(f"call_{i}", "Read", file_text(i, size))]))
    return history
