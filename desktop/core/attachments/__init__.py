"""Attachments: files a user attaches to a message, stored once in the project, sent per provider.

Qt-free. The pieces, one job each:

- ``_store``: ``AttachmentStore``, the project's content-addressed files
  (``<project>/.chatnodes/attachments/<sha256>.<ext>``, atomic writes, SHA-256 checked on read,
  prepared variants);
- ``_classify``: ``classify`` / ``classify_bytes``, a file's kind and what its chip says;
- ``_sniff``, ``_text``, ``_pdf``: image headers, UTF-8 text and fenced blocks, PDFs with ``pypdf``;
- ``_parts``: the provider-neutral wire parts, ``ImageLimits`` per provider and the
  ``ImagePreparer`` protocol the UI implements with ``QImage``;
- ``_resolve``: ``AttachmentResolver``, which turns a conversation's references into parts at
  send time (the drivers take one: ``driver_for(config, client, attachments=resolver)``);
- ``_estimate``: input tokens of attachments, for the context meter.

A message keeps only references (``desktop.core.chat.attachment_ref``); whether a model takes
images or PDFs is ``desktop.core.usage.model_capabilities``.
"""

from desktop.core.chat.attachment_ref import (
    ATTACHMENTS_KEY,
    AttachmentKind,
    AttachmentRef,
    attachments_of,
    edit_keeping_attachments,
    set_attachments,
)

from ._classify import MAX_IMAGE_PIXELS, Classification, classify, classify_bytes
from ._estimate import estimate_tokens, image_tokens, ref_tokens
from ._files import MAX_ATTACHMENT_BYTES, AttachmentError
from ._parts import (
    ANTHROPIC_IMAGE_LIMITS,
    OPENAI_IMAGE_LIMITS,
    ImageLimits,
    ImagePart,
    ImagePrepareError,
    ImagePreparer,
    PdfPart,
    PreparedImage,
    TextPart,
    WirePart,
    image_limits,
)
from ._resolve import (
    NATIVE_PDF_MAX_BYTES,
    NATIVE_PDF_MAX_PAGES,
    AttachmentResolver,
    AttachmentSource,
    ResolvedAttachments,
    has_attachments,
    unresolved_attachments,
)
from ._store import ATTACHMENTS_DIR, AttachmentStore, AttachmentUnavailable
from ._text import TEXT_SEND_BYTES

__all__ = [
    "ANTHROPIC_IMAGE_LIMITS",
    "ATTACHMENTS_DIR",
    "ATTACHMENTS_KEY",
    "MAX_ATTACHMENT_BYTES",
    "MAX_IMAGE_PIXELS",
    "NATIVE_PDF_MAX_BYTES",
    "NATIVE_PDF_MAX_PAGES",
    "OPENAI_IMAGE_LIMITS",
    "TEXT_SEND_BYTES",
    "AttachmentError",
    "AttachmentKind",
    "AttachmentRef",
    "AttachmentResolver",
    "AttachmentSource",
    "AttachmentStore",
    "AttachmentUnavailable",
    "Classification",
    "ImageLimits",
    "ImagePart",
    "ImagePreparer",
    "ImagePrepareError",
    "PdfPart",
    "PreparedImage",
    "ResolvedAttachments",
    "TextPart",
    "WirePart",
    "attachments_of",
    "classify",
    "classify_bytes",
    "edit_keeping_attachments",
    "estimate_tokens",
    "has_attachments",
    "image_limits",
    "image_tokens",
    "ref_tokens",
    "set_attachments",
    "unresolved_attachments",
]
