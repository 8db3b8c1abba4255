"""What a thumbnail, a file chip and the image viewer show: an ``ImageItem`` or a file, and where its
bytes come from (the project's attachment store, or a tool result's base64), read in a worker.

A stored file is read through ``AttachmentStore.read`` (no links followed, SHA-256 checked), so a
missing or damaged file is found here and shown as a placeholder; it is logged, never raised past
the widget that asked.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import logging
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass

from PySide6.QtGui import QImage

from desktop.core.attachments import AttachmentRef, AttachmentStore, AttachmentUnavailable
from desktop.core.chat.attachment_ref import format_size
from desktop.core.chat.types import MAX_TOOL_IMAGE_BYTES
from desktop.ui.attachments.images import decode_image

log = logging.getLogger(__name__)

__all__ = [
    "THUMB_DECODE_SIDE",
    "ImageItem",
    "Unreadable",
    "cached_thumb",
    "check_file",
    "load_thumb",
    "remember_thumb",
    "store_item",
    "tool_image_items",
]

#: Thumbnails are decoded at most this many pixels on their longest side (twice the largest tile,
#: for high-density screens).
THUMB_DECODE_SIDE = 192
_CACHE_ENTRIES = 128  # ~19 MB at most: 192 × 192 × 4 bytes each
_TOOL_IMAGE_TYPES = {"image/png": "png", "image/jpeg": "jpg", "image/gif": "gif", "image/webp": "webp"}


class Unreadable(Exception):
    """An image or file that cannot be shown; the text says why (for a placeholder's tooltip)."""


@dataclass(frozen=True, slots=True)
class ImageItem:
    """One image a thumbnail and the viewer show.

    Attributes:
        key: What its thumbnail is cached under (the same image gives the same key).
        name: The file name shown (and offered by "Save as…").
        details: One line for the tooltip (type, pixel size, bytes).
        read: Returns its encoded bytes; runs in a worker thread; raises ``Unreadable``.
        check: Says why it can no longer be read (None: fine); runs in a worker thread. A thumbnail
            shown from the cache still asks it (the file may have gone since).
    """

    key: str
    name: str
    details: str
    read: Callable[[], bytes]
    check: Callable[[], str | None] | None = None


def store_item(store: AttachmentStore, ref: AttachmentRef) -> ImageItem:
    """The item of an attached image kept in ``store``."""

    def read() -> bytes:
        try:
            return store.read(ref)
        except AttachmentUnavailable as exc:
            log.warning("attachment %s (%s) cannot be shown: %s", ref.file_name, ref.name, exc.message)
            raise Unreadable(exc.message) from None

    return ImageItem(f"sha:{ref.sha256}", ref.name, ref.describe(), read, lambda: check_file(store, ref))


def check_file(store: AttachmentStore, ref: AttachmentRef) -> str | None:
    """Why ``ref``'s file cannot be used (hashed once per change), or None. Runs in a worker."""
    problem = store.check(ref, verify=True)
    if problem is not None:
        log.warning("attachment %s (%s): %s", ref.file_name, ref.name, problem.message)
        return problem.message
    return None


def tool_image_items(images: object, owner: str) -> list[ImageItem]:
    """The items of a tool result's images (``extra["images"]`` of its ``tool`` message: untrusted).

    Entries that are not ``{"mime": "image/...", "data": <str>}`` are left out; the base64 is
    decoded in the worker, when the thumbnail loads.
    """
    if not isinstance(images, list):
        return []
    items: list[ImageItem] = []
    for index, entry in enumerate(images):
        if not isinstance(entry, dict):
            continue
        mime, data = entry.get("mime"), entry.get("data")
        if not isinstance(mime, str) or not isinstance(data, str) or not mime.startswith("image/"):
            continue
        ext = _TOOL_IMAGE_TYPES.get(mime, "img")
        approx = len(data) * 3 // 4
        digest = hashlib.sha1(f"{owner}:{index}:{len(data)}:{data[:64]}:{data[-64:]}".encode(),
                              usedforsecurity=False).hexdigest()
        items.append(ImageItem(f"tool:{digest}", f"tool-image-{index + 1}.{ext}",
                               f"{mime}, {format_size(approx)}", _decoder(data)))
    return items


def _decoder(data: str) -> Callable[[], bytes]:
    def read() -> bytes:
        if len(data) > MAX_TOOL_IMAGE_BYTES * 4 // 3 + 8:
            raise Unreadable("the image is larger than a tool result may carry")
        try:
            return base64.b64decode(data, validate=True)
        except (binascii.Error, ValueError):
            raise Unreadable("the image data is damaged (not base64)") from None

    return read


_cache: OrderedDict[str, QImage] = OrderedDict()


def cached_thumb(key: str) -> QImage | None:
    """The thumbnail decoded before under ``key`` (GUI thread), or None."""
    image = _cache.get(key)
    if image is not None:
        _cache.move_to_end(key)
    return image


def remember_thumb(key: str, image: QImage) -> None:
    """Keep a decoded thumbnail (GUI thread; the least recently used ones go)."""
    _cache[key] = image
    _cache.move_to_end(key)
    while len(_cache) > _CACHE_ENTRIES:
        _cache.popitem(last=False)


def load_thumb(item: ImageItem) -> QImage:
    """Read and decode ``item``'s thumbnail (a worker thread).

    Raises:
        Unreadable: It cannot be read or decoded.
    """
    image = decode_image(item.read(), THUMB_DECODE_SIDE)
    if image.isNull():
        raise Unreadable("the image cannot be decoded (damaged, or a format Qt cannot read)")
    return image
