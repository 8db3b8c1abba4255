"""Attachment references on messages: persisted in ``extra["attachments"]``, they round-trip through
the v2 codec, count as references (not file bytes) in the history cap, go to the history archive,
and survive edit, regenerate, version switches and forks; the Markdown export links the files."""

from __future__ import annotations

import copy
import json
from pathlib import Path

from desktop.core.attachments import AttachmentStore
from desktop.core.chat import (
    Conversation,
    conversation_markdown,
    deserialize_conversation,
    serialize_conversation,
)
from desktop.core.chat._cap import _message_size
from desktop.core.chat._codec import _JSON
from desktop.core.chat.attachment_ref import (
    ATTACHMENTS_KEY,
    AttachmentRef,
    attachment_entries,
    attachments_of,
    clean_name,
    edit_keeping_attachments,
    ref_from_dict,
    ref_to_dict,
    set_attachments,
)
from desktop.core.chat.conversation import message_from_dict, message_to_dict, split_for_cap
from desktop.core.chat.types import ChatMessage
from desktop.core.chat.versions import fork_prefix, regenerate, switch_version, versions_at
from desktop.core.store import HistoryArchive, plan_trim
from desktop.testing.files import make_pdf, make_png

SHA = "ab" * 32
SHOT = AttachmentRef("shot.png", "image/png", 3_000_000, SHA, "image", width=1280, height=800)
DOC = AttachmentRef("report.pdf", "application/pdf", 120_000, "cd" * 32, "pdf", pages=12, note="12 pages")


def chat_with(refs: list[AttachmentRef]) -> Conversation:
    user = ChatMessage("u1", "user", "What is in these?", 1)
    set_attachments(user, refs)
    return Conversation("c1", [user, ChatMessage("a1", "assistant", "A screenshot and a report.", 2)], 0)


def test_a_reference_round_trips_through_the_v2_codec() -> None:
    conv = chat_with([SHOT, DOC])
    text = serialize_conversation(conv)
    doc = json.loads(text)
    assert doc["messages"][0][ATTACHMENTS_KEY] == [
        {"name": "shot.png", "mediaType": "image/png", "size": 3_000_000, "sha256": SHA, "kind": "image",
         "width": 1280, "height": 800},
        {"name": "report.pdf", "mediaType": "application/pdf", "size": 120_000, "sha256": "cd" * 32,
         "kind": "pdf", "pages": 12, "note": "12 pages"},
    ]
    loaded = deserialize_conversation(text)
    assert loaded.messages == conv.messages
    assert attachments_of(loaded.messages[0]) == [SHOT, DOC]
    assert attachments_of(loaded.messages[1]) == []
    assert ref_from_dict(ref_to_dict(DOC)) == DOC


def test_unreadable_references_are_skipped_counted_and_kept_verbatim() -> None:
    entries = [
        ref_to_dict(SHOT),
        {**ref_to_dict(SHOT), "sha256": "../../../home/me/.ssh/id_rsa"},  # names a file: refused
        {**ref_to_dict(SHOT), "size": -1},
        {"name": "x"},
        "not an object",
        {**ref_to_dict(SHOT), "sha256": SHA.upper(), "kind": "hologram", "width": True, "note": "a\x00b"},
    ]
    raw = {"id": "u", "role": "user", "content": "", "ts": 1, ATTACHMENTS_KEY: entries}
    msg = message_from_dict(copy.deepcopy(raw))
    refs, bad = attachment_entries(msg)
    assert bad == 4
    assert refs[0] == SHOT
    assert refs[1] == AttachmentRef("shot.png", "image/png", 3_000_000, SHA, "other", note="a b")
    assert message_to_dict(msg) == {**raw, "stopped": False}  # written back untouched
    assert attachment_entries(ChatMessage("m", "user", "", 1, extra={ATTACHMENTS_KEY: "junk"})) == ([], 1)


def test_names_are_cleaned_for_display_and_requests() -> None:
    assert clean_name("a\nb\u202e.txt") == "a?b?.txt"
    assert clean_name("../../etc/passwd") == ".._.._etc_passwd"
    assert clean_name("  ") == "attachment"
    long = clean_name("x" * 400 + ".pdf")
    assert len(long) == 255 and long.endswith(".pdf")


def test_the_history_cap_counts_references_not_file_bytes() -> None:
    conv = chat_with([SHOT, DOC])
    user = conv.messages[0]
    size = _message_size(user)
    assert size == len(_JSON.encode(message_to_dict(user)).encode())
    assert size < 1024 < SHOT.size  # a 3 MB screenshot costs its reference only
    kept, dropped = split_for_cap(conv.messages, 2048)
    assert kept == conv.messages and not dropped


