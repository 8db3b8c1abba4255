"""Streaming an export's conversations, one at a time, with bounded memory.

The conversation files are read with ``ijson`` (its C backend): only one conversation is held in
memory at a time, so a 500 MB export imports in the memory of its largest conversation. Each file
is a JSON array of conversations (ChatGPT: objects with ``mapping``; Claude: objects with
``chat_messages``), or an object: a Chat Nodes export (``{"format": "chatnodes-export", ...}``,
read node by node) or one single ChatGPT or Claude conversation.

``read_export`` yields, in file order, a ``ParsedConversation`` or a ``NativeNode`` per item, or an
``ImportProblem`` naming the conversation (or the place in the file) that could not be read. Bad
JSON ends that file with a problem saying where; what came before it is whole and usable.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

import ijson

from ._chatgpt import chatgpt_id, parse_chatgpt
from ._claude import parse_claude
from ._common import ConversationFormatError, text_of, title_of
from ._model import ExportFormat, ImportCancelled, ImportFailed, ImportProblem, ParsedConversation
from ._native import NATIVE_FORMAT, NativeNode, check_native_header, parse_native_node
from ._source import ExportFiles, LimitedReader, Limits, Member, open_export_files

__all__ = ["ExportItem", "ExportStream", "read_export"]

log = logging.getLogger(__name__)

ExportItem = ParsedConversation | NativeNode | ImportProblem


def _json_error(exc: Exception) -> str:
    raw = exc.args[0] if exc.args else str(exc)
    text = raw.decode("utf-8", "replace") if isinstance(raw, bytes) else str(raw)
    return (text.strip().splitlines() or ["invalid JSON"])[0]


def _describe(obj: object, index: int) -> str:
    """How a message names a conversation: ``conversation 3 'Trip plans' (id abc)``."""
    if not isinstance(obj, dict) or not ({"title", "name"} & obj.keys()):
        return f"conversation {index + 1}"
    if "chat_messages" in obj:
        title, cid = obj.get("name"), text_of(obj.get("uuid"))
    else:
        title, cid = obj.get("title"), chatgpt_id(obj) if "mapping" in obj else text_of(obj.get("id"))
    head = f"conversation {index + 1} '{title_of(title)}'"
    return f"{head} (id {cid})" if cid else head


@dataclass(slots=True)
class ExportStream:
    """What the reader found out while reading (filled as it goes).

    Attributes:
        format: The export's kind, once the first item was read (``empty`` for no conversation).
        notices: Things to tell the user that did not stop the import.
        bytes_read: Bytes read so far (uncompressed).
        bytes_total: Bytes to read in all, or None.
        items: Items read so far.
    """

    format: ExportFormat | None = None
    notices: list[str] = field(default_factory=list)
    bytes_read: int = 0
    bytes_total: int | None = None
    items: int = 0


def read_export(
    path: Path,
    *,
    stream: ExportStream | None = None,
    limits: Limits | None = None,
    cancelled: Callable[[], bool] | None = None,
    on_item: Callable[[ExportStream, str], None] | None = None,
) -> Iterator[ExportItem]:
    """Yield every conversation of an export, converted, one at a time.

    Args:
        path: A ChatGPT or Claude export (``.zip``, unzipped folder or ``conversations.json``) or a
            Chat Nodes export (``.json``).
        stream: Filled with the format, notices and byte counts as the reading goes.
        limits: Size caps (zip bombs, huge files).
        cancelled: Polled between items; True stops with ``ImportCancelled``.
        on_item: Called after each item with the stream and the item's title (progress).

    Raises:
        ImportFailed: The export as a whole cannot be read (the message names the file or field).
        ImportCancelled: ``cancelled()`` returned True.
    """
    state = stream if stream is not None else ExportStream()
    limits = limits or Limits()
    with open_export_files(path, limits) as files:
        state.notices.extend(files.notices)
        state.bytes_total = files.total
        for name, message in files.problems:
            yield ImportProblem(name, message)
        budget = [limits.max_uncompressed]
        for member in files.members:
            yield from _read_member(member, files, state, budget, cancelled, on_item)
        if state.format is None:
            state.format = "empty"


def _on_read(state: ExportStream) -> Callable[[int], None]:
    def update(n: int) -> None:
        state.bytes_read = n
    return update


def _read_member(member: Member, files: ExportFiles, state: ExportStream, budget: list[int],
                 cancelled: Callable[[], bool] | None,
                 on_item: Callable[[ExportStream, str], None] | None) -> Iterator[ExportItem]:
    start = state.bytes_read
    first = _open(member, budget, state, start)
    try:
        head = _first_byte(first)
    finally:
        first.close()
    if head == b"[":
        reader = _open(member, budget, state, start)
        yield from _items(reader, member, "item", state, cancelled, on_item, _convert_conversation)
    elif head == b"{":
        kind, detail = _object_kind(member, budget, state, start)
        if kind == "chatnodes":
            state.format = state.format or "chatnodes"
            reader = _open(member, budget, state, start)
            yield from _items(reader, member, "nodes.item", state, cancelled, on_item, _convert_native)
        elif kind in ("chatgpt", "claude"):
            reader = _open(member, budget, state, start)
            yield from _items(reader, member, "", state, cancelled, on_item, _convert_conversation)
        else:
            raise ImportFailed(f"{member.name}: {detail}")
    elif head == b"":
        raise ImportFailed(f"{member.name}: the file is empty")
    else:
        raise ImportFailed(f"{member.name}: not JSON (it starts with {head!r}); expected a ChatGPT or Claude "
                           "export (.zip or conversations.json) or a Chat Nodes export")


class _Opened:
    """A member opened through a ``LimitedReader`` (closes both)."""

    def __init__(self, raw: IO[bytes], reader: LimitedReader) -> None:
        self.raw = raw
        self.reader = reader

    def close(self) -> None:
        try:
            self.raw.close()
        except Exception as exc:  # noqa: BLE001 - closing a broken zip member may raise anything
            log.debug("closing an export member: %s", exc)


def _open(member: Member, budget: list[int], state: ExportStream, start: int) -> _Opened:
    try:
        raw = member.open()
    except (OSError, RuntimeError, NotImplementedError, ValueError, EOFError) as exc:
        raise ImportFailed(f"{member.name}: cannot be read ({exc})") from None
    # Detection re-reads the start of a member: only the real pass may use the shared budget.
    return _Opened(raw, LimitedReader(raw, member.name, member.size, budget, _on_read(state), start))


def _first_byte(opened: _Opened) -> bytes:
    probe = LimitedReader(opened.raw, "", None, [1 << 62])
    data = b""
    while True:
        chunk = probe.read(4096)
        if not chunk:
            return b""
        data = chunk.lstrip()
        if data:
            return data[:1]


def _object_kind(member: Member, budget: list[int], state: ExportStream, start: int) -> tuple[str, str]:
    """What a top-level object is: ``chatnodes`` (header checked), ``chatgpt``, ``claude`` or ``unknown``."""
    opened = _open(member, [1 << 62], state, start)
    keys: list[str] = []
    header: dict[str, Any] = {}
    try:
        probe = LimitedReader(opened.raw, member.name, member.size, [1 << 62])
        for prefix, event, value in ijson.parse(probe):
            if prefix == "" and event == "map_key":
                keys.append(value)
                if value in ("mapping", "chat_messages", "nodes") or len(keys) > 64:
                    break
            elif prefix in ("format", "version") and event in ("string", "number", "boolean", "null"):
                header[prefix] = value
    except ijson.JSONError as exc:
        raise ImportFailed(f"{member.name}: invalid JSON: {_json_error(exc)}") from None
    finally:
        opened.close()
        state.bytes_read = start
    if header.get("format") == NATIVE_FORMAT or "format" in header:
        check_native_header(header, member.name)
        return "chatnodes", ""
    if "mapping" in keys:
        return "chatgpt", ""
    if "chat_messages" in keys:
        return "claude", ""
    shown = ", ".join(repr(k) for k in keys[:8]) or "no keys"
    return "unknown", (f"a JSON object with {shown}: not a ChatGPT or Claude conversation, nor a Chat Nodes "
                       "export")


def _convert_conversation(obj: object, index: int, state: ExportStream) -> ExportItem:
    where = _describe(obj, index)
    if isinstance(obj, dict) and "mapping" in obj:
        kind: ExportFormat = "chatgpt"
    elif isinstance(obj, dict) and "chat_messages" in obj:
        kind = "claude"
    elif isinstance(obj, dict) and state.format == "chatgpt" and ("title" in obj or "current_node" in obj):
        kind = "chatgpt"  # a ChatGPT conversation without 'mapping': parse_chatgpt names the field
    else:
        keys = ", ".join(repr(k) for k in list(obj)[:6]) if isinstance(obj, dict) else type(obj).__name__
        return ImportProblem(where, f"neither 'mapping' (ChatGPT) nor 'chat_messages' (Claude) ({keys}): "
                                    "not a conversation format this app knows")
    if state.format is None:
        state.format = kind
    try:
        return parse_chatgpt(obj, index) if kind == "chatgpt" else parse_claude(obj, index)
    except ConversationFormatError as exc:
        return ImportProblem(where, str(exc))
    except (RecursionError, TypeError, ValueError, AttributeError, KeyError) as exc:
        log.warning("could not convert %s", where, exc_info=exc)
        return ImportProblem(where, f"could not be read ({type(exc).__name__}: {exc})")


def _convert_native(obj: object, index: int, state: ExportStream) -> ExportItem:
    return parse_native_node(obj, index)


def _items(
    opened: _Opened,
    member: Member,
    prefix: str,
    state: ExportStream,
    cancelled: Callable[[], bool] | None,
    on_item: Callable[[ExportStream, str], None] | None,
    convert: Callable[[object, int, ExportStream], ExportItem],
) -> Iterator[ExportItem]:
    index = -1
    last = "the start of the file"
    try:
        items = ijson.items(opened.reader, prefix, use_float=True)
        while True:
            if cancelled is not None and cancelled():
                raise ImportCancelled()
            try:
                obj = next(items)
            except StopIteration:
                return
            except ijson.JSONError as exc:
                yield ImportProblem(member.name, f"invalid JSON after {last} (about byte "
                                                 f"{opened.reader.count:,}): {_json_error(exc)}; "
                                                 "the conversations after it were not imported")
                return
            index += 1
            state.items += 1
            item = convert(obj, index, state)
            del obj
            last = _name_of(item)
            if on_item is not None:
                on_item(state, last)
            yield item
    finally:
        opened.close()


def _name_of(item: ExportItem) -> str:
    if isinstance(item, ImportProblem):
        return item.where
    return f"'{item.title}'"
