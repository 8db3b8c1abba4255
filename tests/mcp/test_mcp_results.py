"""CallToolResult → model text and card parts, with the SDK's own result types."""

from __future__ import annotations

import base64
import json

from mcp_types import (
    AudioContent,
    BlobResourceContents,
    CallToolResult,
    EmbeddedResource,
    ImageContent,
    ResourceLink,
    TextContent,
    TextResourceContents,
)

from desktop.core.mcp import MODEL_TEXT_LIMIT, convert_result, cut_for_model


def _text(t: str) -> TextContent:
    return TextContent(type="text", text=t)


def test_text_and_error() -> None:
    ok = convert_result("s", "t", CallToolResult(content=[_text("one"), _text("two")]))
    assert (ok.text, ok.full_text, ok.is_error, ok.truncated) == ("one\ntwo", "one\ntwo", False, False)
    err = convert_result("s", "t", CallToolResult(content=[_text("boom")], is_error=True))
    assert err.is_error and err.text == "boom"
    assert convert_result("s", "t", CallToolResult(content=[])).text == ""


def test_structured_content_is_compact_json_without_duplicates() -> None:
    data = {"a": [1, 2], "b": {"c": "ü"}}
    pretty = json.dumps(data, indent=2)
    same = convert_result("s", "t", CallToolResult(content=[_text(pretty)], structured_content=data))
    assert same.text == '{"a":[1,2],"b":{"c":"ü"}}' and same.structured == data
    only = convert_result("s", "t", CallToolResult(content=[], structured_content=data))
    assert only.text == '{"a":[1,2],"b":{"c":"ü"}}'
    both = convert_result("s", "t", CallToolResult(content=[_text("summary")], structured_content=data))
    assert both.text == 'summary\n{"a":[1,2],"b":{"c":"ü"}}'
    wrapper = CallToolResult(content=[_text("hello")], structured_content={"result": "hello"})
    wrapped = convert_result("s", "t", wrapper)
    assert wrapped.text == "hello"


def test_images_audio_links_and_embedded_resources() -> None:
    png = base64.b64encode(b"\x89PNG" + b"\0" * 96).decode()
    result = CallToolResult(
        content=[
            ImageContent(type="image", data=png, mime_type="image/png"),
            AudioContent(type="audio", data=base64.b64encode(b"abc").decode(), mime_type="audio/wav"),
            ImageContent(type="image", data="!!not base64!!", mime_type="image/jpeg"),
            ResourceLink(type="resource_link", uri="https://x.test/doc", name="doc"),
            EmbeddedResource(
                type="resource", resource=TextResourceContents(uri="mem://a", text="inline text")
            ),
            EmbeddedResource(
                type="resource",
                resource=BlobResourceContents(
                    uri="mem://b", blob=base64.b64encode(b"12345").decode(), mime_type="x/y"
                ),
            ),
        ]
    )
    out = convert_result("s", "t", result)
    assert out.text.splitlines() == [
        "[image: image/png, 100 bytes]",
        "[audio: audio/wav, 3 bytes]",
        "[image: image/jpeg, invalid base64 data]",
        "[resource link: doc <https://x.test/doc>]",
        "[resource mem://a]",
        "inline text",
        "[embedded resource: mem://b (x/y, 5 bytes)]",
    ]
    assert [m.kind for m in out.media] == ["image", "audio", "image"]
    assert [m.mime for m in out.images] == ["image/png", "image/jpeg"]
    assert out.images[0].data_b64 == png
    assert out.resource_links[0].uri == "https://x.test/doc"


def test_results_over_100kb_are_cut_for_the_model_only() -> None:
    text = "é" * 60_000  # 120,000 UTF-8 bytes
    out = convert_result("s", "t", CallToolResult(content=[_text(text)]))
    assert out.truncated and out.full_text == text
    head = out.text.split("\n\n[result cut:")[0]
    assert head == "é" * (MODEL_TEXT_LIMIT // 2)
    assert "[result cut: 120,000 bytes in total, the first 100,000 are shown here" in out.text
    assert cut_for_model("short") == ("short", False)
    exact = "a" * MODEL_TEXT_LIMIT
    assert cut_for_model(exact) == (exact, False)
    odd, cut = cut_for_model("a" + "é" * MODEL_TEXT_LIMIT)
    assert cut and odd.startswith("a" + "é" * ((MODEL_TEXT_LIMIT - 1) // 2) + "\n\n[result cut")
