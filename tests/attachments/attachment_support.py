"""Shared by the attachment tests: the app's ``QImage`` preparer (``desktop.ui.attachments.images``)
counting its calls, JPEGs made with Qt, GIFs, and an EXIF orientation writer."""

from __future__ import annotations

import struct
import threading

from PySide6.QtGui import QColor, QImage

from desktop.core.attachments import ImageLimits, PreparedImage
from desktop.ui.attachments.images import QtImagePreparer, encode_image


def encode(image: QImage, fmt: str, quality: int = -1) -> bytes:
    data = encode_image(image, fmt, quality)
    assert data, fmt
    return data


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


class QtPreparer(QtImagePreparer):
    """The product's ``QtImagePreparer``, counting its calls and the threads it ran on.
    ``scale=False`` asks it for an image within limits that do not bind (a real bug a preparer
    could have: it forgets to downscale; the core must not send its result)."""

    def __init__(self, *, scale: bool = True) -> None:
        self.calls = 0
        self.threads: set[int] = set()
        self.scale = scale

    def prepare(self, data: bytes, limits: ImageLimits) -> PreparedImage:
        self.calls += 1
        self.threads.add(threading.get_ident())
        if not self.scale:
            limits = ImageLimits(1 << 20, None, limits.max_bytes)
        return super().prepare(data, limits)
