"""Attachments on the wire, over real loopback sockets: the loopback fake provider records each
request, and the user message carries exactly the parts its API takes (OpenAI ``image_url`` /
``file`` / ``text`` parts; Anthropic ``image`` / ``document`` / ``text`` blocks, images first), read
from the project's store at send time. A missing file costs its part, never the send."""

from __future__ import annotations

import base64
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from provider_support import instant_policy

from desktop.core.attachments import AttachmentRef, AttachmentResolver, AttachmentStore, set_attachments
from desktop.core.chat import ChatRuntimeDeps, ChatSendRequest, create_chat_runtime
from desktop.core.chat.types import ApiKind, ChatEvent, ChatMessage, Notice, ProviderConfig, ToolCall
from desktop.core.providers import driver_for
from desktop.core.providers._attachment_parts import TOOL_IMAGES_HEADING
from desktop.core.providers.anthropic import anthropic_messages
from desktop.core.providers.openai import openai_messages
from desktop.testing import FakeProvider, Turn
from desktop.testing.files import make_pdf, make_png

KEY = "sk-fake-attachments-0000"
PNG = make_png(120, 80)
PDF = make_pdf(["Quarterly revenue: 12 million.", "Outlook: stable."])
NOTES = b"# Notes\n\n```\nkeep calm\n```\n"
MODELS: dict[ApiKind, str] = {"openai": "gpt-4o", "anthropic": "claude-sonnet-4-5"}  # both see and read PDFs


@pytest.fixture
def fake() -> Iterator[FakeProvider]:
    with FakeProvider(api_key=KEY) as server:
        yield server


@pytest.fixture
def store(tmp_path: Path) -> AttachmentStore:
    return AttachmentStore(tmp_path / "project")


def config(fake: FakeProvider, api: ApiKind) -> ProviderConfig:
    base = fake.anthropic_base_url if api == "anthropic" else fake.openai_base_url
    return ProviderConfig(id=f"fake-{api}", name="Fake", api=api, base_url=base, api_key=KEY)


def ask(text: str, refs: list[AttachmentRef], msg_id: str = "u1") -> ChatMessage:
    msg = ChatMessage(msg_id, "user", text, 1)
    set_attachments(msg, refs)
    return msg


async def stream(
    fake: FakeProvider,
    api: ApiKind,
    model: str,
    messages: list[ChatMessage],
    resolver: AttachmentResolver | None,
) -> tuple[list[ChatEvent], dict[str, Any]]:
    fake.script(Turn(text="Seen."))
    policy, _ = instant_policy()
    async with httpx.AsyncClient() as client:
        driver = driver_for(config(fake, api), client, retry=policy, attachments=resolver)
        events = [e async for e in driver.stream(model=model, messages=messages, tools=[])]
    body = fake.requests[-1].json
    assert isinstance(body, dict)
    return events, body


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def three(store: AttachmentStore) -> list[AttachmentRef]:
    """A text file, an image and a PDF, attached in that order."""
    return [store.add_bytes(NOTES, "notes.md"), store.add_bytes(PNG, "chart.png"),
            store.add_bytes(PDF, "q3.pdf")]


def fenced_notes() -> str:
    return "Attached file: notes.md\n````markdown\n# Notes\n\n```\nkeep calm\n```\n````"


