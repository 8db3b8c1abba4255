"""A node's attachments waiting for its next message: the tray.

Files come in from the paperclip's dialog, a drop or a paste of copied files, images from a paste of
image data. Each becomes a ``Pending`` item at once (its chip shows "reading…"), then a worker
reads and classifies it (``classify``: kind, pixel size, pages, the chip's note or problem) and
decodes a small thumbnail of an image; a pasted image is encoded as PNG there too. At send
``store`` adds every item to the project's ``AttachmentStore`` in a worker (hashing and an atomic
write each, a file stored once however often attached) and hands back the references, in order,
before the node saves the message. Nothing runs on the GUI thread but bookkeeping.
"""

from __future__ import annotations

import itertools
import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from PySide6.QtCore import QObject, Signal
from PySide6.QtGui import QImage

from desktop.core.attachments import (
    AttachmentError,
    AttachmentRef,
    AttachmentStore,
    Classification,
    classify,
    classify_bytes,
)
from desktop.ui.attachments.images import decode_image, encode_image
from desktop.ui.attachments.jobs import run_job

log = logging.getLogger(__name__)

__all__ = ["AttachmentTray", "CHIP_THUMB_SIDE", "MAX_PENDING", "Pending", "StoreFailed"]

#: Chip thumbnails are decoded at most this large (twice their shown size, for dense screens).
CHIP_THUMB_SIDE = 80
#: The most attachments one message takes (a folder's worth dropped by mistake stops here).
MAX_PENDING = 20
_ids = itertools.count(1)


@dataclass(eq=False)
class Pending:
    """One attachment waiting to be sent.

    Attributes:
        id: Its number in the tray.
        name: The file name shown and stored.
        path: The file attached (None for a pasted image).
        data: A pasted image's PNG bytes (once encoded).
        found: What the classifier found (None while it reads).
        thumb: A small picture of an image.
        error: Why it could not be read at all (it cannot be sent).
    """

    id: int
    name: str
    path: Path | None = None
    data: bytes | None = None
    found: Classification | None = None
    thumb: QImage | None = None
    error: str | None = None

    @property
    def ready(self) -> bool:
        """True once it was read (or found unreadable)."""
        return self.found is not None or self.error is not None

    @property
    def is_image(self) -> bool:
        """True for an image the classifier accepted."""
        return self.found is not None and self.found.kind == "image"

    def estimate_ref(self) -> AttachmentRef | None:
        """A provisional reference for the context meter's estimate (None while reading)."""
        f = self.found
        if f is None:
            return None
        return AttachmentRef(self.name, f.media_type, f.size, "0" * 64, f.kind, f.width, f.height, f.pages,
                             f.chip_note)


class StoreFailed(Exception):
    """An attachment could not be stored at send; ``item_id`` names it, the text says why."""

    def __init__(self, item_id: int, message: str) -> None:
        super().__init__(message)
        self.item_id = item_id


def _read_file(path: Path) -> tuple[Classification, QImage | None]:
    found = classify(path)
    thumb = None
    if found.kind == "image" and found.problem is None:
        try:
            thumb = decode_image(path.read_bytes(), CHIP_THUMB_SIDE)
        except OSError as exc:
            log.info("no thumbnail for %s: %s", path.name, exc)
    return found, thumb


def _read_image(image: QImage) -> tuple[bytes, Classification, QImage]:
    data = encode_image(image, "PNG")
    if not data:
        raise AttachmentError("the pasted image could not be encoded as PNG")
    thumb = decode_image(data, CHIP_THUMB_SIDE)
    return data, classify_bytes(data), thumb


def _read_png(data: bytes) -> tuple[bytes, Classification, QImage]:
    return data, classify_bytes(data), decode_image(data, CHIP_THUMB_SIDE)


_Snapshot = tuple[int, str, Path | None, bytes | None]


def _store(store: AttachmentStore, items: Sequence[_Snapshot]) -> list[AttachmentRef]:
    refs: list[AttachmentRef] = []
    for item_id, name, path, data in items:
        try:
            if data is not None:
                refs.append(store.add_bytes(data, name))
            elif path is not None:
                refs.append(store.add_file(path, name))
            else:
                raise AttachmentError("the pasted image was not read")
        except AttachmentError as exc:
            raise StoreFailed(item_id, str(exc)) from None
    return refs


def pasted_name() -> str:
    """The name of a pasted image: ``pasted-20250101-120000.png``."""
    return time.strftime("pasted-%Y%m%d-%H%M%S.png")


