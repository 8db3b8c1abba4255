"""Files inside an export zip attached to the imported messages that point at them.

A ChatGPT export names an uploaded image in a message part (``image_asset_pointer``:
``file-service://file-<id>`` or ``sediment://file_<id>``) and holds the file at the zip's root or
under ``dalle-generations/``, named ``file-<id>-<original name>`` (older exports) or ``<id>.dat``
(newer ones); a Claude image block names its ``file_uuid`` (Claude's exports hold no files today; a
zip that does is served the same way). The converters write a placeholder in the text
(``[image: name — not imported]``) and the pointer in ``extra["imported"]["assets"]``;
:class:`ZipAssets` finds each pointed-at file in the zip, stores it once in the project's attachment
store (``AttachmentStore.add_bytes``, like a pasted image) and puts the reference on the message
(``extra["attachments"]``), dropping the placeholder. The placeholder stays when the file is not in
the zip, is over ``MAX_ATTACHMENT_BYTES``, cannot be read (a bad CRC, a broken member) or cannot be
stored, and on messages that are not the user's (only a user message shows attachments).
"""

from __future__ import annotations

import logging
import re
import zipfile
import zlib
from pathlib import Path

from desktop.core.attachments import MAX_ATTACHMENT_BYTES, AttachmentError, AttachmentRef, AttachmentStore
from desktop.core.chat.attachment_ref import attachments_of, set_attachments
from desktop.core.chat.types import ChatMessage

from ._common import IMPORTED_KEY, file_placeholder, image_placeholder
from ._model import ParsedConversation

__all__ = ["ZipAssets", "asset_id"]

log = logging.getLogger(__name__)

_FILE_ID = re.compile(r"(file[-_][A-Za-z0-9]+)")
_BLANKS = re.compile(r"\n{3,}")


def asset_id(pointer: str) -> str:
    """The file id of an asset pointer (``file-service://file-abc`` → ``file-abc``)."""
    return pointer.split("://", 1)[1] if "://" in pointer else pointer


class ZipAssets:
    """The files of one export zip, found by asset id and stored in a project's attachments.

    Args:
        export: The export (a zip; anything else has no files and attaches nothing).
        store: The project's attachment store.
    """

    def __init__(self, export: Path, store: AttachmentStore) -> None:
        self._store = store
        self._zip: zipfile.ZipFile | None = None
        self._index: dict[str, zipfile.ZipInfo] = {}
        self._refs: dict[str, AttachmentRef | None] = {}
        self.attached = 0
        self.missing = 0
        if zipfile.is_zipfile(export):
            try:
                self._zip = zipfile.ZipFile(export)
            except (OSError, zipfile.BadZipFile) as exc:
                log.warning("the files of %s cannot be read: %s", export, exc)
                return
            for info in self._zip.infolist():
                if info.is_dir():
                    continue
                base = info.filename.rsplit("/", 1)[-1]
                for key in (base, base.split(".", 1)[0], *_FILE_ID.findall(base)[:1]):
                    self._index.setdefault(key, info)

    def close(self) -> None:
        """Close the zip."""
        if self._zip is not None:
            self._zip.close()
            self._zip = None

    def __enter__(self) -> ZipAssets:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _ref(self, pointer: str, name: str) -> AttachmentRef | None:
        key = asset_id(pointer)
        if key in self._refs:
            return self._refs[key]
        ref: AttachmentRef | None = None
        info = self._index.get(key) if key else None
        if info is not None and self._zip is not None and info.file_size <= MAX_ATTACHMENT_BYTES:
            try:
                with self._zip.open(info) as fh:
                    data = fh.read(MAX_ATTACHMENT_BYTES + 1)
                if len(data) <= MAX_ATTACHMENT_BYTES:
                    ref = self._store.add_bytes(data, name or info.filename.rsplit("/", 1)[-1])
            except (OSError, zipfile.BadZipFile, zlib.error, EOFError, AttachmentError) as exc:
                log.warning("the file %s of the export cannot be imported: %s", info.filename, exc)
        self._refs[key] = ref
        return ref

    def attach(self, parsed: ParsedConversation) -> None:
        """Attach the files the user messages of ``parsed`` point at (see the module doc)."""
        for node in parsed.nodes:
            if node.message.role == "user":
                self._attach_message(node.message)

    def _attach_message(self, msg: ChatMessage) -> None:
        marker = msg.extra.get(IMPORTED_KEY)
        assets = marker.get("assets") if isinstance(marker, dict) else None
        if not isinstance(assets, list):
            return
        refs = attachments_of(msg)
        text = msg.content
        for asset in assets:
            if not isinstance(asset, dict) or not isinstance(asset.get("pointer"), str):
                continue
            name = asset.get("name") if isinstance(asset.get("name"), str) else ""
            assert isinstance(name, str)
            ref = self._ref(asset["pointer"], name)
            if ref is None:
                self.missing += 1
                continue
            placeholder = image_placeholder(name) if asset.get("kind") == "image" else file_placeholder(name)
            text = text.replace(placeholder, "", 1)
            asset["attached"] = ref.sha256
            refs.append(ref)
            self.attached += 1
        if refs:
            msg.content = _BLANKS.sub("\n\n", text).strip()
            set_attachments(msg, refs)

