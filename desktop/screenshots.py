"""Render the documentation screenshots from the offline demo: ``python -m desktop.screenshots OUT_DIR``.

A developer tool beside ``desktop.app`` (the top layer): it runs the app's own wiring
(:func:`desktop.app.make_context`) against the built-in demo provider (offscreen is fine:
``QT_QPA_PLATFORM=offscreen``) and writes, with ``QWidget.grab()``:

* ``main-window.png`` / ``main-window-dark.png``: two nodes side by side; one shows a streamed
  Markdown answer with thinking and a finished tool call, the other waits on a permission card;
* ``permission-card.png``: the node with the permission card;
* ``settings.png`` / ``settings-dark.png``: the settings dialog (a made-up key in an in-memory
  keyring shows how a stored key is masked).

Each scheme is rendered from a fresh window started in that scheme, as a user would see it.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import shutil
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import PySide6  # noqa: F401  (the binding before qasync)
import qasync
from PySide6.QtCore import QRect
from PySide6.QtGui import QFont
from PySide6.QtWidgets import QApplication, QPushButton, QWidget

from desktop.app import DEMO_FIRST_PROMPT, make_context

log = logging.getLogger(__name__)

__all__ = ["render_screenshots", "main"]

WINDOW_SIZE = (1440, 900)
FIRST_PROMPT = DEMO_FIRST_PROMPT
SECOND_PROMPT = "Give me the tour, and save a note for me."


async def _wait_until(condition: Callable[[], bool], timeout: float = 20.0, what: str = "condition") -> None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not condition():
        if loop.time() > deadline:
            raise TimeoutError(f"screenshots: timed out waiting for {what}")
        await asyncio.sleep(0.03)


async def _settle(rounds: int = 6) -> None:
    """Let Qt lay out and paint (never ``processEvents`` inside a task: qasync would re-enter tasks)."""
    for _ in range(rounds):
        await asyncio.sleep(0.03)


def _visible_child(root: QWidget, name: str) -> QWidget | None:
    for child in root.findChildren(QWidget, name):
        if child.isVisible():
            return child
    return None


class _ShowcaseKeyring:
    """Builds an in-memory keyring backend holding one made-up key, so the settings screenshot shows
    how a stored key looks (masked, last four characters). Nothing touches the real keyring."""

    @staticmethod
    def backend() -> Any:
        import keyring.backend

        class _Memory(keyring.backend.KeyringBackend):
            priority = 1

            def __init__(self) -> None:
                super().__init__()  # type: ignore[no-untyped-call]  # keyring's __init__ is untyped
                self.values = {("chatnodes", "anthropic"): "sk-ant-demo-not-a-real-key-7f3a"}

            def get_password(self, service: str, username: str) -> str | None:
                return self.values.get((service, username))

            def set_password(self, service: str, username: str, password: str) -> None:
                self.values[(service, username)] = password

            def delete_password(self, service: str, username: str) -> None:
                self.values.pop((service, username), None)

        return _Memory()


def _grab(widget: QWidget, path: Path, written: list[Path]) -> None:
    if not widget.grab().save(str(path)):
        raise OSError(f"could not write {path}")
    written.append(path)


async def _render_scheme(out_dir: Path, scheme: str, written: list[Path]) -> None:
    from desktop.core.config import SecretStore
    from desktop.ui.settings.dialog import SettingsDialog
    from desktop.ui.theme import apply_theme
    from desktop.ui.window.main_window import MainWindow

    app = QApplication.instance()
    assert isinstance(app, QApplication)
    apply_theme(app, "dark" if scheme == "dark" else "light")
    suffix = "" if scheme == "light" else f"-{scheme}"
    work = Path(tempfile.mkdtemp(prefix="chatnodes-shots-"))
    secrets = SecretStore(backend=_ShowcaseKeyring.backend())
    context = make_context(config_dir=work / "config", environ={}, secrets=secrets)
    context.start_demo(tokens_per_second=None)
    window = MainWindow(context)
    try:
        window.resize(*WINDOW_SIZE)
        window.open_project(work / "Demo project")
        window.show()
        await _settle()
        tour, notes = window.nodes()
        tour.chat_input.clear()  # the demo offers its first prompt there; the script sends its own
        tour.set_title("Tour of Chat Nodes")
        notes.set_title("Notes helper")
        width = window.mdi.viewport().width()
        height = window.mdi.viewport().height()
        half = width // 2
        window.subwindow_of(notes).setGeometry(QRect(0, 0, half, height))
        window.subwindow_of(tour).setGeometry(QRect(half, 0, width - half, height))

        # Left: a finished exchange (thinking, Markdown, an approved tool call, the follow-up).
        notes.submit(FIRST_PROMPT)
        await _wait_until(lambda: _visible_child(notes, "approveButton") is not None, what="the first card")
        button = _visible_child(notes, "approveButton")
        assert isinstance(button, QPushButton)
        button.click()
        await _wait_until(lambda: not notes.is_busy(), what="the first answer")

        # Right: the same tour, waiting on the permission card.
        tour.submit(SECOND_PROMPT)
        await _wait_until(lambda: _visible_child(tour, "permissionCard") is not None,
                          what="the permission card")
        await _settle(10)
        window.mdi.setActiveSubWindow(window.subwindow_of(tour))
        chat_input = tour.findChild(QWidget, "chatInput")
        if chat_input is not None:
            chat_input.setFocus()
        await _settle(10)
        _grab(window, out_dir / f"main-window{suffix}.png", written)
        if scheme == "light":
            _grab(window.subwindow_of(tour), out_dir / "permission-card.png", written)

        dialog = SettingsDialog(context, parent=window)
        dialog.resize(820, 600)
        dialog.select_provider("anthropic")
        dialog.show()
        await _settle(8)
        _grab(dialog, out_dir / f"settings{suffix}.png", written)
        dialog.close()
    finally:
        window.close()
        await _wait_until(lambda: window.is_shut_down(), timeout=15.0, what="shutdown")
        shutil.rmtree(work, ignore_errors=True)


async def render_screenshots(out_dir: Path, schemes: tuple[str, ...] = ("light", "dark")) -> list[Path]:
    """Drive the demo once per colour scheme and write the PNGs into ``out_dir``; returns the files."""
    out_dir.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    for scheme in schemes:
        await _render_scheme(out_dir, scheme, written)
    return written


def main(argv: list[str] | None = None) -> int:
    """Entry point of ``python -m desktop.screenshots OUT_DIR``."""
    parser = argparse.ArgumentParser(prog="python -m desktop.screenshots")
    parser.add_argument("out_dir", type=Path, nargs="?", default=Path("docs/screenshots"))
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.WARNING)
    app = QApplication.instance() or QApplication(sys.argv[:1])
    assert isinstance(app, QApplication)
    app.setApplicationName("Chat Nodes")
    app.setQuitOnLastWindowClosed(False)  # closing the dialog must not stop the loop
    font = QFont(app.font())
    if font.pointSizeF() < 10:
        font.setPointSizeF(10)
        app.setFont(font)
    with asyncio.Runner(loop_factory=lambda: qasync.QEventLoop(app)) as runner:
        files = runner.run(render_screenshots(args.out_dir))
    for path in files:
        print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