class AttachmentTray(QObject):
    """A node's pending attachments (see the module doc).

    Signals:
        changed(): items were added, read, removed or failed (the chips and the meter follow).
    """

    changed = Signal()

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.items: list[Pending] = []
        self.storing = False

    # -- coming in ------------------------------------------------------------------------------

    def add_paths(self, paths: Sequence[Path]) -> int:
        """Attach files (read and classified in a worker); returns how many did not fit
        (``MAX_PENDING``)."""
        room = max(0, MAX_PENDING - len(self.items))
        for path in paths[:room]:
            self._add_file(path)
        if paths[:room]:
            self.changed.emit()
        return max(0, len(paths) - room)

    def _add_file(self, path: Path) -> None:
        item = Pending(next(_ids), path.name or "attachment", path=path)
        self.items.append(item)
        run_job(self, lambda: _read_file(path), lambda r, e: self._on_file(item, r, e))

    def add_image(self, image: QImage) -> int:
        """Attach pasted image data (encoded as PNG in a worker); 1 when it did not fit, else 0."""
        if len(self.items) >= MAX_PENDING:
            return 1
        item = Pending(next(_ids), pasted_name())
        self.items.append(item)
        copy = image.copy()  # the worker gets its own pixels, the clipboard may change meanwhile
        run_job(self, lambda: _read_image(copy), lambda r, e: self._on_bytes(item, r, e))
        self.changed.emit()
        return 0

    def add_png(self, data: bytes) -> int:
        """Attach pasted PNG bytes as they are (a clipboard holding ``image/png`` only); 1 when it
        did not fit, else 0."""
        if len(self.items) >= MAX_PENDING:
            return 1
        item = Pending(next(_ids), pasted_name())
        self.items.append(item)
        run_job(self, lambda: _read_png(data), lambda r, e: self._on_bytes(item, r, e))
        self.changed.emit()
        return 0

    def _on_file(self, item: Pending, result: object, error: BaseException | None) -> None:
        if isinstance(result, tuple):
            item.found, item.thumb = result
        else:
            item.error = str(error) or "the file cannot be read"
        self._done(item)

    def _on_bytes(self, item: Pending, result: object, error: BaseException | None) -> None:
        if isinstance(result, tuple):
            item.data, item.found, item.thumb = result
        else:
            item.error = str(error) or "the image cannot be read"
        self._done(item)

    def _done(self, item: Pending) -> None:
        if item in self.items:
            self.changed.emit()

    # -- the list -------------------------------------------------------------------------------

    def remove(self, item_id: int) -> None:
        """Take an item off (nothing while the tray is being stored)."""
        if self.storing:
            return
        before = len(self.items)
        self.items = [i for i in self.items if i.id != item_id]
        if len(self.items) != before:
            self.changed.emit()

    def remove_last(self) -> bool:
        """Take the last item off; False when there is none."""
        if not self.items or self.storing:
            return False
        self.remove(self.items[-1].id)
        return True

    def drop_images(self) -> None:
        """Take every image off (the text is sent to a model that cannot see them)."""
        self.items = [i for i in self.items if not i.is_image]
        self.changed.emit()

    def all_ready(self) -> bool:
        """True when every item was read."""
        return all(i.ready for i in self.items)

    def images(self) -> int:
        """How many images are attached."""
        return sum(1 for i in self.items if i.is_image)

    def estimate_refs(self) -> list[AttachmentRef]:
        """Provisional references of the items read so far (for the context meter)."""
        return [ref for i in self.items if (ref := i.estimate_ref()) is not None]

    # -- sending --------------------------------------------------------------------------------

    def store(self, store: AttachmentStore,
              done: Callable[[list[AttachmentRef] | None, StoreFailed | None], None]) -> None:
        """Add every item to ``store`` in a worker; ``done(refs, None)`` in order, or ``done(None, failure)``.

        While it runs the items cannot be removed; when it failed the failing item says why.
        """
        self.storing = True
        snapshot = [(i.id, i.name, i.path, i.data) for i in self.items]

        def finished(result: object, error: BaseException | None) -> None:
            self.storing = False
            if isinstance(result, list):
                done(result, None)
                return
            failure = error if isinstance(error, StoreFailed) else StoreFailed(0, str(error))
            for item in self.items:
                if item.id == failure.item_id:
                    item.error = str(failure)
            self.changed.emit()
            done(None, failure)

        run_job(self, lambda: _store(store, snapshot), finished)

    def clear(self) -> None:
        """Take every item off (they were sent)."""
        if self.items:
            self.items = []
            self.changed.emit()
