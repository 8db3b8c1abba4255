"""Before/after screenshots for issue 25 (the first hour of a new user), taken from the real app.

Usage (under Xvfb, a 1600x1000 screen)::

    xvfb-run -a -s "-screen 0 1600x1000x24" .venv/bin/python shoot.py REPO OUT [LABEL]

``REPO`` is a checkout of Chat Nodes (its ``desktop`` package is imported from there, so the same
script shoots an old commit and the current one); PNGs ``<subject>-<LABEL>.png`` go to ``OUT``
(``LABEL`` defaults to the checkout's short commit). The app is driven as the UI tests drive it: a
window from ``desktop.app.create_main_window`` on a temporary project and config folder, the loopback
``desktop.testing.FakeProvider`` as the only provider (no network, no key), clicks and keys through
``QTest``. Subjects: where a fork lands, closing and reopening a node, the sidebar (Ctrl+B) and the
``write_file`` permission card. Features a checkout does not have are shot as the user met them
(the key pressed or the menu opened, nothing happening).
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

SIZE = (1600, 1000)

TRIP_Q = "Plan a three-day trip to Lyon by train."
TRIP_A = (
    "## Three days in Lyon\n\n"
    "**Day 1: Vieux Lyon and Fourvière**\n\n"
    "- Morning: traboules of the old town\n- Afternoon: funicular up to the basilica\n"
    "- Evening: dinner in a *bouchon*\n\n"
    "**Day 2: Presqu'île and the Confluence**\n\n"
    "- Musée des Beaux-Arts, then Place Bellecour\n- Walk along the Saône to the Confluence museum\n\n"
    "**Day 3: Croix-Rousse**\n\n- Market on the boulevard, the silk workers' slopes, the Mur des Canuts\n"
)
TRIP_Q2 = "And if it rains on day 2?"
TRIP_A2 = "Swap the riverside walk for the **Musée Lumière** and the Halles Paul Bocuse."
OLD_TODO = "# Todo\n- milk\n- report\n- bank\n- bike\n"
NEW_TODO = "# Todo\n- milk and bread\n- report\n- bike\n- train to Lyon\n"


class Shooter:
    """One QApplication and qasync loop; windows opened, driven, shot and closed one after another."""

    def __init__(self, repo: Path, out: Path, label: str) -> None:
        self.repo, self.out, self.label = repo, out, label
        self.tmp = Path(tempfile.mkdtemp(prefix="shots25-"))
        for name in list(os.environ):  # no real key reaches the app
            if name.upper().startswith("CHATNODES_PROVIDER_KEY_") or name.upper().endswith("_API_KEY"):
                del os.environ[name]
        for var, sub in (("CHATNODES_CONFIG_DIR", "cfg"), ("CHATNODES_LOG_DIR", "logs"),
                         ("CHATNODES_DATA_DIR", "data")):
            os.environ[var] = str(self.tmp / sub)
        import keyring

        from desktop.testing.keyring import MemoryKeyring

        keyring.set_keyring(MemoryKeyring())  # never the user's keyring

        import PySide6  # noqa: F401  (the binding before qasync)
        import qasync
        from PySide6.QtWidgets import QApplication

        from desktop.app import track_async_generators
        from desktop.ui import gc_guard
        from desktop.ui.theme import app_icon, apply_theme

        self.app = QApplication.instance() or QApplication([sys.argv[0]])
        self.app.setApplicationName("Chat Nodes")
        self.app.setApplicationDisplayName("Chat Nodes")
        self.app.setWindowIcon(app_icon())
        self.app.setQuitOnLastWindowClosed(False)
        apply_theme(self.app)  # light: the default scheme of a desktop with no preference
        self.collector = gc_guard.GuiThreadCollector(self.app)
        self.gc_guard = gc_guard
        self.loop = qasync.QEventLoop(self.app, already_running=False)
        asyncio.set_event_loop(self.loop)
        track_async_generators(self.loop)
        asyncio.events._set_running_loop(self.loop)  # as the tests do: slots may call get_running_loop()
        self.fake: Any = None
        self.count = 0

    # -- waiting and input ---------------------------------------------------------------------------
    def pump(self, ms: int = 150) -> None:
        end = time.monotonic() + ms / 1000
        while time.monotonic() < end:
            self.app.processEvents()
            time.sleep(0.005)

    def wait(self, cond: Callable[[], Any], what: str, timeout: float = 15.0) -> None:
        end = time.monotonic() + timeout
        while not cond():
            if time.monotonic() > end:
                raise TimeoutError(f"waited {timeout:.0f} s for {what}")
            self.app.processEvents()
            time.sleep(0.005)

    def click(self, widget: Any, pos: Any = None) -> None:
        from PySide6.QtCore import Qt
        from PySide6.QtTest import QTest

        self.wait(widget.isVisible, f"{widget.objectName()} visible")
        if pos is None:
            pos = widget.rect().center()
        QTest.mouseMove(widget, pos)
        self.pump(50)
        QTest.mouseClick(widget, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier, pos)
        self.pump()

    def press(self, keys: str, widget: Any) -> None:
        from PySide6.QtGui import QKeySequence
        from PySide6.QtTest import QTest

        combo = QKeySequence(keys)[0]
        widget.window().activateWindow()
        self.pump(50)
        QTest.keyClick(widget, combo.key(), combo.keyboardModifiers())
        self.pump()

    # -- windows ---------------------------------------------------------------------------------------
    def config(self, name: str) -> Path:
        folder = self.tmp / name / "config"
        try:
            from desktop.core.config import SettingsStore, settings_from_dict
        except ImportError:
            from desktop.core.settings import SettingsStore, settings_from_dict  # before the move
        entry = {"id": "fake", "name": "Fake", "api": "openai", "base_url": self.fake.openai_base_url,
                 "needs_key": False, "key_env": None, "models": ["gpt-4o-mini"]}
        raw = {"version": 1, "providers": [entry], "default_provider": "fake", "default_model": "gpt-4o-mini"}
        SettingsStore(folder).save(settings_from_dict(raw))
        return folder

    def open(self, name: str, setup: Callable[[Path], None] | None = None) -> Any:
        from desktop.app import create_main_window
        from desktop.testing import FakeProvider

        self.fake = FakeProvider()  # a fresh server per window: no turn left over from the last one
        self.fake.__enter__()

        project = self.tmp / name / "project"
        project.mkdir(parents=True)
        if setup is not None:
            setup(project)
        config = self.config(name)
        window = create_main_window(project_dir=project, config_dir=config)
        window.resize(*SIZE)
        window.move(0, 0)
        window.show()
        self.wait(window.isVisible, "the window shown")
        window.activateWindow()
        window.raise_()
        self.wait(lambda: bool(window.nodes()), "a node")
        self.pump(400)
        return window

    def close(self, window: Any) -> None:
        done: list[bool] = []
        window.closed.connect(lambda *_: done.append(True))
        window.close()
        self.wait(lambda: done, "the window's shutdown", timeout=20)
        self.pump(100)
        self.fake.__exit__(None, None, None)

    def send(self, node: Any, text: str) -> None:
        finished: list[Any] = []
        node.run_finished.connect(lambda *a: finished.append(a))
        node.submit(text)
        self.wait(lambda: finished, f"the answer to {text!r}")
        self.pump(200)

    def seed(self, window: Any, title: str, *texts: str) -> Any:
        """A node titled ``title`` holding ``texts`` (user and assistant turns, no request made)."""
        try:
            from desktop.core.chat.conversation import append_message
        except ImportError:
            from desktop.core.chat._appliers import append_message
        node = window.add_node()
        node.set_title(title)
        for i, text in enumerate(texts):
            append_message(node.conversation, "user" if i % 2 == 0 else "assistant", text)
        if hasattr(node, "touch"):
            node.touch()
        node.transcript.set_conversation(node.conversation)
        self.pump(100)
        return node

    def menu_with(self, window: Any, name: str) -> Any:
        """(menu-bar action, menu) of the top menu holding the action named ``name``."""
        from PySide6.QtWidgets import QMenu

        for top in window.menuBar().actions():
            menu = top.menu()
            if isinstance(menu, QMenu) and any(a.objectName() == name for a in menu.actions()):
                return top, menu
        raise LookupError(name)

    def open_menu(self, window: Any, name: str) -> Any:
        top, menu = self.menu_with(window, name)
        window.menuBar().setActiveAction(top)
        self.wait(menu.isVisible, f"the menu holding {name}")
        self.pump(300)
        return menu

    def shut_menu(self, menu: Any) -> None:
        menu.close()
        self.pump(200)

    def shot(self, subject: str, window: Any | None = None) -> None:
        """Save the whole screen (menus and dialogs included) as ``<subject>-<label>.png``."""
        self.pump(400)
        path = self.out / f"{subject}-{self.label}.png"
        screen = self.app.primaryScreen()
        pixmap = screen.grabWindow(0) if window is None else window.grab()
        assert pixmap.save(str(path)), path
        self.count += 1
        print("wrote", path, flush=True)

    def fork_button(self, node: Any, index: int) -> Any:
        from PySide6.QtWidgets import QToolButton

        view = node.transcript.view_for(node.conversation.messages[index].id)
        button = view.findChild(QToolButton, "forkButton")
        assert button is not None, "no fork button"
        return button

    def area(self, window: Any) -> Any:
        return window.mdi.viewport().rect()

    def sub(self, window: Any, node: Any) -> Any:
        return window.subwindow_of(node)

    # -- subjects --------------------------------------------------------------------------------------
    def fork_beside(self) -> None:
        """A node on the left 55 % of the area; its first answer forked."""
        from PySide6.QtCore import QRect

        window = self.open("fork-beside")
        node = window.nodes()[0]
        node.set_title("Trip to Lyon")
        self.fake.script(_turn(TRIP_A), _turn(TRIP_A2))
        self.send(node, TRIP_Q)
        self.send(node, TRIP_Q2)
        area = self.area(window)
        self.sub(window, node).setGeometry(QRect(0, 0, int(area.width() * 0.55), area.height()))
        self.pump(300)
        self.click(self.fork_button(node, 1))
        self.wait(lambda: len(window.nodes()) == 2, "the fork")
        self.shot("fork-placement")
        self.report_geometry(window)
        self.close(window)

    def fork_full(self) -> None:
        """The issue's case: a new project's only node (filling the area when tiled), its answer forked."""
        window = self.open("fork-full")
        node = window.nodes()[0]
        node.set_title("Trip to Lyon")
        self.fake.script(_turn(TRIP_A))
        self.send(node, TRIP_Q)
        self.click(self.fork_button(node, 1))
        self.wait(lambda: len(window.nodes()) == 2, "the fork")
        self.shot("fork-placement-full")
        self.report_geometry(window)
        self.close(window)

    def report_geometry(self, window: Any) -> None:
        area = self.area(window)
        for n in window.nodes():
            g = self.sub(window, n).geometry()
            inside = area.contains(g)
            print(f"  {n.title!r}: {g.x()},{g.y()} {g.width()}x{g.height()} inside={inside} "
                  f"(area {area.width()}x{area.height()})", flush=True)

    def close_reopen(self) -> None:
        """Three nodes tiled; × on one; the sidebar / Node menu; Ctrl+Shift+T."""
        window = self.open("close-reopen")
        first = window.nodes()[0]
        first.set_title("Groceries")
        self.fake.script(_turn("Milk, bread, eggs and **coffee**."), _turn(TRIP_A))
        self.send(first, "What do I need for breakfast this week?")
        trip = window.add_node()
        trip.set_title("Trip to Lyon")
        self.send(trip, TRIP_Q)
        self.seed(window, "Reading list", "Three novels set in Lyon?", "1. *Les Misérables* (partly)\n2. ...")
        _trigger(window, "tileAction")
        self.pump(400)
        self.shot("close-reopen-1-open")
        trip_id = trip.node_id
        self.click_close(window, self.sub(window, trip))
        self.wait(lambda: trip not in window.nodes(), "the node closed")
        window.save_project()
        saved = (self.tmp / "close-reopen" / "project" / "project.json").read_text(encoding="utf-8")
        print(f"  after x: the closed node's id in project.json: {trip_id in saved}", flush=True)
        if len(window.nodes()):
            window.nodes()[0].chat_input.setFocus()
        self.press("Ctrl+B", window.nodes()[0].chat_input)  # the sidebar, when there is one
        self.pump(500)
        self.shot("close-reopen-2-closed")
        menu = self.open_menu(window, "closeNodeAction")
        self.shot("close-reopen-3-node-menu")
        self.shut_menu(menu)
        self.press("Ctrl+Shift+T", window.nodes()[0].chat_input)
        self.pump(600)
        self.shot("close-reopen-4-ctrl-shift-t")
        self.close(window)

    def click_close(self, window: Any, sub: Any) -> None:
        """Click the × in ``sub``'s title bar, where the style draws it (as tests/ui/first_hour_support)."""
        from PySide6.QtCore import QRect
        from PySide6.QtWidgets import QStyle, QStyleOptionTitleBar

        style = sub.style()
        option = QStyleOptionTitleBar()
        option.initFrom(sub)
        option.titleBarFlags = sub.windowFlags()
        option.subControls = QStyle.SubControl.SC_All
        border = style.pixelMetric(QStyle.PixelMetric.PM_MdiSubWindowFrameWidth, None, sub)
        height = style.pixelMetric(QStyle.PixelMetric.PM_TitleBarHeight, option, sub)
        option.rect = QRect(border, border, sub.width() - 2 * border, height)
        rect = style.subControlRect(QStyle.ComplexControl.CC_TitleBar, option,
                                    QStyle.SubControl.SC_TitleBarCloseButton, sub)
        self.click(sub, rect.center())

    def sidebar(self) -> None:
        """Four nodes (two answered, so they cost something), one closed; Ctrl+B; the View menu."""
        window = self.open("sidebar")
        first = window.nodes()[0]
        first.set_title("Trip to Lyon")
        self.fake.script(_turn(TRIP_A), _turn(TRIP_A2), _turn("Use `pathlib.Path.glob('**/*.py')`."))
        self.send(first, TRIP_Q)
        self.send(first, TRIP_Q2)
        code = window.add_node()
        code.set_title("Python: find files")
        self.send(code, "How do I list every .py file under a folder?")
        self.seed(window, "Reading list", "Three novels set in Lyon?", "1. *Les Misérables* (partly)\n2. ...")
        gone = self.seed(window, "Old draft", "Draft a note to the landlord.", "Dear Mr Martin, ...")
        window.close_node(gone)
        self.pump(200)
        _trigger(window, "tileAction")
        self.pump(300)
        self.press("Ctrl+B", window.nodes()[0].chat_input)
        self.pump(800)
        self.shot("sidebar")
        menu = self.open_menu(window, "tileAction")
        self.shot("sidebar-view-menu")
        self.shut_menu(menu)
        self.close(window)

    def write_card(self) -> None:
        """The model asks to overwrite todo.md; in a second window, to write a new file."""
        def with_todo(project: Path) -> None:
            (project / "todo.md").write_text(OLD_TODO, encoding="utf-8")

        self.write_one("write-card-overwrite", "Todo", "todo.md", NEW_TODO, with_todo,
                       "Update my todo list: bread with the milk, the bank is done, add the train to Lyon.")
        self.write_one("write-card-new-file", "Trip notes", "notes/lyon.md",
                       'Trip: "Lyon, 3 days" — budget under $600\n'
                       "\tDay 1: Vieux Lyon\n\tDay 2: Presqu'île\n",
                       None, "Save the trip plan as notes/lyon.md")

    def write_one(self, subject: str, title: str, path: str, content: str,
                  setup: Callable[[Path], None] | None, prompt: str) -> None:
        from PySide6.QtWidgets import QPushButton

        from desktop.testing import ToolCallSpec, Turn

        window = self.open(subject, setup)
        node = window.nodes()[0]
        node.set_title(title)
        call = ToolCallSpec("write_file", {"path": path, "content": content})
        self.fake.script(Turn(tool_calls=[call]), Turn(text="Saved."))
        node.submit(prompt)
        self.wait(lambda: bool(node.transcript.pending_permission_cards()), "the permission card")
        self.pump(600)
        self.shot(subject)
        finished: list[Any] = []
        node.run_finished.connect(lambda *a: finished.append(a))
        card = node.transcript.pending_permission_cards()[0].permission
        card.findChild(QPushButton, "denyButton").click()  # nothing is written
        self.wait(lambda: finished, "the denied run's end")
        self.close(window)

    def finish(self) -> None:
        pending = [t for t in asyncio.all_tasks(self.loop) if not t.done()]
        for task in pending:
            task.cancel()
        end = time.monotonic() + 10
        while any(not t.done() for t in pending) and time.monotonic() < end:
            self.app.processEvents()
        closing = self.loop.create_task(self.loop.shutdown_asyncgens())
        while not closing.done() and time.monotonic() < end:
            self.app.processEvents()
        self.collector.stop()


