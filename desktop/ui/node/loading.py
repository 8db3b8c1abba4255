"""What a chat node builds right after the window's first paint instead of before it.

The transcript brings the Markdown renderer (markdown-it, Pygments) with it, and listing the models
or finding the MCP hub needs the app's deferred services; a node that only has to accept input needs
none of it yet. :class:`NodeLoading` holds the place of the transcript in the node's layout (a plain
placeholder widget) and builds the transcript on first use, or when the node finishes loading
(:meth:`NodeLoading.finish`, which ``NodeArea.finish_loading`` calls once the app's services are loaded,
and a send calls first). A node built without deferral builds everything at once, as before.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QVBoxLayout, QWidget

from desktop.ui.node.style import NodeColors, markdown_theme, node_colors
from desktop.ui.node.tools import hub_of

if TYPE_CHECKING:
    from desktop.ui.node.chat_node import ChatNodeWidget
    from desktop.ui.transcript.transcript import Transcript

log = logging.getLogger(__name__)

__all__ = ["NodeLoading"]


class NodeLoading:
    """The deferred part of one chat node: its transcript, its MCP hub and its model listing.

    Args:
        node: The node (the transcript's parent).
        layout: The node's layout; the transcript takes the next position in it, with stretch 1.
        deferred: Hold the transcript's place with a placeholder until :meth:`transcript` or
            :meth:`finish` is first called; False builds the transcript now.
    """

    def __init__(self, node: ChatNodeWidget, layout: QVBoxLayout, *, deferred: bool) -> None:
        self._node = node
        self._layout = layout
        self._transcript: Transcript | None = None
        self._placeholder: QWidget | None = None
        self.pending = deferred
        """True until :meth:`finish` ran (a node built with ``deferred``)."""
        if deferred:
            self._placeholder = QWidget(node)
            self._placeholder.setObjectName("transcriptPlaceholder")
            layout.addWidget(self._placeholder, 1)
        else:
            layout.addWidget(self._build(), 1)
            node.model_choice.request_models()

    def finish(self) -> None:
        """Build the transcript, give the node's tools the MCP hub and list the models (once; nothing
        for a node that closed meanwhile)."""
        node = self._node
        if not self.pending or node._closed:  # noqa: SLF001
            return
        self.pending = False
        self.transcript()
        node.node_tools.bind_hub(hub_of(node._services))  # noqa: SLF001 - the node's own services
        node.model_choice.request_models()

    def before_send(self) -> None:
        """A send: load the app's deferred services when they are not yet, then :meth:`finish`."""
        load = self._node._services.load_services  # noqa: SLF001
        if load is not None:
            load()
        self.finish()

    def set_colors(self, colors: NodeColors) -> None:
        """The node's colours changed: theme the transcript (a deferred one is themed when built)."""
        if self._transcript is not None:
            self._transcript.set_theme(markdown_theme(colors))

    def flush(self) -> None:
        """Render what the transcript still holds back (nothing when it was never built)."""
        if self._transcript is not None:
            self._transcript.flush()

    def built(self) -> Transcript | None:
        """The transcript when it was built, else None (never builds it)."""
        return self._transcript

    def transcript(self) -> Transcript:
        """The transcript, built now (in the placeholder's place) when it was not yet."""
        if self._transcript is not None:
            return self._transcript
        placeholder, self._placeholder = self._placeholder, None
        transcript = self._build()
        if placeholder is not None:
            self._layout.insertWidget(self._layout.indexOf(placeholder), transcript, 1)
            self._layout.removeWidget(placeholder)
            placeholder.hide()
            placeholder.deleteLater()
            if self._node.isVisible():
                transcript.show()
        return transcript

    def _build(self) -> Transcript:
        from desktop.ui.transcript.transcript import Transcript

        node = self._node
        transcript = Transcript(node)
        self._transcript = transcript
        transcript.meta_text = node._meta_text  # noqa: SLF001 - wiring the node's own transcript
        transcript.decision.connect(node._on_decision)  # noqa: SLF001
        transcript.retry_requested.connect(node.retry)
        transcript.rendered.connect(node._on_rendered)  # noqa: SLF001
        node.versions.connect_transcript(transcript)
        transcript.set_theme(markdown_theme(node_colors(QGuiApplication.palette())))
        transcript.set_conversation(node.conversation)
        return transcript
