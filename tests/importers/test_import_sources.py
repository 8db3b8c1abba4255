"""Robustness: zips (shards, manifest, bombs, unsafe names), malformed and huge files, unknown versions."""

from __future__ import annotations

import json
import tracemalloc
import zipfile
from pathlib import Path

import pytest
from import_builders import (
    branchy_chatgpt,
    branchy_claude,
    chatgpt_zip,
    linear_chatgpt,
    write_json,
    write_zip,
)

from desktop.core.importers import ImportFailed, Limits, convert_export, preview_export


def titles(path: Path, **kw: object) -> list[str]:
    return [i.title for i in convert_export(path, **kw).report.imported]  # type: ignore[arg-type]


def convs(n: int, prefix: str = "c") -> list[dict[str, object]]:
    return [branchy_chatgpt(f"{prefix}{i}", f"Chat {i}") for i in range(n)]


def test_a_zip_with_conversations_json(tmp_path: Path) -> None:
    assert titles(chatgpt_zip(tmp_path / "e.zip", convs(2))) == ["Chat 0", "Chat 1"]


def test_sharded_zip_read_in_manifest_order(tmp_path: Path) -> None:
    path = chatgpt_zip(tmp_path / "e.zip", convs(5), shards=3)
    assert titles(path) == [f"Chat {i}" for i in range(5)]
    preview = preview_export(path)
    assert preview.format == "chatgpt" and len(preview.entries) == 5 and preview.problems == []


def test_shards_without_a_manifest_are_found_by_name(tmp_path: Path) -> None:
    path = chatgpt_zip(tmp_path / "e.zip", convs(4), shards=2, manifest=False)
    assert titles(path) == [f"Chat {i}" for i in range(4)]


def test_a_shard_missing_from_the_zip_is_reported(tmp_path: Path) -> None:
    path = chatgpt_zip(tmp_path / "e.zip", convs(6), shards=3, drop_shard=1)
    outcome = convert_export(path)
    assert [i.title for i in outcome.report.imported] == ["Chat 0", "Chat 1", "Chat 4", "Chat 5"]
    assert [str(p) for p in outcome.report.problems] == [
        "conversations-001.json: listed in export_manifest.json but missing from e.zip: the conversations "
        "in it were not imported"
    ]
    assert not outcome.report.ok


def test_a_newer_manifest_version_is_noted_not_refused(tmp_path: Path) -> None:
    path = write_zip(
        tmp_path / "e.zip",
        {
            "conversations-000.json": convs(1),
            "export_manifest.json": {
                "version": 7,
                "logical_files": {"conversations.json": {"files": ["conversations-000.json"]}},
            },
        },
    )
    outcome = convert_export(path)
    assert [i.title for i in outcome.report.imported] == ["Chat 0"]
    assert any("version 7 is newer" in n for n in outcome.notices)


def test_a_zip_made_from_the_export_folder(tmp_path: Path) -> None:
    path = write_zip(
        tmp_path / "e.zip", {"My export/conversations.json": convs(1), "My export/user.json": {}}
    )
    assert titles(path) == ["Chat 0"]


def test_an_unzipped_folder(tmp_path: Path) -> None:
    folder = tmp_path / "export"
    folder.mkdir()
    write_json(folder / "conversations.json", [branchy_claude()])
    assert titles(folder) == ["Which town"]


def test_unsafe_zip_names_are_never_read(tmp_path: Path) -> None:
    path = write_zip(
        tmp_path / "e.zip",
        {
            "../conversations.json": convs(1, "evil"),
            "conversations.json": convs(1),
            "/etc/passwd": "x",
            "C:/boot.ini": "x",
        },
    )
    outcome = convert_export(path)
    assert [i.original_id for i in outcome.report.imported] == ["c0"]
    assert any("3 zip entries with unsafe names" in n for n in outcome.notices)


def test_a_zip_bomb_is_refused_before_anything_is_decompressed(tmp_path: Path) -> None:
    bomb = b"[" + b" " * (40 * 1024 * 1024) + b"]"  # 40 MiB of spaces compresses about a thousand times
    path = write_zip(tmp_path / "bomb.zip", {"conversations.json": bomb})
    with pytest.raises(
        ImportFailed,
        match=r"conversations\.json would expand .* times .* zip bomb; nothing was "
        "imported",
    ):
        preview_export(path)


def test_the_uncompressed_size_cap(tmp_path: Path) -> None:
    path = chatgpt_zip(tmp_path / "e.zip", convs(3))
    with pytest.raises(ImportFailed, match="more than the import limit"):
        convert_export(
            path,
            options=__import__("desktop.core.importers", fromlist=["ImportOptions"]).ImportOptions(
                limits=Limits(max_uncompressed=1000)
            ),
        )
    bare = write_json(tmp_path / "conversations.json", convs(3))
    with pytest.raises(ImportFailed, match="more than the import limit"):
        preview_export(bare, limits=Limits(max_uncompressed=1000))


