"""What a write_file card reads before approval: the project tools' rules, a cap, binary never decoded."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest

from desktop.core.tools import DIFF_MAX_LINES, read_existing, write_diff


def test_a_new_file_is_absent(project: Path) -> None:
    found = read_existing(project, "notes/new.md")
    assert found.state == "absent" and found.path == "notes/new.md" and not found.exists


def test_an_existing_text_file_is_read(project: Path) -> None:
    (project / "notes").mkdir()
    (project / "notes" / "todo.md").write_text("- milk\n- bread\n", encoding="utf-8")
    found = read_existing(project, "./notes/todo.md")
    assert (found.state, found.path, found.size) == ("text", "notes/todo.md", 15)
    assert found.text == "- milk\n- bread\n"
    assert found.exists


@pytest.mark.parametrize("data", [b"PNG\x00\x01\x02", b"caf\xe9 latin-1\n"])
def test_binary_or_non_utf8_files_are_binary(project: Path, data: bytes) -> None:
    (project / "blob").write_bytes(data)
    found = read_existing(project, "blob")
    assert found.state == "binary" and found.text is None and found.size == len(data)


def test_a_file_over_the_cap_is_not_read(project: Path) -> None:
    (project / "big.txt").write_text("x" * 5000, encoding="utf-8")
    found = read_existing(project, "big.txt", cap=4096)
    assert (found.state, found.size, found.text) == ("too_large", 5000, None)


@pytest.mark.parametrize("path", ["../outside.txt", "/etc/hostname", "~/x", ".git/config", "project.json"])
def test_paths_the_tool_refuses_are_refused_unread(project: Path, tmp_path: Path, path: str) -> None:
    (tmp_path / "outside.txt").write_text("secret", encoding="utf-8")
    found = read_existing(project, path)
    assert found.state == "refused" and found.text is None and found.reason
    assert "secret" not in (found.reason or "")


def test_a_symlink_out_of_the_project_is_refused(project: Path, tmp_path: Path) -> None:
    (tmp_path / "outside.txt").write_text("secret", encoding="utf-8")
    (project / "link.txt").symlink_to(tmp_path / "outside.txt")
    found = read_existing(project, "link.txt")
    assert found.state == "refused" and found.text is None


def test_a_folder_is_not_a_regular_file(project: Path) -> None:
    (project / "sub").mkdir()
    assert read_existing(project, "sub").state == "not_regular"


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs POSIX FIFOs")
def test_a_fifo_is_never_opened(project: Path) -> None:
    os.mkfifo(project / "pipe.txt")
    result: list[object] = []
    worker = threading.Thread(target=lambda: result.append(read_existing(project, "pipe.txt")), daemon=True)
    worker.start()
    worker.join(timeout=10)  # a generous bound: a blocking open would hang here for ever
    assert result and getattr(result[0], "state", None) == "not_regular"


def test_the_diff_counts_added_and_removed_lines() -> None:
    old = "# Todo\n- milk\n- report\n- bank\n"
    new = "# Todo\n- milk and bread\n- report\n- train\n"
    diff = write_diff(old, new)
    assert diff is not None
    assert diff.lines[0].startswith("@@ ")
    assert "-- milk" in diff.lines and "+- milk and bread" in diff.lines and " - report" in diff.lines
    assert (diff.added, diff.removed) == (2, 2)
    assert not any(line.startswith(("---", "+++")) for line in diff.lines)


def test_identical_text_has_an_empty_diff() -> None:
    diff = write_diff("a\nb\n", "a\nb\n")
    assert diff is not None and diff.lines == () and (diff.added, diff.removed) == (0, 0)


def test_long_files_are_not_compared() -> None:
    long = "line\n" * (DIFF_MAX_LINES + 1)
    assert write_diff(long, "short\n") is None
    assert write_diff("short\n", long) is None


def test_lines_end_at_newlines_only() -> None:
    diff = write_diff("a\r\nb\n", "a\nb\u2028c\n")
    assert diff is not None
    assert "-a\r" in diff.lines and "+a" in diff.lines and "+b\u2028c" in diff.lines
