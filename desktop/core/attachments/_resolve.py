"""At send time: a conversation's attachment references become wire parts, read from the store.

For every user message with references, in order: images and PDF documents first, then text (a
text file's fenced block, a PDF's extracted text, the notes), so a driver puts images before the
user's text as Anthropic recommends. What each reference becomes depends on the provider's API and
on what the model takes (``model_capabilities``; unknown is allowed):

* image: sent as is when it already fits ``image_limits(api)`` (and is not a GIF or a rotated JPEG),
  else downscaled by the ``ImagePreparer`` (kept as a prepared variant, so the next send reuses it);
  for a model known not to take images, a note;
* text: the fenced file (at most ``TEXT_SEND_BYTES``, with a note when cut);
* PDF: a document when the model is known to take PDFs and the file is neither encrypted nor over
  ``NATIVE_PDF_MAX_BYTES``/``NATIVE_PDF_MAX_PAGES``; else its text, pages marked, with a note of what
  was sent; a scanned PDF without a text layer or a locked one: a note;
* other: a note naming the file and why it was not sent.

A missing, damaged or unpreparable file never stops the send: the message goes without that part
and with a note in its place (so the model knows something is missing), and for the newest user
message the driver also tells the user (``ResolvedAttachments.notices``, shown as notes). Refusing
the send instead would leave a node unable to send at all once an old message's file is gone.
"""

from __future__ import annotations

import asyncio
import base64
import logging
import threading
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from desktop.core.chat.attachment_ref import ATTACHMENTS_KEY, AttachmentRef, attachment_entries, format_size
from desktop.core.chat.types import ApiKind, ChatMessage
from desktop.core.usage import ModelCapabilities, model_capabilities

from ._parts import ImageLimits, ImagePart, ImagePreparer, PdfPart, TextPart, WirePart, image_limits
from ._pdf import PdfInfo, describe_pdf_text, extract_pdf_text, inspect_pdf
from ._sniff import IMAGE_TYPES, image_header
from ._store import ATTACHMENTS_DIR, AttachmentStore, AttachmentUnavailable
from ._text import TEXT_SEND_BYTES, decode_text, fenced_file

log = logging.getLogger(__name__)

__all__ = [
    "NATIVE_PDF_MAX_BYTES",
    "NATIVE_PDF_MAX_PAGES",
    "MAX_UNPREPARED_SIDE",
    "AttachmentResolver",
    "AttachmentSource",
    "ResolvedAttachments",
    "has_attachments",
    "unresolved_attachments",
]

#: A PDF larger than this goes as text (Anthropic takes 32 MB per request).
NATIVE_PDF_MAX_BYTES = 32 * 1024 * 1024
#: A PDF with more pages than this goes as text (Anthropic takes 100 pages per request).
NATIVE_PDF_MAX_PAGES = 100
#: Without a preparer, an image over the limits is still sent as is up to this side (providers
#: downscale it themselves; Anthropic rejects sides over 8000 px).
MAX_UNPREPARED_SIDE = 8000
_CACHE_BYTES = 64 * 1024 * 1024
_PREPARED_TYPES = frozenset({"image/png", "image/jpeg", "image/webp"})
_EXT = {"image/png": "png", "image/jpeg": "jpg", "image/webp": "webp"}
_PIXEL_SLACK = 1.01


@dataclass(frozen=True, slots=True)
class ResolvedAttachments:
    """The wire parts of a conversation's attachments.

    Attributes:
        parts: By user message id, the parts to send before that message's text.
        notices: What the user is told about the newest user message's attachments (a file that is
            missing, damaged or could not be prepared), one line each.
    """

    parts: Mapping[str, tuple[WirePart, ...]] = field(default_factory=dict)
    notices: tuple[str, ...] = ()


