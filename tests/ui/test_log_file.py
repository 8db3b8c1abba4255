"""The app's log file (issue 25, item 2): in the user's log folder, rotated, scrubbed of keys, and
named by the error banner."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import platformdirs
from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QPushButton

from desktop import app
from desktop.testing import FakeProvider

pytest_plugins = ["test_app_support"]  # fixtures: fake, make_context, open_window

KEY = "sk-proj-secret0123456789abcdefXYZW"


def test_log_dir_is_the_users_log_folder_unless_overridden(tmp_path: Path) -> None:
    assert app.log_dir({}) == Path(platformdirs.user_log_dir("chatnodes", appauthor=False))
    assert app.log_dir({"CHATNODES_LOG_DIR": str(tmp_path)}) == tmp_path


def test_log_file_is_rotated_and_never_holds_a_key(tmp_path: Path) -> None:
    logger = logging.getLogger("chatnodes-test-log-file")
    logger.propagate = False
    logger.setLevel(logging.INFO)
    path = app.add_log_file(tmp_path / "logs", logger)
    try:
        app.install_key_scrub_filter(logger, secrets=lambda: [KEY])
        assert path == tmp_path / "logs" / "chatnodes.log"
        assert path.stat().st_mode & 0o777 == 0o600
        logger.error("request failed with key %s", KEY)
        line = "x" * 1000
        for _ in range(app.LOG_MAX_BYTES // 1000 + 10):
            logger.info(line)
    finally:
        for handler in list(logger.handlers):
            logger.removeHandler(handler)
            handler.close()
    files = sorted(p.name for p in path.parent.iterdir())
    assert files == ["chatnodes.log", "chatnodes.log.1"]  # rotated once, the old one kept beside it
    everything = "".join(p.read_text(encoding="utf-8") for p in path.parent.iterdir())
    assert "request failed with key" in everything and KEY not in everything and KEY[8:20] not in everything


def test_log_file_that_cannot_be_written_is_skipped(tmp_path: Path) -> None:
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("")
    logger = logging.getLogger("chatnodes-test-log-blocked")
    assert app.add_log_file(blocker, logger) is None
    assert logger.handlers == []


def test_error_banner_names_the_log_file(qtbot: Any, open_window: Any, fake: FakeProvider,
                                         tmp_path: Path) -> None:
    window = open_window(tmp_path / "project", tmp_path / "config")
    window.context.log_file = tmp_path / "logs" / "chatnodes.log"

    def broken_slot() -> None:
        raise RuntimeError("a slot failed")

    QTimer.singleShot(0, window, broken_slot)  # an exception escaping a real Qt slot
    qtbot.waitUntil(lambda: window.banner_area.find("errorBanner") is not None, timeout=10_000)
    banner = window.banner_area.find("errorBanner")
    assert "RuntimeError: a slot failed" in banner.text()
    assert f"details are in the log file {tmp_path / 'logs' / 'chatnodes.log'}" in banner.text()
    assert banner.findChild(QPushButton, "openLogFolderButton") is not None
