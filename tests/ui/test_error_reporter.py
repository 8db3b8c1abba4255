"""The error reporter: every unhandled exception (Qt slot, asyncio callback, worker thread) becomes a
scrubbed one-line report on the GUI thread, and uninstalling puts the previous hooks back."""

from __future__ import annotations

import asyncio
import logging
import sys
import threading
from collections.abc import Iterator
from typing import Any

import pytest

from desktop.ui.window.error_reporter import SUMMARY_LIMIT, ErrorReporter

SECRET = "sk-this-is-a-secret-0000"


def _scrub(text: str) -> str:
    return text.replace(SECRET, "***")


class _Shown:
    """Records what the reporter shows, and on which thread."""

    def __init__(self) -> None:
        self.texts: list[str] = []
        self.threads: list[int] = []

    def __call__(self, text: str) -> None:
        self.texts.append(text)
        self.threads.append(threading.get_ident())


@pytest.fixture
def reporter(qapp: Any) -> Iterator[tuple[ErrorReporter, _Shown]]:
    shown = _Shown()
    rep = ErrorReporter(shown, _scrub)
    yield rep, shown
    rep.uninstall()
    rep.deleteLater()


def test_report_scrubs_logs_and_truncates(reporter: Any, caplog: pytest.LogCaptureFixture) -> None:
    rep, shown = reporter
    try:
        raise ValueError(f"bad {SECRET} " + "x" * 400)
    except ValueError as exc:
        with caplog.at_level(logging.ERROR, logger="desktop.ui.window.error_reporter"):
            rep.report(type(exc), exc, exc.__traceback__)
    (text,) = shown.texts
    assert text.startswith("ValueError: bad *** x") and SECRET not in text
    assert len(text) == SUMMARY_LIMIT and text.endswith("…")
    assert rep.last_error == text
    assert "Traceback" in caplog.text and "test_report_scrubs_logs_and_truncates" in caplog.text
    assert SECRET not in caplog.text


def test_install_and_uninstall_put_the_previous_hooks_back(qtbot: Any, reporter: Any,
                                                           qloop: asyncio.AbstractEventLoop) -> None:
    rep, shown = reporter
    before = (sys.excepthook, threading.excepthook)
    rep.install()
    assert rep.installed
    assert sys.excepthook != before[0] and threading.excepthook != before[1]
    rep.uninstall()
    assert not rep.installed
    assert (sys.excepthook, threading.excepthook) == before
    # (qasync's loop does not report its handler through get_exception_handler(): check the behaviour)
    qloop.call_exception_handler({"message": "after uninstall", "exception": KeyError(SECRET)})
    assert shown.texts == []


@pytest.mark.qt_no_exception_capture
def test_a_qt_slot_exception_is_reported(qtbot: Any, reporter: Any, qloop: asyncio.AbstractEventLoop) -> None:
    from PySide6.QtCore import QTimer

    rep, shown = reporter
    rep.install()

    def boom() -> None:
        raise RuntimeError(f"slot failed with {SECRET}")

    QTimer.singleShot(0, boom)
    qtbot.waitUntil(lambda: bool(shown.texts), timeout=10_000)
    assert shown.texts == ["RuntimeError: slot failed with ***"]


def test_a_worker_thread_exception_is_reported_on_the_gui_thread(qtbot: Any, reporter: Any,
                                                                  qloop: asyncio.AbstractEventLoop) -> None:
    rep, shown = reporter
    rep.install()

    def work() -> None:
        raise OSError(f"worker failed with {SECRET}")

    worker = threading.Thread(target=work, name="worker")
    worker.start()
    worker.join(5)
    qtbot.waitUntil(lambda: bool(shown.texts), timeout=10_000)
    assert shown.texts == ["OSError: worker failed with ***"]
    assert shown.threads == [threading.get_ident()]  # the banner is shown from the GUI thread


def test_an_asyncio_callback_exception_is_reported_but_not_a_cancellation(
        qtbot: Any, reporter: Any, qloop: asyncio.AbstractEventLoop) -> None:
    rep, shown = reporter
    rep.install()

    def callback() -> None:
        raise KeyError(SECRET)

    qloop.call_soon(callback)
    qtbot.waitUntil(lambda: bool(shown.texts), timeout=10_000)
    assert shown.texts == ["KeyError: '***'"]
    qloop.call_exception_handler({"message": "cancelled", "exception": asyncio.CancelledError()})
    assert len(shown.texts) == 1  # a cancellation goes to the loop's default handler, not to the user


def test_a_stale_hook_passes_exceptions_on_after_uninstall(reporter: Any) -> None:
    rep, shown = reporter
    seen: list[BaseException] = []
    previous = sys.excepthook
    sys.excepthook = lambda t, e, tb: seen.append(e)
    try:
        rep.install()
        stale = sys.excepthook
        rep.uninstall()
        late = ValueError("late")
        stale(ValueError, late, None)  # someone kept a reference to the reporter's hook
    finally:
        sys.excepthook = previous
    assert seen == [late] and shown.texts == []