class AttachmentSource(Protocol):
    """What a driver asks for its request's attachment parts (``AttachmentResolver`` is one)."""

    async def resolve(
        self, messages: Sequence[ChatMessage], *, api: ApiKind, model: str
    ) -> ResolvedAttachments:
        """The parts of ``messages``' attachments for ``model`` through ``api``."""
        ...


def has_attachments(messages: Sequence[ChatMessage]) -> bool:
    """True when a user message carries attachment references (readable or not)."""
    return any(m.role == "user" and m.extra and ATTACHMENTS_KEY in m.extra for m in messages)


def _note(ref: AttachmentRef, verb: str, why: str) -> TextPart:
    return TextPart(f"[Attached file {ref.describe()} {verb}: {why}]")


def _damaged_refs(count: int) -> TextPart:
    return TextPart(f"[{count} attachment{'s' if count != 1 else ''} of this message could not be sent: "
                    "the reference saved in the project is damaged]")


def unresolved_attachments(messages: Sequence[ChatMessage]) -> ResolvedAttachments:
    """Notes in place of every attachment, for a driver that has no store to read them from."""
    parts: dict[str, tuple[WirePart, ...]] = {}
    for m in messages:
        if m.role != "user":
            continue
        refs, bad = attachment_entries(m)
        notes: list[WirePart] = [_note(r, "was not sent", "attachments are not available to this request")
                                 for r in refs]
        if bad:
            notes.append(_damaged_refs(bad))
        if notes:
            parts[m.id] = tuple(notes)
    return ResolvedAttachments(parts)


@dataclass(frozen=True, slots=True)
class _Outcome:
    parts: tuple[WirePart, ...]
    problem: str | None = None  # for the user, when it concerns the newest message
    size: int = 0  # bytes held, for the cache


def _failed(ref: AttachmentRef, why: str, label: str) -> _Outcome:
    return _Outcome((_note(ref, "could not be sent", why),), f"{label} “{ref.name}” was not sent: {why}.")


