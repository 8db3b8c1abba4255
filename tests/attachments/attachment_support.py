"""Shared by the attachment tests: a real ``ImagePreparer`` built on ``QImage`` (what the UI will
provide; the core only defines the protocol), JPEGs made with Qt, and an EXIF orientation writer."""

from __future__ import annotations

import struct
import threading

from PySide6.QtCore import QBuffer, QByteArray, QIODevice, Qt
from PySide6.QtGui import QColor, QImage, QImageReader

from desktop.core.attachments import ImageLimits, ImagePrepareError, PreparedImage


def encode(image: QImage, fmt: str, quality: int = -1) -> bytes:
    data = QByteArray()
    buf = QBuffer(data)
    buf.open(QIODevice.OpenModeFlag.WriteOnly)
    assert image.save(buf, fmt, quality), fmt
    buf.close()
    return bytes(data.data())


def make_jpeg(width: int, height: int, colour: str = "#3366cc", quality: int = 90) -> bytes:
    """A real JPEG: a colour with a white band on the left third (to see a rotation)."""
    image = QImage(width, height, QImage.Format.Format_RGB32)
    image.fill(QColor(colour))
    for y in range(height):
        for x in range(0, max(1, width // 3), max(1, width // 60)):
            image.setPixelColor(x, y, QColor("white"))
    return encode(image, "JPEG", quality)


def _lzw_single_colour(index: int, count: int) -> bytes:
    """LZW data (minimum code size 2) of ``count`` pixels of palette ``index``: a clear code every
    two pixels keeps the code width at 3 bits, so no dictionary is needed."""
    codes: list[int] = []
    for start in range(0, count, 2):
        codes.append(4)  # clear
        codes += [index] * min(2, count - start)
    codes.append(5)  # end of information
    bits = 0
    nbits = 0
    out = bytearray()
    for code in codes:
        bits |= code << nbits
        nbits += 3
        while nbits >= 8:
            out.append(bits & 0xFF)
            bits >>= 8
            nbits -= 8
    if nbits:
        out.append(bits & 0xFF)
    blocks = b"".join(bytes([len(out[i:i + 255])]) + bytes(out[i:i + 255]) for i in range(0, len(out), 255))
    return b"\x02" + blocks + b"\x00"


def make_gif(width: int, height: int, frames: int = 1) -> bytes:
    """A GIF89a whose frame ``n`` is all palette colour ``n`` (red, green, blue, white)."""
    palette = b"\xff\x00\x00" + b"\x00\xff\x00" + b"\x00\x00\xff" + b"\xff\xff\xff"
    out = b"GIF89a" + struct.pack("<HH", width, height) + b"\x81\x00\x00" + palette
    for n in range(frames):
        out += b"\x21\xf9\x04\x00\x0a\x00\x00\x00"  # graphic control: 0.1 s delay
        out += b"\x2c" + struct.pack("<HHHH", 0, 0, width, height) + b"\x00"
        out += _lzw_single_colour(n % 4, width * height)
    return out + b"\x3b"


def with_exif_orientation(jpeg: bytes, orientation: int) -> bytes:
    """``jpeg`` with an APP1 EXIF segment (little-endian TIFF, IFD0 = one Orientation tag)."""
    tiff = b"II*\x00" + struct.pack("<I", 8) + struct.pack("<H", 1)
    tiff += struct.pack("<HHIHH", 0x0112, 3, 1, orientation, 0) + struct.pack("<I", 0)
    payload = b"Exif\x00\x00" + tiff
    segment = b"\xff\xe1" + struct.pack(">H", len(payload) + 2) + payload
    assert jpeg[:2] == b"\xff\xd8"
    return jpeg[:2] + segment + jpeg[2:]


class QtPreparer:
    """An ``ImagePreparer`` with ``QImage``: EXIF applied, smooth scaling, JPEG (or PNG with alpha)
    within the byte limit. Counts its calls and the threads it ran on. ``scale=False`` leaves out
    the downscaling (a real bug a preparer could have: the core must not send its result)."""

    def __init__(self, *, scale: bool = True) -> None:
        self.calls = 0
        self.threads: set[int] = set()
        self.scale = scale

    def prepare(self, data: bytes, limits: ImageLimits) -> PreparedImage:
        self.calls += 1
        self.threads.add(threading.get_ident())
        raw = QByteArray(data)
        buf = QBuffer(raw)
        buf.open(QIODevice.OpenModeFlag.ReadOnly)
        reader = QImageReader(buf)
        reader.setAutoTransform(True)
        image = reader.read()
        if image.isNull():
            raise ImagePrepareError(f"cannot decode: {reader.errorString()}")
        width, height = limits.fit(image.width(), image.height())
        if self.scale and (width, height) != (image.width(), image.height()):
            image = image.scaled(width, height, Qt.AspectRatioMode.IgnoreAspectRatio,
                                 Qt.TransformationMode.SmoothTransformation)
        if image.hasAlphaChannel():
            out = encode(image, "PNG")
            if len(out) <= limits.max_bytes:
                return PreparedImage(out, "image/png", image.width(), image.height())
        for quality in (85, 70, 50, 30):
            out = encode(image.convertToFormat(QImage.Format.Format_RGB32), "JPEG", quality)
            if len(out) <= limits.max_bytes:
                return PreparedImage(out, "image/jpeg", image.width(), image.height())
        raise ImagePrepareError("still too large at quality 30")
