"""The project's attachment store: content-addressed files written atomically, deduplicated,
verified when read; non-regular files, oversized files and links planted in a hostile project are
refused; a damaged file is kept aside, never overwritten."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import pytest

from desktop.core.attachments import (
    MAX_ATTACHMENT_BYTES,
    AttachmentError,
    AttachmentStore,
    AttachmentUnavailable,
    classify,
)
from desktop.testing.files import make_pdf, make_png

PNG = make_png(64, 48)


@pytest.fixture
def store(tmp_path: Path) -> AttachmentStore:
    project = tmp_path / "project"
    project.mkdir()
    return AttachmentStore(project)


def store_files(store: AttachmentStore) -> list[str]:
    return sorted(p.name for p in store.folder.iterdir()) if store.folder.exists() else []


def test_a_file_is_stored_under_its_sha256_and_referenced(store: AttachmentStore, tmp_path: Path) -> None:
    source = tmp_path / "Screen Shot.png"
    source.write_bytes(PNG)
    ref = store.add_file(source)
    sha = hashlib.sha256(PNG).hexdigest()
    assert (ref.name, ref.media_type, ref.size, ref.sha256, ref.kind) == ("Screen Shot.png", "image/png",
                                                                          len(PNG), sha, "image")
    assert (ref.width, ref.height) == (64, 48)
    assert store.path_for(ref) == store.project_dir / ".chatnodes" / "attachments" / f"{sha}.png"
    assert store.path_for(ref).read_bytes() == PNG
    assert store_files(store) == [f"{sha}.png"]  # no temp file left behind
    assert store.read(ref) == PNG and store.check(ref, verify=True) is None


def test_the_same_bytes_are_stored_once(store: AttachmentStore) -> None:
    first = store.add_bytes(PNG, "a.png")
    inode = os.stat(store.path_for(first)).st_ino
    second = store.add_bytes(PNG, "b.png")
    assert second.sha256 == first.sha256 and second.name == "b.png"
    assert os.stat(store.path_for(first)).st_ino == inode  # not written again
    assert len(store_files(store)) == 1


def test_kinds_and_extensions_come_from_the_content_not_the_name(store: AttachmentStore) -> None:
    text = store.add_bytes(b"print('hi')\n", "script.png")
    pdf = store.add_bytes(make_pdf(["Hello"]), "paper")
    blob = store.add_bytes(b"PK\x03\x04" + bytes(100), "archive.zip")
    assert (text.kind, text.media_type, text.file_name.rsplit(".", 1)[1]) == ("text", "text/plain", "txt")
    assert (pdf.kind, pdf.pages, pdf.file_name.rsplit(".", 1)[1]) == ("pdf", 1, "pdf")
    assert (blob.kind, blob.file_name.rsplit(".", 1)[1]) == ("other", "bin")
    assert blob.note is not None and "cannot be sent" not in (text.note or "")
    assert "only images (PNG, JPEG, WebP, GIF), PDFs and UTF-8 text files can be sent" in blob.note


def test_non_regular_files_are_refused(store: AttachmentStore, tmp_path: Path) -> None:
    folder = tmp_path / "folder"
    folder.mkdir()
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)  # opening it for reading would block: it must be refused without waiting
    cases = ((folder, "a folder"), (fifo, "not a regular file"), (Path("/dev/null"), "not a regular"),
             (tmp_path / "gone.txt", "does not exist"))
    for path, why in cases:
        with pytest.raises(AttachmentError, match=why):
            store.add_file(path)
        assert classify(path).problem is not None and why in str(classify(path).problem)
    assert store_files(store) == []


def test_a_link_to_a_file_attaches_the_file(store: AttachmentStore, tmp_path: Path) -> None:
    target = tmp_path / "real.txt"
    target.write_text("notes", encoding="utf-8")
    link = tmp_path / "link.txt"
    link.symlink_to(target)
    ref = store.add_file(link)
    assert ref.name == "link.txt" and store.read(ref) == b"notes"


def test_files_over_the_cap_are_refused(store: AttachmentStore, tmp_path: Path) -> None:
    big = tmp_path / "big.log"
    with big.open("wb") as fh:
        fh.truncate(MAX_ATTACHMENT_BYTES + 1)  # sparse: costs no disk
    with pytest.raises(AttachmentError, match=r"too large: 50.0 MB \(the limit is 50.0 MB\)"):
        store.add_file(big)
    with pytest.raises(AttachmentError, match="too large"):
        store.add_bytes(bytes(MAX_ATTACHMENT_BYTES + 1), "big.bin")
    assert store_files(store) == []


def test_a_missing_or_damaged_file_is_reported_not_raised_at_the_caller(store: AttachmentStore) -> None:
    ref = store.add_bytes(PNG, "a.png")
    path = store.path_for(ref)
    path.write_bytes(PNG[:-1] + b"\x00")  # same size, other content
    with pytest.raises(AttachmentUnavailable) as damaged:
        store.read(ref)
    assert damaged.value.reason == "corrupt" and "changed or damaged" in str(damaged.value)
    problem = store.check(ref, verify=True)
    assert problem is not None and problem.reason == "corrupt"
    path.unlink()
    with pytest.raises(AttachmentUnavailable) as missing:
        store.read(ref)
    assert missing.value.reason == "missing"
    assert store.check(ref) is not None and store.check(ref).reason == "missing"  # type: ignore[union-attr]
    assert store.link(ref) is None


def test_a_damaged_file_is_kept_aside_when_the_attachment_is_added_again(store: AttachmentStore) -> None:
    ref = store.add_bytes(PNG, "a.png")
    path = store.path_for(ref)
    path.write_bytes(b"damaged")
    again = store.add_bytes(PNG, "a.png")
    assert again == ref and path.read_bytes() == PNG
    aside = [name for name in store_files(store) if ".corrupt-" in name]
    assert len(aside) == 1 and (store.folder / aside[0]).read_bytes() == b"damaged"


def test_a_link_planted_in_the_store_is_never_followed(store: AttachmentStore, tmp_path: Path) -> None:
    secret = tmp_path / "id_rsa"
    secret.write_bytes(b"-----BEGIN OPENSSH PRIVATE KEY-----\n")
    ref = store.add_bytes(secret.read_bytes(), "key.txt")
    path = store.path_for(ref)
    path.unlink()
    path.symlink_to(secret)  # a hostile project: right name, right content, but a link out
    with pytest.raises(AttachmentUnavailable) as refused:
        store.read(ref)
    assert refused.value.reason == "unreadable"
    assert store.check(ref) is not None


def test_an_attachments_folder_linked_out_of_the_project_is_refused(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    project = tmp_path / "project"
    (project / ".chatnodes").mkdir(parents=True)
    (project / ".chatnodes" / "attachments").symlink_to(outside, target_is_directory=True)
    store = AttachmentStore(project)
    with pytest.raises(AttachmentError, match="link out of the project"):
        store.add_bytes(PNG, "a.png")
    assert list(outside.iterdir()) == []
    sha = hashlib.sha256(PNG).hexdigest()
    (outside / f"{sha}.png").write_bytes(PNG)
    ref = AttachmentStore(tmp_path / "other").add_bytes(PNG, "a.png")
    with pytest.raises(AttachmentUnavailable, match="link out of the project"):
        store.read(ref)


def test_links_for_an_export(store: AttachmentStore, tmp_path: Path) -> None:
    ref = store.add_bytes(PNG, "a.png")
    assert store.link(ref) == f".chatnodes/attachments/{ref.sha256}.png"
    assert store.link(ref, tmp_path) == f"project/.chatnodes/attachments/{ref.sha256}.png"


def test_prepared_variants_are_content_addressed_and_a_damaged_one_is_ignored(store: AttachmentStore) -> None:
    ref = store.add_bytes(PNG, "a.png")
    small = make_png(8, 6)
    assert store.prepared(ref.sha256, "s1568") is None
    store.put_prepared(ref.sha256, "s1568", small, "png")
    assert store.prepared(ref.sha256, "s1568") == (small, "png")
    assert store.prepared(ref.sha256, "s2048") is None
    [variant] = list((store.folder / "prepared").iterdir())
    assert variant.name == f"{ref.sha256}.s1568.{hashlib.sha256(small).hexdigest()}.png"
    variant.write_bytes(b"broken")
    assert store.prepared(ref.sha256, "s1568") is None
    assert store.read(ref) == PNG  # the original is kept as it was