class AttachmentResolver:
    """Resolves attachment references from a project's store (see the module doc).

    One resolver serves every send of a project; it keeps the parts it made (at most 64 MiB) so the
    requests of a tool loop, which repeat the conversation, do not read and encode the files again.

    Args:
        store: The project's attachment store.
        preparer: Downscales images (the UI's ``QImage`` implementation); None sends images that
            need downscaling as they are when they are within the providers' hard limits.
    """

    def __init__(self, store: AttachmentStore, preparer: ImagePreparer | None = None) -> None:
        self.store = store
        self.preparer = preparer
        self._lock = threading.Lock()
        self._cache: OrderedDict[tuple[str, ...], _Outcome] = OrderedDict()
        self._cached_bytes = 0

    async def resolve(
        self, messages: Sequence[ChatMessage], *, api: ApiKind, model: str
    ) -> ResolvedAttachments:
        """The parts of ``messages``' attachments (file work runs in a worker thread)."""
        if not has_attachments(messages):
            return ResolvedAttachments()
        return await asyncio.to_thread(self.resolve_now, messages, api=api, model=model)

    def resolve_now(
        self, messages: Sequence[ChatMessage], *, api: ApiKind, model: str
    ) -> ResolvedAttachments:
        """``resolve`` in the calling thread (it reads files: not on an event loop's thread)."""
        caps = model_capabilities(model)
        newest = next((m for m in reversed(messages) if m.role == "user"), None)
        parts: dict[str, tuple[WirePart, ...]] = {}
        notices: list[str] = []
        for m in messages:
            if m.role != "user" or not m.extra or ATTACHMENTS_KEY not in m.extra:
                continue
            refs, bad = attachment_entries(m)
            media: list[WirePart] = []
            texts: list[WirePart] = []
            for ref in refs:
                outcome = self._outcome(ref, api, caps, model)
                for part in outcome.parts:
                    (media if isinstance(part, ImagePart | PdfPart) else texts).append(part)
                if outcome.problem is not None and m is newest:
                    notices.append(outcome.problem)
            if bad:
                texts.append(_damaged_refs(bad))
                if m is newest:
                    notices.append(f"{bad} attachment(s) of your message were not sent: their saved "
                                   "reference is damaged")
            parts[m.id] = tuple(media + texts)
        return ResolvedAttachments(parts, tuple(notices))

    # -- one reference --------------------------------------------------------------------------

    def _outcome(self, ref: AttachmentRef, api: ApiKind, caps: ModelCapabilities, model: str) -> _Outcome:
        if ref.kind == "other":
            return _Outcome((_note(ref, "was not sent", ref.note or "this kind of file cannot be sent"),))
        if ref.kind == "image" and caps.vision is False:
            return _Outcome((_note(ref, "was not sent", f"the model {model} does not take images"),))
        mode = self._mode(ref, api, caps)
        key = (ref.sha256, ref.kind, mode, ref.name)
        with self._lock:
            cached = self._cache.get(key)
            if cached is not None:
                self._cache.move_to_end(key)
        if cached is not None:  # still there and unchanged (hashed again only when it changed)
            problem = self.store.check(ref, verify=True)
            return cached if problem is None else self._unavailable(ref, problem)
        try:
            data = self.store.read(ref)
        except AttachmentUnavailable as exc:
            return self._unavailable(ref, exc)
        if ref.kind == "image":
            outcome = self._image(ref, data, image_limits(api))
        elif ref.kind == "text":
            outcome = self._text(ref, data)
        else:
            outcome = self._pdf(ref, data, caps, mode)
        if outcome.problem is None:
            self._remember(key, outcome)
        return outcome

    def _mode(self, ref: AttachmentRef, api: ApiKind, caps: ModelCapabilities) -> str:
        if ref.kind == "image":
            return image_limits(api).tag + ("" if self.preparer is not None else "-raw")
        if ref.kind == "pdf":
            return f"{api}-native" if caps.pdf is True else "text"
        return "text"

    def _remember(self, key: tuple[str, ...], outcome: _Outcome) -> None:
        with self._lock:
            if outcome.size > _CACHE_BYTES:
                return
            old = self._cache.pop(key, None)
            if old is not None:
                self._cached_bytes -= old.size
            self._cache[key] = outcome
            self._cached_bytes += outcome.size
            while self._cached_bytes > _CACHE_BYTES and self._cache:
                _, dropped = self._cache.popitem(last=False)
                self._cached_bytes -= dropped.size

    @staticmethod
    def _unavailable(ref: AttachmentRef, exc: AttachmentUnavailable) -> _Outcome:
        where = (ATTACHMENTS_DIR / ref.file_name).as_posix()
        return _Outcome(
            (_note(ref, "could not be sent", exc.message),),
            f"Attachment “{ref.name}” was not sent: {exc.message} ({where}).",
        )

    def _image(self, ref: AttachmentRef, data: bytes, limits: ImageLimits) -> _Outcome:
        header = image_header(data)
        if header is None or header.media_type not in IMAGE_TYPES:
            why = "the image cannot be read (damaged or not an image)"
            return _failed(ref, why, "Image")
        width, height = header.display_size
        fits = (header.media_type != "image/gif" and header.orientation == 1
                and limits.allows(width, height) and len(data) <= limits.max_bytes)
        if fits:
            return self._image_part(ref, data, header.media_type, width, height)
        if self.preparer is None:
            if len(data) <= limits.max_bytes and max(width, height) <= MAX_UNPREPARED_SIDE:
                log.info("sending %s as is: no image preparer", ref.file_name)
                return self._image_part(ref, data, header.media_type, width, height)
            why = f"it is too large to send without downscaling ({width}×{height}, {format_size(len(data))})"
            return _failed(ref, why, "Image")
        kept = self.store.prepared(ref.sha256, limits.tag)
        if kept is not None:
            checked = _check_prepared(kept[0], limits)
            if checked is not None:
                return self._image_part(ref, kept[0], *checked)
        try:
            prepared = self.preparer.prepare(data, limits)
        except Exception as exc:  # the preparer's failure is a note, never a failed send
            why = f"it could not be downscaled ({str(exc)[:200] or type(exc).__name__})"
            log.warning("image %s: %s", ref.file_name, why)
            return _failed(ref, why, "Image")
        checked = _check_prepared(prepared.data, limits)
        if checked is None:
            why = "its downscaled copy was not a PNG, JPEG or WebP within the provider's limits"
            log.warning("image %s: %s", ref.file_name, why)
            return _failed(ref, why, "Image")
        self.store.put_prepared(ref.sha256, limits.tag, prepared.data, _EXT[checked[0]])
        return self._image_part(ref, prepared.data, *checked)

    @staticmethod
    def _image_part(ref: AttachmentRef, data: bytes, media: str, width: int, height: int) -> _Outcome:
        encoded = base64.b64encode(data).decode("ascii")
        return _Outcome((ImagePart(media, encoded, width, height, ref.name),), size=len(encoded))

    @staticmethod
    def _text(ref: AttachmentRef, data: bytes) -> _Outcome:
        decoded = decode_text(data, TEXT_SEND_BYTES)
        if decoded is None:
            return _Outcome((_note(ref, "was not sent", "it is not UTF-8 text"),))
        text, cut = decoded
        block = fenced_file(ref.name, text, total_size=len(data), cut=cut)
        return _Outcome((TextPart(block),), size=len(block))

    @staticmethod
    def _pdf(ref: AttachmentRef, data: bytes, caps: ModelCapabilities, mode: str) -> _Outcome:
        info = inspect_pdf(data)
        if info.problem is not None:
            return _Outcome((_note(ref, "was not sent", info.problem),))
        if info.locked:
            return _Outcome((_note(ref, "was not sent", "it is encrypted and needs a password"),))
        pages = info.pages
        if mode.endswith("-native"):
            if info.encrypted:
                reason = "It is encrypted, which the provider does not accept, so its text is sent instead."
            elif len(data) > NATIVE_PDF_MAX_BYTES or pages > NATIVE_PDF_MAX_PAGES:
                reason = ("It is larger than a provider takes as a document "
                          f"({format_size(NATIVE_PDF_MAX_BYTES)}, {NATIVE_PDF_MAX_PAGES} pages), "
                          "so its text is sent instead.")
            else:
                encoded = base64.b64encode(data).decode("ascii")
                return _Outcome((PdfPart(encoded, ref.name, pages),), size=len(encoded))
        elif caps.pdf is False:
            reason = "The model does not read PDFs, so its text is sent instead."
        else:
            reason = "The model is not known to read PDFs, so its text is sent instead."
        result = extract_pdf_text(data, TEXT_SEND_BYTES)
        if isinstance(result, PdfInfo):
            why = result.problem or "it is encrypted and needs a password"
            return _Outcome((_note(ref, "was not sent", why),))
        if not result.pages_with_text:
            return _failed(ref, "it has no text layer (a scan) and this model does not read PDFs", "PDF")
        text = describe_pdf_text(ref.name, len(data), result, reason=reason) + "\n\n" + result.text
        return _Outcome((TextPart(text),), size=len(text))


def _check_prepared(data: bytes, limits: ImageLimits) -> tuple[str, int, int] | None:
    """``(media type, width, height)`` of a prepared image that keeps ``limits``, else None."""
    header = image_header(data)
    if header is None or header.media_type not in _PREPARED_TYPES or header.orientation != 1:
        return None
    width, height = header.display_size
    if max(width, height) > limits.max_side or len(data) > limits.max_bytes:
        return None
    if limits.max_pixels and width * height > limits.max_pixels * _PIXEL_SLACK:  # rounding of a scaler
        return None
    return header.media_type, width, height
