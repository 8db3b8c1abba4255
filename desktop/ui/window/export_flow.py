"""File → Export…: the active conversation written as a Markdown file.

:func:`ask_export_path` asks where (a file name from the node's title, in the project folder) and
:func:`export_markdown` writes it (a temp file replaced into place; attachments as links beside it);
a failure is a banner in the window, never an exception in the Qt loop.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtWidgets import QFileDialog, QMainWindow

from desktop.ui.banner import Banner, BannerArea

if TYPE_CHECKING:
    from desktop.ui.node.chat_node import ChatNodeWidget

log = logging.getLogger(__name__)

__all__ = ["ask_export_path", "export_markdown"]


def ask_export_path(window: QMainWindow, node: ChatNodeWidget | None, folder: Path | None) -> Path | None:
    """Ask where to save the conversation of ``node`` as Markdown.

    Args:
        window: The parent of the file dialog (its status bar says when no node is selected).
        node: The node to export, or None (nothing selected).
        folder: Where the dialog starts (the project folder), or None for the home folder.

    Returns:
        The chosen path, or None (no node, or the user cancelled).
    """
    if node is None:
        window.statusBar().showMessage("Select a node to export", 3000)
        return None
    title = (node.to_state().title or "conversation").strip()
    safe = "".join(ch if ch.isalnum() or ch in "-_ ." else "_" for ch in title)[:60] or "conversation"
    start = str((folder or Path.home()) / f"{safe}.md")
    path, _filter = QFileDialog.getSaveFileName(window, "Export conversation", start,
                                                "Markdown (*.md);;All files (*)")
    return Path(path) if path else None


def export_markdown(window: QMainWindow, banners: BannerArea, scrub: Callable[[str], str], path: Path,
                    node: ChatNodeWidget) -> Path | None:
    """Write the conversation of ``node`` as Markdown to ``path``.

    Args:
        window: Its status bar says where the file went.
        banners: Where a failure is shown (``exportErrorBanner``).
        scrub: Removes keys from an error's text.
        path: The Markdown file to write.
        node: The node whose conversation is exported.

    Returns:
        ``path``, or None when the export failed (a banner says why).
    """
    try:
        text = node.export_markdown(export_dir=path.parent)
        tmp = path.with_name(path.name + ".tmp")
        # A lone surrogate that slipped past the drivers must not cost the user the export.
        tmp.write_text(text, encoding="utf-8", errors="replace")
        tmp.replace(path)
    except OSError as exc:
        banners.show_banner(Banner(f"Export failed: {exc.strerror or exc}", kind="error",
                                   object_name="exportErrorBanner"))
        return None
    except Exception as exc:  # noqa: BLE001 - reported in the window, never raised into Qt
        log.exception("export failed")
        banners.show_banner(Banner(f"Export failed: {scrub(str(exc))}", kind="error",
                                   object_name="exportErrorBanner"))
        return None
    window.statusBar().showMessage(f"Exported to {path}", 5000)
    return path
