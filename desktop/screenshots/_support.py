"""What every screenshot scene needs: waiting on the qasync loop, grabbing a widget, and a :class:`Stage`
(a main window on a fresh project whose one provider is a scripted loopback server, no key, no network).
"""

from __future__ import annotations

import asyncio
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QRect
from PySide6.QtWidgets import QWidget

if TYPE_CHECKING:
    from desktop.demo import LoopbackProvider, Turn
    from desktop.ui.node.chat_node import ChatNodeWidget
    from desktop.ui.window.main_window import MainWindow

__all__ = ["MODEL", "STAGE_SIZE", "Stage", "grab", "memory_keyring", "settle", "usage", "visible_child",
           "wait_until"]

STAGE_SIZE = (1600, 1000)
"""The window of the feature shots (the size the issues' closing notes use)."""
MODEL = "gpt-4o"
"""The scripted provider's model: priced, and it sees images and PDFs."""


async def wait_until(condition: Callable[[], bool], timeout: float = 20.0, what: str = "condition") -> None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not condition():
        if loop.time() > deadline:
            raise TimeoutError(f"screenshots: timed out waiting for {what}")
        await asyncio.sleep(0.03)


async def settle(rounds: int = 6) -> None:
    """Let Qt lay out and paint (never ``processEvents`` inside a task: qasync would re-enter tasks)."""
    for _ in range(rounds):
        await asyncio.sleep(0.03)


def visible_child(root: QWidget, name: str) -> QWidget | None:
    for child in root.findChildren(QWidget, name):
        if child.isVisible():
            return child
    return None


def grab(widget: QWidget, path: Path, written: list[Path]) -> None:
    if not widget.grab().save(str(path)):
        raise OSError(f"could not write {path}")
    written.append(path)


def memory_keyring(values: dict[tuple[str, str], str] | None = None) -> Any:
    """An in-memory keyring backend (nothing touches the user's keyring)."""
    import keyring.backend

    class _Memory(keyring.backend.KeyringBackend):
        priority = 1

        def __init__(self) -> None:
            super().__init__()  # type: ignore[no-untyped-call]  # keyring's __init__ is untyped
            self.values = dict(values or {})

        def get_password(self, service: str, username: str) -> str | None:
            return self.values.get((service, username))

        def set_password(self, service: str, username: str, password: str) -> None:
            self.values[(service, username)] = password

        def delete_password(self, service: str, username: str) -> None:
            self.values.pop((service, username), None)

    return _Memory()


class Stage:
    """``async with Stage("name", "Project") as stage``: a shown 1600x1000 window on a new project
    ``Project`` in a temporary folder; its only provider is ``stage.provider``, a
    :class:`~desktop.demo.LoopbackProvider` answering the turns given to :meth:`send` (OpenAI protocol,
    model :data:`MODEL`). Closing shuts the window down
    through its real path and removes the folder."""

    def __init__(self, name: str, project: str) -> None:
        self.name = name
        self.work = Path(tempfile.mkdtemp(prefix=f"chatnodes-shot-{name}-"))
        self.project = self.work / project
        self._provider: LoopbackProvider | None = None
        self._window: MainWindow | None = None

    @property
    def window(self) -> MainWindow:
        assert self._window is not None
        return self._window

    @property
    def provider(self) -> LoopbackProvider:
        assert self._provider is not None
        return self._provider

    async def __aenter__(self) -> Stage:
        from desktop.app import make_context
        from desktop.core.config import SecretStore, SettingsStore, settings_from_dict
        from desktop.demo import LoopbackProvider
        from desktop.ui.window.main_window import MainWindow

        self._provider = LoopbackProvider(models=[MODEL]).start()
        entry = {"id": "openai", "name": "OpenAI", "api": "openai", "base_url": self.provider.openai_base_url,
                 "needs_key": False, "key_env": None, "models": [MODEL]}
        raw = {"version": 1, "providers": [entry], "default_provider": "openai", "default_model": MODEL}
        config = self.work / "config"
        SettingsStore(config).save(settings_from_dict(raw))
        context = make_context(config_dir=config, environ={}, secrets=SecretStore(backend=memory_keyring()))
        window = MainWindow(context)
        self._window = window
        window.resize(*STAGE_SIZE)
        window.open_project(self.project)
        window.show()
        await settle()
        return self

    async def __aexit__(self, *exc_info: type[BaseException] | BaseException | TracebackType | None) -> None:
        try:
            if self._window is not None:
                self._window.close()
                await wait_until(self._window.is_shut_down, timeout=15.0, what="shutdown")
        finally:
            if self._provider is not None:
                self._provider.stop()
            shutil.rmtree(self.work, ignore_errors=True)

    # -- nodes -----------------------------------------------------------------------------------

    def first_node(self, title: str) -> ChatNodeWidget:
        """The project's first node, titled ``title``, its input empty."""
        node = self.window.nodes()[0]
        node.set_title(title)
        node.chat_input.clear()
        return node

    def seed(self, title: str, *texts: str) -> ChatNodeWidget:
        """A new node titled ``title`` holding ``texts`` (user and assistant turns in turn, no request)."""
        from desktop.core.chat.conversation import append_message

        node = self.window.add_node()
        node.set_title(title)
        for i, text in enumerate(texts):
            append_message(node.conversation, "user" if i % 2 == 0 else "assistant", text)
        node.touch()
        node.transcript.set_conversation(node.conversation)
        return node

    async def send(self, node: ChatNodeWidget, text: str, answer: Turn) -> None:
        """Send ``text`` from ``node``; the provider answers ``answer``; wait until the run ended."""
        self.provider.script(answer)
        node.submit(text)
        await self.finished(node)

    async def finished(self, node: ChatNodeWidget) -> None:
        await settle(2)
        await wait_until(lambda: not node.is_busy(), what=f"the answer in {node.title!r}")
        await settle(2)

    def place(self, node: ChatNodeWidget, x: int, y: int, width: int, height: int) -> None:
        self.window.subwindow_of(node).setGeometry(QRect(x, y, width, height))

    def focus(self, node: ChatNodeWidget) -> None:
        self.window.mdi.setActiveSubWindow(self.window.subwindow_of(node))
        node.chat_input.setFocus()


def usage(tokens_in: int, tokens_out: int) -> dict[str, int]:
    """A Turn's usage: ``tokens_in`` uncached input tokens, ``tokens_out`` output tokens."""
    return {"input": tokens_in, "output": tokens_out, "cache_read": 0, "cache_write": 0}
