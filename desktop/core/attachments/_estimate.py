"""Input tokens an attachment will cost, estimated before the send (for the context meter).

The provider's reported usage replaces these estimates once the answer comes; they only have to
be close enough to warn before a send that would not fit.

* Images, Anthropic (vision guide): ``width × height / 750`` after the image is fitted to
  ``ANTHROPIC_IMAGE_LIMITS`` (1568 px, 1.15 MP: at most ~1,534 tokens).
* Images, OpenAI-compatible (GPT-4o-class ``detail: high``, the default for large images): fit into
  2048 × 2048, scale the short side down to 768, then 85 + 170 per 512-px tile (1024² → 765).
  Newer small models count 32-px patches instead: an estimate either way.
* PDFs sent as documents: every page is text plus a page image (Anthropic ~2,250 tokens a page,
  OpenAI ~1,265); PDFs sent as text: ~500 tokens a page, at most the text limit.
* Text files: one token per ~4 bytes of what is sent (at most ``TEXT_SEND_BYTES``).
* What cannot be sent: its one-line note.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from desktop.core.chat.attachment_ref import AttachmentRef
from desktop.core.chat.types import ApiKind
from desktop.core.usage import ModelCapabilities, model_capabilities

from ._parts import ANTHROPIC_IMAGE_LIMITS
from ._text import TEXT_SEND_BYTES

__all__ = ["BYTES_PER_TOKEN", "NOTE_TOKENS", "estimate_tokens", "image_tokens", "ref_tokens"]

#: Bytes of text per token, roughly (English prose and code).
BYTES_PER_TOKEN = 4
#: Tokens of a one-line note (a file that was not sent, a heading).
NOTE_TOKENS = 30
_PDF_PAGE_NATIVE = {"anthropic": 2_250, "openai": 1_265}
_PDF_PAGE_TEXT = 500
_NATIVE_PDF_MAX_PAGES = 100


def image_tokens(width: int, height: int, api: ApiKind) -> int:
    """Estimated input tokens of one image of ``width`` × ``height`` pixels (see the module doc)."""
    if width <= 0 or height <= 0:
        return NOTE_TOKENS
    if api == "anthropic":
        w, h = ANTHROPIC_IMAGE_LIMITS.fit(width, height)
        return max(1, math.ceil(w * h / 750))
    scale = min(1.0, 2048 / max(width, height))
    fw, fh = width * scale, height * scale
    short = min(fw, fh)
    if short > 768:
        fw, fh = fw * 768 / short, fh * 768 / short
    tiles = math.ceil(fw / 512) * math.ceil(fh / 512)
    return 85 + 170 * tiles


def ref_tokens(ref: AttachmentRef, *, api: ApiKind, caps: ModelCapabilities | None = None) -> int:
    """Estimated input tokens of one attachment sent to a model with ``caps`` (unknown: allowed)."""
    caps = caps or ModelCapabilities()
    if ref.kind == "image":
        if caps.vision is False or not (ref.width and ref.height):
            return NOTE_TOKENS
        return image_tokens(ref.width, ref.height, api)
    if ref.kind == "text":
        return NOTE_TOKENS + math.ceil(min(ref.size, TEXT_SEND_BYTES) / BYTES_PER_TOKEN)
    if ref.kind == "pdf":
        pages = ref.pages or 1
        if caps.pdf is True and pages <= _NATIVE_PDF_MAX_PAGES:
            return NOTE_TOKENS + pages * _PDF_PAGE_NATIVE[api]
        return NOTE_TOKENS + min(pages * _PDF_PAGE_TEXT, TEXT_SEND_BYTES // BYTES_PER_TOKEN)
    return NOTE_TOKENS


def estimate_tokens(refs: Sequence[AttachmentRef], *, api: ApiKind, model: str | None = None) -> int:
    """Estimated input tokens of ``refs`` sent to ``model`` through ``api`` (the context meter adds
    it to the conversation's last reported usage before a send)."""
    caps = model_capabilities(model)
    return sum(ref_tokens(ref, api=api, caps=caps) for ref in refs)