def test_trimmed_messages_go_to_the_archive_with_their_references(tmp_path: Path) -> None:
    conv = chat_with([SHOT])
    conv.messages += [ChatMessage("u2", "user", "x" * 5000, 3), ChatMessage("a2", "assistant", "ok", 4)]
    plan = plan_trim("n1", conv.messages, 2000)
    assert plan is not None
    _, to_archive, _ = plan
    archive = HistoryArchive(tmp_path)
    archive.append("n1", to_archive)
    archived = archive.read("n1").messages
    assert attachments_of(archived[0]) == [SHOT]


def test_edit_keeps_the_attachments_and_the_old_version_keeps_its_own() -> None:
    conv = chat_with([SHOT, DOC])
    new = edit_keeping_attachments(conv, "u1", "Only the screenshot, please")
    assert attachments_of(new) == [SHOT, DOC]
    assert conv.messages == [new]
    again = edit_keeping_attachments(conv, new.id, "Just the report", [DOC])
    assert attachments_of(again) == [DOC]
    assert versions_at(conv, again.id) == (3, 3)
    switch_version(conv, again.id, 1)
    assert conv.messages[0].content == "What is in these?" and attachments_of(conv.messages[0]) == [SHOT, DOC]
    assert conv.messages[1].content == "A screenshot and a report."
    switch_version(conv, conv.messages[0].id, 2)
    assert attachments_of(conv.messages[0]) == [SHOT, DOC]
    # saved and loaded, every version still has its references
    loaded = deserialize_conversation(serialize_conversation(conv))
    switch_version(loaded, loaded.messages[0].id, 3)
    assert attachments_of(loaded.messages[0]) == [DOC]


def test_regenerate_and_fork_keep_the_attachments() -> None:
    conv = chat_with([SHOT])
    carrier = regenerate(conv, "a1")
    assert carrier.id == "u1" and attachments_of(carrier) == [SHOT]
    conv.messages.append(ChatMessage("a2", "assistant", "Second answer.", 5))
    copies = fork_prefix(conv, "a2")
    assert attachments_of(copies[0]) == [SHOT] and copies[0].id != "u1"
    copies[0].extra[ATTACHMENTS_KEY].append({"changed": True})  # a deep copy: the original is untouched
    assert len(conv.messages[0].extra[ATTACHMENTS_KEY]) == 1


def test_set_attachments_replaces_extra_and_an_empty_list_removes_the_key() -> None:
    msg = ChatMessage("u", "user", "", 1, extra={"keep": 1})
    shared = msg.extra
    set_attachments(msg, [SHOT])
    assert shared == {"keep": 1} and msg.extra == {"keep": 1, ATTACHMENTS_KEY: [ref_to_dict(SHOT)]}
    set_attachments(msg, [])
    assert msg.extra == {"keep": 1}


def test_markdown_export_links_the_files_and_marks_missing_ones(tmp_path: Path) -> None:
    store = AttachmentStore(tmp_path / "project")
    shot = store.add_bytes(make_png(40, 30), "screen [1].png")
    report = store.add_bytes(make_pdf(["Quarterly numbers"]), "report.pdf")
    conv = chat_with([shot, report])
    default = conversation_markdown("Chat", conv.messages)
    folder = ".chatnodes/attachments"
    assert f"- ![screen \\[1\\].png](<{folder}/{shot.sha256}.png>) (image/png, 40×30, " in default
    assert f"- [report.pdf](<{folder}/{report.sha256}.pdf>) (application/pdf, 1 page, " in default
    assert default.index("What is in these?") < default.index("Attachments:") < default.index("## Assistant")
    # an export saved elsewhere links relative to where it is; a missing file is said so
    store.path_for(report).unlink()
    exports = tmp_path / "exports"
    exports.mkdir()
    doc = conversation_markdown("Chat", conv.messages, attachment_link=lambda r: store.link(r, exports))
    assert f"](<../project/.chatnodes/attachments/{shot.sha256}.png>)" in doc
    assert "- report.pdf (application/pdf, 1 page, " in doc and "*(file missing)*" in doc
    # a link function that fails, and damaged references, never stop the export
    user = conv.messages[0]
    user.extra[ATTACHMENTS_KEY].append({"sha256": "nope"})

    def broken(ref: AttachmentRef) -> str:
        raise OSError("disk gone")

    doc = conversation_markdown("Chat", conv.messages, attachment_link=broken)
    assert doc.count("*(file missing)*") == 2 and "*(1 damaged attachment reference)*" in doc
