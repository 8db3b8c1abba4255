"""What a chat node builds right after the window's first paint instead of before it.

The transcript brings the Markdown renderer (markdown-it, Pygments) with it, and listing the models
or finding the MCP hub needs the app's deferred services; a node that only has to accept input needs
none of it yet. :class:`NodeLoading` holds the place of the transcript in the node's layout (a plain
placeholder widget) and builds the transcript on first use, or when the node finishes loading
(:meth:`NodeLoading.finish`, which ``NodeArea.finish_loading`` calls once the app's services are loaded,
and a send calls first). A node built without deferral builds everything at once, as before.

The loader is handed its node as a :class:`LoadingHost` (what it needs of it), not the node's class:
the node's module imports this one.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Protocol

from PySide6.QtWidgets import QVBoxLayout, QWidget

from desktop.ui.node.style import NodeColors, markdown_theme

if TYPE_CHECKING:
    from desktop.ui.transcript.transcript import Transcript

log = logging.getLogger(__name__)

__all__ = ["LoadingHost", "NodeLoading"]


class LoadingHost(Protocol):
    """What :class:`NodeLoading` needs of its node (a ``ChatNodeWidget``)."""

    def is_closed(self) -> bool:
        """True once the node was shut down."""
        ...

    def wire_transcript(self, transcript: Transcript) -> None:
        """Connect the transcript, just built, to the node and show the node's conversation."""
        ...

    def after_loading(self) -> None:
        """What the node does once loaded: its tools get the MCP hub, its models are listed."""
        ...

    def load_services(self) -> None:
        """Load the app's deferred services (nothing when they are loaded)."""
        ...


class NodeLoading:
    """The deferred part of one chat node: its transcript, its MCP hub and its model listing.

    Args:
        node: The node.
        layout: The node's layout, installed on it (the layout's widget, the node, is the
            transcript's parent); the transcript takes the next position in it, with stretch 1.
        deferred: Hold the transcript's place with a placeholder until :meth:`transcript` or
            :meth:`finish` is first called; False builds the transcript now.
    """

    def __init__(self, node: LoadingHost, layout: QVBoxLayout, *, deferred: bool) -> None:
        self._node = node
        self._layout = layout
        widget = layout.parentWidget()
        if widget is None:
            raise ValueError("the layout must be installed on the node")
        self._widget = widget
        self._transcript: Transcript | None = None
        self._placeholder: QWidget | None = None
        self.pending = deferred
        """True until :meth:`finish` ran (a node built with ``deferred``)."""
        if deferred:
            self._placeholder = QWidget(self._widget)
            self._placeholder.setObjectName("transcriptPlaceholder")
            layout.addWidget(self._placeholder, 1)
        else:
            layout.addWidget(self._build(), 1)

    def finish(self) -> None:
        """Build the transcript, give the node's tools the MCP hub and list the models (once; nothing
        for a node that closed meanwhile)."""
        if not self.pending or self._node.is_closed():
            return
        self.pending = False
        self.transcript()
        self._node.after_loading()

    def before_send(self) -> None:
        """A send: load the app's deferred services when they are not yet, then :meth:`finish`."""
        self._node.load_services()
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
            if self._widget.isVisible():
                transcript.show()
        return transcript

    def _build(self) -> Transcript:
        # Here, not at import time: the transcript brings the Markdown renderer (after the first paint).
        from desktop.ui.transcript.transcript import Transcript

        transcript = Transcript(self._widget)
        self._transcript = transcript
        self._node.wire_transcript(transcript)
        return transcript