def test_a_member_that_lies_about_its_size_stops_the_import(tmp_path: Path) -> None:
    path = write_zip(tmp_path / "e.zip", {"conversations.json": convs(3)}, compression=zipfile.ZIP_STORED)
    data = bytearray(path.read_bytes())
    # Make the central directory declare a smaller size than the data (zipfile then reads past it or
    # fails its CRC check); either way nothing half-read is imported.
    with zipfile.ZipFile(path) as zf:
        info = zf.infolist()[0]
    cd = data.rfind(b"PK\x01\x02")
    real = info.file_size
    data[cd + 24 : cd + 28] = (real // 2).to_bytes(4, "little")
    path.write_bytes(bytes(data))
    with pytest.raises(ImportFailed):
        convert_export(path)


def test_encrypted_entries_are_refused(tmp_path: Path) -> None:
    path = write_zip(tmp_path / "e.zip", {"conversations.json": convs(1)})
    data = bytearray(path.read_bytes())
    for sig, offset in ((b"PK\x03\x04", 6), (b"PK\x01\x02", 8)):
        at = data.find(sig)
        data[at + offset] |= 0x1
    path.write_bytes(bytes(data))
    with pytest.raises(ImportFailed, match="is encrypted"):
        convert_export(path)


def test_truncated_json_keeps_the_whole_conversations_before_it(tmp_path: Path) -> None:
    text = json.dumps(convs(3))
    cut = text.rfind('{"title"')  # inside the third conversation
    path = tmp_path / "conversations.json"
    path.write_text(text[: cut + 200], encoding="utf-8")
    outcome = convert_export(path)
    assert [i.title for i in outcome.report.imported] == ["Chat 0", "Chat 1"]
    (problem,) = outcome.report.problems
    assert problem.where == "conversations.json"
    assert problem.message.startswith("invalid JSON after 'Chat 1' (about byte ")
    assert "the conversations after it were not imported" in problem.message


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"", "conversations.json: the file is empty"),
        (b"   \n", "conversations.json: the file is empty"),
        (b"hello", "conversations.json: not JSON (it starts with b'h')"),
        (
            b'{"foo": 1, "bar": [1]}',
            "conversations.json: a JSON object with 'foo', 'bar': not a ChatGPT or Claude "
            "conversation, nor a Chat Nodes export",
        ),
        (
            b'{"format": "chatnodes-export", "version": 9, "nodes": []}',
            "conversations.json: Chat Nodes export version 9 is not known to this app (it reads version 1)",
        ),
        (
            b'{"format": "other-app", "version": 1, "nodes": []}',
            "'format' is 'other-app', not 'chatnodes-export'",
        ),
    ],
)
def test_files_we_cannot_read_get_a_clear_message(tmp_path: Path, content: bytes, message: str) -> None:
    path = tmp_path / "conversations.json"
    path.write_bytes(content)
    with pytest.raises(ImportFailed) as info:
        preview_export(path)
    assert message in str(info.value)


def test_an_array_of_something_else_names_each_item(tmp_path: Path) -> None:
    path = write_json(tmp_path / "conversations.json", [{"messages": []}, branchy_chatgpt()])
    outcome = convert_export(path)
    assert [i.title for i in outcome.report.imported] == ["Rome trip"]
    assert str(outcome.report.problems[0]) == (
        "conversation 1: neither 'mapping' (ChatGPT) nor 'chat_messages' (Claude) ('messages'): not a "
        "conversation format this app knows"
    )


def test_a_single_conversation_object_and_a_byte_order_mark(tmp_path: Path) -> None:
    path = tmp_path / "one.json"
    path.write_bytes(b"\xef\xbb\xbf" + json.dumps(branchy_chatgpt()).encode())
    assert titles(path) == ["Rome trip"]
    path.write_bytes(json.dumps(branchy_claude()).encode())
    assert titles(path) == ["Which town"]


def test_a_missing_file_and_a_broken_zip(tmp_path: Path) -> None:
    with pytest.raises(ImportFailed, match="no such file"):
        preview_export(tmp_path / "nope.zip")
    broken = tmp_path / "broken.zip"
    broken.write_bytes(b"PK\x03\x04" + b"\x00" * 50)
    with pytest.raises(ImportFailed, match="not a readable zip file"):
        preview_export(broken)
    empty = write_zip(tmp_path / "other.zip", {"readme.txt": "hi", "a.json": "[]", "b.json": "[]"})
    with pytest.raises(ImportFailed, match="no conversations.json"):
        preview_export(empty)


@pytest.mark.slow
def test_a_large_export_is_streamed_in_bounded_memory(tmp_path: Path) -> None:
    """Reading a 24 MB export never holds more than a small part of it (one conversation at a time)."""
    path = tmp_path / "conversations.json"
    one = json.dumps(linear_chatgpt(40, words=60))
    with open(path, "w", encoding="utf-8") as fh:
        fh.write("[")
        for i in range(1_000):
            fh.write(("," if i else "") + one.replace('"conv-long"', f'"conv-{i}"'))
        fh.write("]")
    size = path.stat().st_size
    assert size > 20_000_000
    tracemalloc.start()
    try:
        preview = preview_export(path)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert len(preview.entries) == 1_000 and preview.entries[-1].messages == 40
    assert peak < size / 8, f"peak {peak:,} bytes for a {size:,}-byte file"
