"""``toolwire.safe_read``: a file toolwire reads on its own never blocks, never costs more
than its cap, and is refused with one line naming it when it is not a regular file."""

from __future__ import annotations

import os
import socket
from pathlib import Path

import pytest

from toolwire.hooks.settings import read_sources
from toolwire.safe_read import NotReadError, read_file


def test_a_regular_file_is_read_whole_under_its_cap(tmp_path: Path) -> None:
    (tmp_path / "f").write_bytes(b"hello")
    assert read_file(tmp_path / "f", 5) == b"hello"


def test_over_the_cap_it_is_refused_or_its_head_taken(tmp_path: Path) -> None:
    big = tmp_path / "big"
    with big.open("wb") as handle:
        handle.truncate(4 * 1024**3)  # sparse: a whole read would be 4 GB
    with pytest.raises(NotReadError, match=r"is over 1,000 bytes"):
        read_file(big, 1000)
    assert read_file(big, 1000, head=True) == b"\0" * 1000


def test_a_named_pipe_is_refused_without_waiting(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "pipe")
    with pytest.raises(NotReadError) as refused:
        read_file(tmp_path / "pipe", 1000)  # a blocking open would wait here forever
    assert (
        refused.value.strerror == f"{tmp_path / 'pipe'} is a named pipe (FIFO), not a regular file"
    )


def test_a_link_to_a_device_is_refused(tmp_path: Path) -> None:
    (tmp_path / "zero").symlink_to("/dev/zero")
    with pytest.raises(NotReadError, match="is a character device, not a regular file"):
        read_file(tmp_path / "zero", 1000)
    with pytest.raises(NotReadError, match="is a symbolic link"):
        read_file(tmp_path / "zero", 1000, follow_links=False)


def test_a_socket_and_a_directory_are_refused(tmp_path: Path) -> None:
    with socket.socket(socket.AF_UNIX) as server:
        server.bind(str(tmp_path / "sock"))
        with pytest.raises(NotReadError, match="is a socket"):
            read_file(tmp_path / "sock", 1000)
    with pytest.raises(NotReadError, match="is a directory"):
        read_file(tmp_path, 1000)
    with pytest.raises(FileNotFoundError):
        read_file(tmp_path / "absent", 1000)


def test_hook_settings_that_are_a_pipe_give_one_problem_and_no_hooks(tmp_path: Path) -> None:
    (tmp_path / ".claude").mkdir()
    os.mkfifo(tmp_path / ".claude" / "settings.json")
    (tmp_path / ".claude" / "settings.local.json").symlink_to("/dev/zero")
    sources = read_sources(tmp_path, home=tmp_path / "home")
    assert [s.groups for s in sources] == [(), ()]
    assert [len(s.problems) for s in sources] == [1, 1]
    assert "named pipe (FIFO)" in sources[0].problems[0]
    assert "character device" in sources[1].problems[0]
