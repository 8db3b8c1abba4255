"""Bringing one node's rows in line with its saved state and its history archive (in a transaction)."""

from __future__ import annotations

import logging
import os
from collections.abc import Callable
from pathlib import Path

from ..chat.types import ChatMessage
from ..store import PROJECT_FILE, HistoryArchive
from ._rows import Known, Memo, Row, message_rows
from ._snapshot import NodeSnapshot, ProjectSnapshot
from ._store import NodeInfo, Store
from ._text import clean_text

__all__ = ["sync_node", "drop_missing_nodes", "file_sig", "file_size", "project_bytes"]

log = logging.getLogger(__name__)


def file_sig(path: Path) -> str:
    """``size:mtime_ns`` of a file, ``""`` when it is missing."""
    try:
        st = os.stat(path)
    except OSError:
        return ""
    return f"{st.st_size}:{st.st_mtime_ns}"


def file_size(path: Path) -> int:
    """A file's size, 0 when it is missing."""
    try:
        return os.stat(path).st_size
    except OSError:
        return 0


def project_bytes(folder: Path) -> int:
    """Bytes a build reads of a project: ``project.json`` and every archive file."""
    return file_size(folder / PROJECT_FILE) + sum(map(file_size, HistoryArchive(folder).dir.glob("*.jsonl")))


def sync_node(store: Store, pid: int, node: NodeSnapshot, secrets: tuple[str, ...], archive: HistoryArchive,
              memo: Memo | None, pace: Callable[[], None]) -> tuple[int, int, Memo]:
    """Bring one node's rows in line with ``node`` and its archive.

    The archive is read again only when its file's signature changed; a message both archived and
    in the conversation (right after a trim) is indexed once, as archived. Rows are compared by
    digest: only new and changed messages are written; rows of messages gone are removed.

    Args:
        store: The store, in a transaction.
        pid: The project's id.
        node: The node as saved.
        secrets: Known keys to scrub.
        archive: The project's history archive.
        memo: The node's memo from last time (see ``message_rows``), or None.
        pace: Called between pieces of work.

    Returns:
        ``(inserted, removed, memo)``: the memo to pass next time.
    """
    title = clean_text(node.title, secrets)
    ref, _, old_sig = store.node(pid, node.node_id, title)
    sig = file_sig(archive.path(node.node_id))
    wanted: list[Row | Known] = []
    changed = sig != old_sig
    appended = _appended(archive, node.node_id, old_sig, sig) if changed else None
    reread = changed and appended is None
    if reread:
        existing = store.rows(ref)
        messages = archive.read(node.node_id).messages if sig else []
        wanted += message_rows(messages, archived=True, secrets=secrets, pace=pace)
        archived_ids = {r.msg_id for r in wanted}
    else:  # the archived rows stay as they are; messages appended to the archive join them
        existing = store.rows(ref, archived=False)
        archived_ids = store.archived_among(ref, [m.id for m in node.messages])
        if appended:
            known = store.archived_among(ref, [m.id for m in appended])
            fresh_archived = list(message_rows(appended, archived=True, secrets=secrets, skip=known,
                                               pace=pace))
            wanted += fresh_archived
            archived_ids |= {r.msg_id for r in fresh_archived}
    new_memo: Memo = {}
    wanted += message_rows(node.messages, archived=False, secrets=secrets, skip=archived_ids, memo=memo,
                           new_memo=new_memo, pace=pace)
    stale: list[int] = []
    keep: set[str] = set()
    fresh: list[Row] = []
    for item in wanted:
        old = existing.get(item.msg_id)
        if old is not None and old[1] == item.digest:
            keep.add(item.msg_id)
            continue
        row = item if isinstance(item, Row) else item.row(secrets)
        if row is None:
            continue
        keep.add(row.msg_id)
        if old is not None:
            stale.append(old[0])
        fresh.append(row)
    for mid, (rowid, _, was_archived) in existing.items():
        if mid not in keep and (reread or not was_archived):
            stale.append(rowid)
    removed = store.delete(stale)
    for row in fresh:
        store.insert(pid, ref, row)
        pace()
    if changed:
        store.set_archive_sig(ref, sig)
    return len(fresh), removed, new_memo


def _appended(archive: HistoryArchive, node_id: str, old_sig: str, sig: str) -> list[ChatMessage] | None:
    """The messages appended to a node's archive since it had ``old_sig``; None when it did not just
    grow (created, replaced, cut or unreadable there: read it all again).

    A long session trims every node on every save: reading each archive whole again made each index
    update cost more the longer the session ran (CPU and memory held by the writer thread).
    """
    if not old_sig or not sig:
        return None
    try:
        old_size, size = int(old_sig.split(":", 1)[0]), int(sig.split(":", 1)[0])
    except ValueError:
        return None
    if size <= old_size:
        return None
    tail = archive.read_appended(node_id, old_size)
    return None if tail is None else tail.messages


def drop_missing_nodes(store: Store, pid: int, known: dict[str, NodeInfo], snapshot: ProjectSnapshot
                       ) -> tuple[int, list[str]]:
    """Remove the nodes the snapshot no longer has (deleted) and record the file's signature.

    Returns:
        ``(rows removed, ids of the nodes removed)``.
    """
    present = {n.node_id for n in snapshot.nodes}
    removed = 0
    gone: list[str] = []
    for node_id, (ref, _, _) in known.items():
        if node_id not in present:
            removed += store.remove_node(ref)
            gone.append(node_id)
    store.set_project_sig(pid, file_sig(snapshot.folder / PROJECT_FILE))
    return removed, gone