@pytest.mark.anyio
async def test_openai_gets_image_url_file_and_text_parts(fake: FakeProvider, store: AttachmentStore) -> None:
    refs = three(store)
    events, body = await stream(fake, "openai", "gpt-4o", [ask("Summarise these.", refs)],
                                AttachmentResolver(store))
    assert [m["role"] for m in body["messages"]] == ["user"]
    assert body["messages"][0]["content"] == [
        {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{b64(PNG)}"}},
        {"type": "file", "file": {"filename": "q3.pdf",
                                  "file_data": f"data:application/pdf;base64,{b64(PDF)}"}},
        {"type": "text", "text": fenced_notes()},
        {"type": "text", "text": "Summarise these."},
    ]
    assert not [e for e in events if isinstance(e, Notice)]


@pytest.mark.anyio
async def test_anthropic_gets_image_document_and_text_blocks_images_first(
    fake: FakeProvider, store: AttachmentStore
) -> None:
    refs = three(store)
    _, body = await stream(fake, "anthropic", "claude-sonnet-4-5", [ask("Summarise these.", refs)],
                           AttachmentResolver(store))
    assert body["messages"] == [{"role": "user", "content": [
        {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": b64(PNG)}},
        {"type": "document", "title": "q3.pdf",
         "source": {"type": "base64", "media_type": "application/pdf", "data": b64(PDF)}},
        {"type": "text", "text": fenced_notes()},
        {"type": "text", "text": "Summarise these.", "cache_control": {"type": "ephemeral"}},
    ]}]


@pytest.mark.parametrize("api", ["openai", "anthropic"])
@pytest.mark.anyio
async def test_a_model_not_known_to_read_pdfs_gets_the_text_pages_marked(
    fake: FakeProvider, store: AttachmentStore, api: ApiKind
) -> None:
    ref = store.add_bytes(PDF, "q3.pdf")
    _, body = await stream(fake, api, "my-local-model", [ask("", [ref])], AttachmentResolver(store))
    content = body["messages"][0]["content"]
    assert len(content) == 1 and content[0]["type"] == "text"
    assert content[0]["text"].startswith("Attached PDF: q3.pdf (2 pages, ")
    assert content[0]["text"].endswith(
        "[page 1 of 2]\nQuarterly revenue: 12 million.\n\n[page 2 of 2]\nOutlook: stable.\n")
    assert "JVBERi" not in str(body)  # no PDF bytes went as text


@pytest.mark.parametrize("api", ["openai", "anthropic"])
@pytest.mark.anyio
async def test_a_missing_file_is_a_note_and_a_notice_and_the_send_goes_on(
    fake: FakeProvider, store: AttachmentStore, api: ApiKind
) -> None:
    shot = store.add_bytes(PNG, "shot.png")
    notes = store.add_bytes(NOTES, "notes.md")
    store.path_for(shot).unlink()
    events, body = await stream(fake, api, MODELS[api], [ask("What changed?", [shot, notes])],
                                AttachmentResolver(store))
    notices = [e.text for e in events if isinstance(e, Notice)]
    assert notices == [f"Attachment “shot.png” was not sent: the file is missing from the project "
                       f"(.chatnodes/attachments/{shot.sha256}.png)."]
    texts = [part["text"] for part in body["messages"][0]["content"]]
    assert texts == [f"[Attached file shot.png (image/png, 120×80, {shot.size} B) could not be sent: the "
                     "file is missing from the project]",
                     fenced_notes(),
                     "What changed?"]
    assert "Seen." in "".join(getattr(e, "text", "") for e in events)


@pytest.mark.parametrize("api", ["openai", "anthropic"])
@pytest.mark.anyio
async def test_without_a_store_the_attachments_are_named_not_lost(
    fake: FakeProvider, store: AttachmentStore, api: ApiKind
) -> None:
    ref = store.add_bytes(PNG, "shot.png")
    _, body = await stream(fake, api, MODELS[api], [ask("Hi", [ref])], None)
    texts = [part["text"] for part in body["messages"][0]["content"]]
    assert texts[0].startswith("[Attached file shot.png (image/png, 120×80, ")
    assert texts[0].endswith("was not sent: attachments are not available to this request]")


@pytest.mark.anyio
async def test_older_messages_keep_their_attachments_on_every_send(
    fake: FakeProvider, store: AttachmentStore
) -> None:
    ref = store.add_bytes(PNG, "chart.png")
    history = [ask("Look", [ref]), ChatMessage("a1", "assistant", "A chart.", 2),
               ChatMessage("u2", "user", "And the axis?", 3)]
    _, body = await stream(fake, "openai", "gpt-4o", history, AttachmentResolver(store))
    assert body["messages"][0]["content"][0]["image_url"]["url"].endswith(b64(PNG))
    assert body["messages"][2] == {"role": "user", "content": "And the axis?"}  # plain text stays a string


@pytest.mark.anyio
async def test_the_runtime_shows_the_notice_as_a_note_and_keeps_the_replay_invariant(
    fake: FakeProvider, store: AttachmentStore
) -> None:
    ref = store.add_bytes(NOTES, "notes.md")
    store.path_for(ref).write_bytes(b"tampered")
    fake.script(Turn(text="Fine."))
    events: list[ChatEvent] = []
    cfg = config(fake, "openai")
    async with httpx.AsyncClient() as client:
        resolver = AttachmentResolver(store)
        runtime = create_chat_runtime(ChatRuntimeDeps(
            resolve_provider=lambda _req: cfg,
            broadcast=lambda _node, event: events.append(event),
            driver_for=lambda c: driver_for(c, client, attachments=resolver),
        ))
        result = await runtime.send(ChatSendRequest("n1", [ask("Read this", [ref])], model="gpt-4o"))
        await runtime.aclose()
    assert result.ok, result.error
    roles = [(m.role, m.content[:40]) for m in result.messages]
    assert roles[0] == ("user", "Read this") and roles[-1] == ("assistant", "Fine.")
    [note] = [m for m in result.messages if m.role == "note"]
    assert note.content.startswith("Attachment “notes.md” was not sent: the file in the project was changed")


def test_openai_tool_images_follow_the_results_only_for_a_model_that_sees() -> None:
    png = b64(make_png(2, 2))
    call = ToolCall("call_1", "screenshot", "{}", "[image: image/png, 75 bytes]", status="done")
    history = [
        ChatMessage("u", "user", "Show me", 0),
        ChatMessage("a", "assistant", "", 0, tool_calls=[call]),
        ChatMessage("t", "tool", call.result or "", 0, tool_calls=[call.copy()],
                    extra={"images": [{"mime": "image/png", "data": png}]}),
        ChatMessage("n", "note", "a note between", 0),
    ]
    with_images = openai_messages(history, tool_images=True)
    assert with_images[2] == {"role": "tool", "tool_call_id": "call_1",
                              "content": "[image: image/png, 75 bytes]"}
    assert with_images[3] == {"role": "user", "content": [
        {"type": "text", "text": TOOL_IMAGES_HEADING},
        {"type": "text", "text": "screenshot (call call_1), 1 image:"},
        {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{png}"}},
    ]}
    assert len(with_images) == 4
    assert png not in str(openai_messages(history, tool_images=False))


def test_anthropic_describes_tool_images_to_a_model_known_not_to_see() -> None:
    png = b64(make_png(2, 2))
    call = ToolCall("toolu_1", "screenshot", "{}", "[image: image/png, 75 bytes]", status="done")
    history = [
        ChatMessage("u", "user", "Show me", 0),
        ChatMessage("a", "assistant", "", 0, tool_calls=[call]),
        ChatMessage("t", "tool", call.result or "", 0, tool_calls=[call.copy()],
                    extra={"images": [{"mime": "image/png", "data": png}]}),
    ]
    seeing = anthropic_messages(history)
    assert seeing[-1]["content"][0]["content"][1]["source"]["data"] == png
    blind = anthropic_messages(history, tool_images=False)
    assert blind[-1]["content"][0] == {"type": "tool_result", "tool_use_id": "toolu_1",
                                       "content": "[image: image/png, 75 bytes]"}
