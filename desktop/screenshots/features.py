"""The feature screenshots of the issues' closing notes, each from its own :class:`~._support.Stage` (a
1600x1000 window, light scheme, the scripted loopback provider: no key, no network):

* ``attachments.png``: a node whose message carries a chart (PNG drawn with ``QPainter``) and a
  two-page PDF (``QPdfWriter``): their thumbnail and chip in the transcript, one more file waiting in
  the input (issue 26);
* ``canvas.png``: View → Canvas with five cards, two of them forks of one node (labelled fork edges),
  and the minimap (issue 30);
* ``branch-map.png``: the Branches dialog of a node with an edited question and a regenerated answer;
* ``search.png``: the search panel (Ctrl+Shift+F) with hits for one word in four nodes, one of them
  closed, the matches highlighted (issue 27);
* ``sidebar-closed.png``: the sidebar (Ctrl+B) with the open nodes and the recently closed ones (issue 25);
* ``import.png``: the import dialog previewing a ChatGPT export of six conversations.

The search index is written where ``CHATNODES_DATA_DIR`` points (:func:`render_features` is called with
it set to a temporary folder).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import QEvent, Qt
from PySide6.QtGui import QKeyEvent
from PySide6.QtWidgets import (
    QApplication,
    QDialog,
    QDockWidget,
    QLineEdit,
    QListView,
    QPushButton,
    QToolButton,
)

from desktop.screenshots import _scenes as scenes
from desktop.screenshots._samples import chart_png, chatgpt_export, receipt_png, report_pdf
from desktop.screenshots._support import Stage, grab, settle, wait_until

if TYPE_CHECKING:
    from desktop.ui.node.chat_node import ChatNodeWidget

__all__ = ["FEATURE_SHOTS", "render_features"]


async def _attachments(out: Path, written: list[Path]) -> None:
    async with Stage("attachments", "Growth team") as stage:
        window = stage.window
        inbox = stage.work / "in"
        inbox.mkdir()
        report = stage.first_node("Q3 sign-ups")
        expenses = window.add_node()
        expenses.set_title("Expense claim")
        window.tile()
        for node, files, question, answer in (
            (report, [chart_png(inbox / "signups-q3.png"), report_pdf(inbox / "q3-report.pdf")],
             scenes.ATTACH_QUESTION, scenes.turn(scenes.ATTACH_ANSWER, 2900, 260)),
            (expenses, [receipt_png(inbox / "IMG_2041.png")],
             scenes.RECEIPT_QUESTION, scenes.turn(scenes.RECEIPT_ANSWER, 1100, 140)),
        ):
            node.attach.add_files(files)
            await wait_until(partial(_tray_ready, node, len(files)), what="the attachments read")
            await stage.send(node, question, answer)
            await wait_until(partial(_thumbs_loaded, node), what="the thumbnails")
        csv = inbox / "signups-by-region.csv"
        csv.write_text(scenes.REGIONS_CSV, encoding="utf-8")
        report.attach.add_files([csv])
        await wait_until(lambda: _tray_ready(report, 1), what="the waiting file")
        report.chat_input.setPlainText("Here is the split by region: which one should we push in Q4?")
        stage.focus(report)
        await settle(12)
        grab(window, out / "attachments.png", written)


def _thumbs_loaded(node: ChatNodeWidget) -> bool:
    row = getattr(node.transcript.views()[0], "attachment_row", None)  # the first message: the user's
    return row is not None and bool(row.thumbs) and all(thumb.is_loaded for thumb in row.thumbs)


def _tray_ready(node: ChatNodeWidget, count: int) -> bool:
    tray = node.attach.tray()
    return len(tray.items) == count and tray.all_ready()


async def _canvas(out: Path, written: list[Path]) -> None:
    async with Stage("canvas", "Holidays") as stage:
        window = stage.window
        trip = stage.first_node("Trip to Lyon")
        scenes.trigger(window, "canvasAction")  # the nodes are made on the canvas: it places their cards
        await settle(6)
        await stage.send(trip, scenes.TRIP_Q, scenes.turn(scenes.TRIP_A, 420, 380))
        await stage.send(trip, scenes.TRIP_Q2, scenes.turn(scenes.TRIP_A2, 820, 120))
        forks = []
        for index, title, question, answer in scenes.TRIP_FORKS:
            before = set(window.nodes())
            trip.versions.fork(trip.conversation.messages[index].id)
            await wait_until(lambda b=before: len(window.nodes()) > len(b), what="the fork")  # type: ignore[misc]
            fork = next(n for n in window.nodes() if n not in before)
            fork.set_title(title)
            await stage.send(fork, question, scenes.turn(answer, 900, 160))
            forks.append(fork)
        board = window.canvas
        trip_card, budget_card = board.card(trip.node_id), board.card(forks[0].node_id)
        assert trip_card is not None and budget_card is not None
        step = budget_card.rect().x() - trip_card.rect().x()
        for column, (title, question, answer) in enumerate(scenes.CANVAS_OTHERS, start=2):
            node = window.add_node()
            node.set_title(title)
            await stage.send(node, question, scenes.turn(answer, 200, 120))
            card = board.card(node.node_id)
            assert card is not None  # on the top row, the minimap's corner left free
            card.set_rect(card.rect().translated(trip_card.rect().x() + column * step - card.rect().x(),
                                                 trip_card.rect().y() - card.rect().y()))
        board.minimap.update()
        scenes.trigger(window, "fitAllAction")
        await settle(20)
        grab(window, out / "canvas.png", written)
        scenes.trigger(window, "deskAction")
        await settle(4)


async def _branch_map(out: Path, written: list[Path]) -> None:
    async with Stage("branch-map", "Bakery") as stage:
        node = stage.first_node("Name for the bakery")
        q1, q2 = scenes.BAKERY_QUESTIONS
        a1, a2, a3 = scenes.BAKERY_ANSWERS
        await stage.send(node, q1, scenes.turn(a1, 60, 90))
        stage.provider.script(scenes.turn(a2, 60, 95))
        node.versions.regenerate(node.conversation.messages[1].id)
        await stage.finished(node)
        stage.provider.script(scenes.turn(a3, 70, 110))
        node.versions.edit(node.conversation.messages[0].id, q2)
        await stage.finished(node)
        await stage.send(node, scenes.BAKERY_FOLLOW_UP, scenes.turn(scenes.BAKERY_FOLLOW_ANSWER, 240, 150))
        button = node.findChild(QToolButton, "branchesButton")
        assert button is not None
        await wait_until(button.isVisible, what="the Branches button")
        button.click()
        dialog = node.branches.dialog
        assert isinstance(dialog, QDialog)
        await wait_until(dialog.isVisible, what="the branch map")
        dialog.resize(820, 330)
        dialog.tree.expandAll()
        await settle(12)
        grab(dialog, out / "branch-map.png", written)
        dialog.close()


async def _search(out: Path, written: list[Path]) -> None:
    async with Stage("search", "Bakery") as stage:
        window = stage.window
        first = stage.first_node(scenes.SEARCH_NODES[0][0])
        await stage.send(first, scenes.SEARCH_NODES[0][1], scenes.turn(scenes.SEARCH_NODES[0][2], 300, 200))
        nodes = [first] + [stage.seed(title, *texts) for title, *texts in scenes.SEARCH_NODES[1:]]
        window.close_node(nodes[-1])  # a closed node is found too
        window.tile()
        assert window.save_project()
        await wait_until(lambda: window.search.service is not None, what="the search service")
        await wait_until(lambda: window.search.service is not None and window.search.service.wait_idle(0),
                         timeout=30.0, what="the index")
        stage.focus(first)
        window.search.open_panel()
        box = window.findChild(QLineEdit, "searchInput")
        results = window.findChild(QListView, "searchResults")
        assert box is not None and results is not None
        for char in scenes.SEARCH_WORD:  # typed, as the panel searches (QtTest is not in the bundle)
            for kind in (QEvent.Type.KeyPress, QEvent.Type.KeyRelease):
                QApplication.sendEvent(box, QKeyEvent(kind, 0, Qt.KeyboardModifier.NoModifier, char))
        await wait_until(lambda: results.model().rowCount() >= 4, what="the search results")
        await settle(12)
        grab(window, out / "search.png", written)


async def _sidebar(out: Path, written: list[Path]) -> None:
    async with Stage("sidebar", "Home") as stage:
        window = stage.window
        trip = stage.first_node("Trip to Lyon")
        await stage.send(trip, scenes.TRIP_Q, scenes.turn(scenes.TRIP_A, 420, 380))
        code = window.add_node()
        code.set_title("Python: find files")
        await stage.send(code, scenes.CODE_Q, scenes.turn(scenes.CODE_A, 260, 140))
        for title, *texts in scenes.SIDEBAR_OPEN:
            stage.seed(title, *texts)
        for title, *texts in scenes.SIDEBAR_CLOSED:
            window.close_node(stage.seed(title, *texts))
            await settle(2)
        window.tile()
        stage.focus(trip)
        scenes.trigger(window, "sidebarAction")
        await settle(6)
        dock = window.findChild(QDockWidget, "sidebar")
        if dock is not None:  # wide enough for the closed nodes' whole line
            window.resizeDocks([dock], [330], Qt.Orientation.Horizontal)
        window.tile()
        await settle(16)
        grab(window, out / "sidebar-closed.png", written)


async def _import(out: Path, written: list[Path]) -> None:
    async with Stage("import", "Home") as stage:
        window = stage.window
        stage.first_node("New chat")
        export = chatgpt_export(stage.work / "chatgpt-export.zip")
        dialog = window.imports.open(export)
        assert dialog is not None
        await wait_until(lambda: dialog.state != "reading", what="the export's preview")
        dialog.resize(860, 400)
        await settle(12)
        grab(dialog, out / "import.png", written)
        cancel = next((b for b in dialog.findChildren(QPushButton) if b.text().replace("&", "") == "Cancel"),
                      None)
        if cancel is not None:
            cancel.click()
        dialog.close()
        await settle(4)


FEATURE_SHOTS: dict[str, Callable[[Path, list[Path]], Awaitable[None]]] = {
    "attachments.png": _attachments,
    "canvas.png": _canvas,
    "branch-map.png": _branch_map,
    "search.png": _search,
    "sidebar-closed.png": _sidebar,
    "import.png": _import,
}
"""Each feature shot's file name and the scene that renders it."""


async def render_features(out_dir: Path, written: list[Path], only: frozenset[str] | None = None) -> None:
    """Render the feature shots (``only``: just these file names) into ``out_dir``, light scheme, appending
    the files to ``written``."""
    from PySide6.QtWidgets import QApplication

    from desktop.ui.theme import apply_theme

    app = QApplication.instance()
    assert isinstance(app, QApplication)
    for name, scene in FEATURE_SHOTS.items():
        if only is None or name in only:
            apply_theme(app, "light")
            await scene(out_dir, written)