def _turn(text: str) -> Any:
    from desktop.testing import Turn

    return Turn(text=text)


def _trigger(window: Any, name: str) -> None:
    from PySide6.QtGui import QAction

    for action in window.findChildren(QAction):
        if action.objectName() == name:
            action.trigger()
            return
    raise LookupError(name)


def main() -> int:
    if len(sys.argv) not in (3, 4):
        print(__doc__, file=sys.stderr)
        return 2
    repo, out = Path(sys.argv[1]).resolve(), Path(sys.argv[2]).resolve()
    label = sys.argv[3] if len(sys.argv) == 4 else subprocess.run(
        ["git", "-C", str(repo), "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
        check=True).stdout.strip()
    sys.path.insert(0, str(repo))
    import desktop

    if not Path(desktop.__file__).resolve().is_relative_to(repo):
        raise SystemExit(f"desktop was imported from {desktop.__file__}, not from {repo}")
    print("desktop from", desktop.__file__, flush=True)
    out.mkdir(parents=True, exist_ok=True)
    shooter = Shooter(repo, out, label)
    only = os.environ.get("SHOTS_ONLY", "").split(",") if os.environ.get("SHOTS_ONLY") else None
    subjects = {"fork": [shooter.fork_beside, shooter.fork_full], "close": [shooter.close_reopen],
                "sidebar": [shooter.sidebar], "write": [shooter.write_card]}
    for key, steps in subjects.items():
        if only is None or key in only:
            for step in steps:
                step()
    shooter.finish()
    print(f"{shooter.count} screenshots in {out}", flush=True)
    sys.stdout.flush()
    os._exit(0)  # skip interpreter teardown: Qt objects freed in arbitrary order can crash it


if __name__ == "__main__":
    sys.exit(main())
