"""Render the documentation screenshots offline: ``python -m desktop.screenshots OUT_DIR [--only NAMES]``.

A developer tool beside ``desktop.app`` (the top layer): it runs the app's own wiring
(:func:`desktop.app.make_context`) against the built-in demo provider or a scripted loopback one
(offscreen is fine: ``QT_QPA_PLATFORM=offscreen``; no key, no network) and writes, with
``QWidget.grab()``:

* ``main-window.png`` / ``main-window-dark.png``: two nodes side by side; one shows a streamed
  Markdown answer with thinking and a finished tool call, the other waits on a permission card;
* ``permission-card.png``: the node with the permission card;
* ``settings.png`` / ``settings-dark.png``: the settings dialog (a made-up key in an in-memory
  keyring shows how a stored key is masked);
* the feature shots of :mod:`desktop.screenshots.features` (``attachments.png``, ``canvas.png``,
  ``branch-map.png``, ``search.png``, ``sidebar-closed.png``, ``import.png``; light scheme, 1600x1000).

Each scheme is rendered from a fresh window started in that scheme, as a user would see it. The run's
search index and other user data go to a temporary ``CHATNODES_DATA_DIR``, removed at the end.

Modules: this one (the demo tour's shots, the entry point), ``features`` (the feature scenes),
``_scenes`` (their conversations), ``_samples`` (the generated PNG, PDF and ChatGPT export) and
``_support`` (waiting, grabbing, the scripted :class:`~desktop.screenshots._support.Stage`).
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import shutil
import sys
import tempfile
from pathlib import Path

import PySide6  # noqa: F401  (the binding before qasync)
from PySide6.QtCore import QRect
from PySide6.QtGui import QFont
from PySide6.QtWidgets import QApplication, QPushButton, QWidget

from desktop.app import DEMO_FIRST_PROMPT, make_context
from desktop.screenshots._support import grab, memory_keyring, settle, visible_child, wait_until
from desktop.ui.event_loop import new_event_loop

log = logging.getLogger(__name__)

__all__ = ["DEMO_SHOTS", "main", "render_screenshots", "shot_names"]

WINDOW_SIZE = (1440, 900)
FIRST_PROMPT = DEMO_FIRST_PROMPT
SECOND_PROMPT = "Give me the tour, and save a note for me."
SHOWCASE_KEY = "sk-ant-demo-not-a-real-key-7f3a"
"""A made-up key in an in-memory keyring: the settings shot shows how a stored key looks (masked)."""
DEMO_SHOTS = ("main-window.png", "main-window-dark.png", "permission-card.png", "settings.png",
              "settings-dark.png")
"""The shots of the demo tour (:func:`_render_scheme`, once per scheme)."""
DATA_DIR_ENV = "CHATNODES_DATA_DIR"


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
    secrets = SecretStore(backend=memory_keyring({("chatnodes", "anthropic"): SHOWCASE_KEY}))
    context = make_context(config_dir=work / "config", environ={}, secrets=secrets)
    context.start_demo(tokens_per_second=None)
    window = MainWindow(context)
    try:
        window.resize(*WINDOW_SIZE)
        window.open_project(work / "Demo project")
        window.show()
        await settle()
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
        await wait_until(lambda: visible_child(notes, "approveButton") is not None, what="the first card")
        button = visible_child(notes, "approveButton")
        assert isinstance(button, QPushButton)
        button.click()
        await wait_until(lambda: not notes.is_busy(), what="the first answer")

        # Right: the same tour, waiting on the permission card.
        tour.submit(SECOND_PROMPT)
        await wait_until(lambda: visible_child(tour, "permissionCard") is not None,
                          what="the permission card")
        await settle(10)
        window.mdi.setActiveSubWindow(window.subwindow_of(tour))
        chat_input = tour.findChild(QWidget, "chatInput")
        if chat_input is not None:
            chat_input.setFocus()
        await settle(10)
        grab(window, out_dir / f"main-window{suffix}.png", written)
        if scheme == "light":
            grab(window.subwindow_of(tour), out_dir / "permission-card.png", written)

        dialog = SettingsDialog(context, parent=window)
        dialog.resize(820, 600)
        dialog.select_provider("anthropic")
        dialog.show()
        await settle(8)
        grab(dialog, out_dir / f"settings{suffix}.png", written)
        dialog.close()
    finally:
        window.close()
        await wait_until(lambda: window.is_shut_down(), timeout=15.0, what="shutdown")
        shutil.rmtree(work, ignore_errors=True)


def shot_names() -> tuple[str, ...]:
    """Every file name the tool writes."""
    from desktop.screenshots.features import FEATURE_SHOTS

    return (*DEMO_SHOTS, *FEATURE_SHOTS)


async def render_screenshots(out_dir: Path, schemes: tuple[str, ...] = ("light", "dark"),
                             only: frozenset[str] | None = None) -> list[Path]:
    """Drive the demo once per colour scheme, then each feature scene, writing the PNGs into
    ``out_dir``; returns the files. ``only``: just these file names (the demo tour runs whole when one
    of its shots is asked for)."""
    from desktop.screenshots.features import render_features

    out_dir.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    if only is None or not only.isdisjoint(DEMO_SHOTS):
        for scheme in schemes:
            await _render_scheme(out_dir, scheme, written)
    await render_features(out_dir, written, only)
    return written


def main(argv: list[str] | None = None) -> int:
    """Entry point of ``python -m desktop.screenshots OUT_DIR [--only NAMES]``."""
    parser = argparse.ArgumentParser(prog="python -m desktop.screenshots")
    parser.add_argument("out_dir", type=Path, nargs="?", default=Path("docs/screenshots"))
    parser.add_argument("--only", default="", help="comma-separated file names, e.g. canvas.png,search.png")
    args = parser.parse_args(argv)
    only = frozenset(n.strip() for n in args.only.split(",") if n.strip()) or None
    unknown = sorted((only or frozenset()) - set(shot_names()))
    if unknown:
        parser.error(f"unknown shots: {', '.join(unknown)} (known: {', '.join(shot_names())})")
    logging.basicConfig(level=logging.WARNING)
    app = QApplication.instance() or QApplication(sys.argv[:1])
    assert isinstance(app, QApplication)
    app.setApplicationName("Chat Nodes")
    app.setQuitOnLastWindowClosed(False)  # closing the dialog must not stop the loop
    font = QFont(app.font())
    if font.pointSizeF() < 10:
        font.setPointSizeF(10)
        app.setFont(font)
    data = Path(tempfile.mkdtemp(prefix="chatnodes-shots-data-"))
    saved = os.environ.get(DATA_DIR_ENV)
    os.environ[DATA_DIR_ENV] = str(data)  # the search index: a temporary one, never the user's
    try:
        with asyncio.Runner(loop_factory=lambda: new_event_loop(app)) as runner:
            files = runner.run(render_screenshots(args.out_dir, only=only))
    finally:
        if saved is None:
            os.environ.pop(DATA_DIR_ENV, None)
        else:
            os.environ[DATA_DIR_ENV] = saved
        shutil.rmtree(data, ignore_errors=True)
    for path in files:
        print(path)
    return 0
