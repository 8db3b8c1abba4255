"""Images with Qt's own codecs: decoding (EXIF applied, scaled while decoding), encoding, the
``ImagePreparer`` the core's attachment resolver uses to fit an image to a provider's limits, and
the open project's attachment store and resolver built with it (``project_attachments``).

No widget here and no ``QPixmap``: everything works on ``QImage``, which Qt allows in any thread, so
the callers run these functions in worker threads (the resolver's send-time preparation, the
attachment thumbnails and the image viewer's loading) and turn the result into a pixmap on the GUI
thread. No image library beyond Qt is used (issue 26): PNG, JPEG, WebP and GIF (its first frame).
"""

from __future__ import annotations

import logging
import threading
from collections import OrderedDict
from pathlib import Path

from PySide6.QtCore import QBuffer, QByteArray, QIODevice, QSize, Qt
from PySide6.QtGui import QImage, QImageReader

from desktop.core.attachments import (
    AttachmentResolver,
    AttachmentStore,
    ImageLimits,
    ImagePrepareError,
    PreparedImage,
)

log = logging.getLogger(__name__)

__all__ = ["QtImagePreparer", "decode_image", "encode_image", "project_attachments"]

_JPEG_QUALITIES = (85, 70, 50, 30)
_PROJECTS = 4  # the stores and resolvers kept (their caches of prepared images with them)


def encode_image(image: QImage, fmt: str, quality: int = -1) -> bytes:
    """``image`` encoded as ``fmt`` (``PNG``, ``JPEG``, ``WEBP``); ``b""`` when Qt cannot encode it."""
    data = QByteArray()
    buf = QBuffer(data)
    buf.open(QIODevice.OpenModeFlag.WriteOnly)
    ok = image.save(buf, fmt, quality)  # type: ignore[call-overload]  # PySide6 takes a str here
    buf.close()
    return bytes(data.data()) if ok else b""


def decode_image(data: bytes, max_side: int | None = None) -> QImage:
    """Decode ``data`` (its first frame), EXIF orientation applied.

    Args:
        data: The encoded image.
        max_side: When given, the image is decoded at most this many pixels on its longest side
            (aspect kept, never enlarged): JPEG decodes straight at the smaller size, which is what
            makes a thumbnail of a large photo cheap.

    Returns:
        The image; a null ``QImage`` when ``data`` cannot be decoded (``ImagePrepareError`` is the
        preparer's business, not this function's).
    """
    buf = QBuffer()
    buf.setData(QByteArray(data))
    buf.open(QIODevice.OpenModeFlag.ReadOnly)
    reader = QImageReader(buf)
    reader.setAutoTransform(True)
    if max_side is not None:
        size = reader.size()  # before the EXIF rotation, which does not change the longest side
        longest = max(size.width(), size.height())
        if size.isValid() and longest > max_side:
            scale = max_side / longest
            width, height = max(1, round(size.width() * scale)), max(1, round(size.height() * scale))
            reader.setScaledSize(QSize(width, height))
    image = reader.read()
    if image.isNull():
        log.info("cannot decode an image: %s", reader.errorString())
        return QImage()
    if max_side is not None and max(image.width(), image.height()) > max_side:  # a codec without scaling
        image = image.scaled(max_side, max_side, Qt.AspectRatioMode.KeepAspectRatio,
                             Qt.TransformationMode.SmoothTransformation)
    return image


class QtImagePreparer:
    """The ``ImagePreparer`` of the app: ``QImage`` decoding, smooth scaling, JPEG or PNG encoding.

    Decodes the image's first frame with its EXIF orientation applied, scales it to
    ``limits.fit`` of its oriented size (aspect kept, never up), and encodes it within
    ``limits.max_bytes``: PNG when it has transparency and fits, else JPEG at falling qualities.
    Runs in the resolver's worker thread (``QImage`` is thread-safe to use there).
    """

    def prepare(self, data: bytes, limits: ImageLimits) -> PreparedImage:
        """Return ``data`` fitted to ``limits``.

        Raises:
            ImagePrepareError: It cannot be decoded, or is still too large at the lowest quality.
        """
        image = decode_image(data)
        if image.isNull():
            raise ImagePrepareError("cannot decode the image (damaged, or a format Qt cannot read)")
        width, height = limits.fit(image.width(), image.height())
        if (width, height) != (image.width(), image.height()):
            image = image.scaled(width, height, Qt.AspectRatioMode.IgnoreAspectRatio,
                                 Qt.TransformationMode.SmoothTransformation)
        if image.hasAlphaChannel():
            out = encode_image(image, "PNG")
            if out and len(out) <= limits.max_bytes:
                return PreparedImage(out, "image/png", image.width(), image.height())
        flat = image.convertToFormat(QImage.Format.Format_RGB32)
        for quality in _JPEG_QUALITIES:
            out = encode_image(flat, "JPEG", quality)
            if out and len(out) <= limits.max_bytes:
                return PreparedImage(out, "image/jpeg", image.width(), image.height())
        raise ImagePrepareError(f"still over {limits.max_bytes} bytes at JPEG quality {_JPEG_QUALITIES[-1]}")


_projects: OrderedDict[Path, tuple[AttachmentStore, AttachmentResolver]] = OrderedDict()
_projects_lock = threading.Lock()


def project_attachments(folder: Path | None) -> tuple[AttachmentStore | None, AttachmentResolver | None]:
    """The attachment store of the project ``folder`` and the resolver its sends use (with
    ``QtImagePreparer``), or ``(None, None)`` without a project.

    Made once per folder and kept for the last few, so a resolver's cache of prepared images
    survives from one send to the next and a new project gets its own store.
    """
    if folder is None:
        return None, None
    key = Path(folder)
    with _projects_lock:
        found = _projects.get(key)
        if found is None:
            store = AttachmentStore(key)
            found = _projects[key] = (store, AttachmentResolver(store, QtImagePreparer()))
            while len(_projects) > _PROJECTS:
                _projects.popitem(last=False)
        _projects.move_to_end(key)
    return found
