"""Input tokens of attachments estimated before a send (the context meter shows them)."""

from __future__ import annotations

import pytest

from desktop.core.attachments import AttachmentRef, estimate_tokens, image_tokens, ref_tokens
from desktop.core.usage import ModelCapabilities

SHA = "0f" * 32


@pytest.mark.parametrize(("size", "tokens"), [
    ((1024, 1024), 765),  # OpenAI's worked example: 768² after scaling, 4 tiles
    ((2048, 4096), 1105),  # fit 2048²: 1024×2048, short side 768: 768×1536, 2×3 tiles
    ((512, 512), 255),  # small: one tile, never scaled up
    ((6000, 4000), 1105),  # 2048×1365 → 1152×768: 3×2 tiles
])
def test_openai_image_tokens_follow_the_tile_formula(size: tuple[int, int], tokens: int) -> None:
    assert image_tokens(*size, "openai") == tokens


@pytest.mark.parametrize(("size", "tokens"), [
    ((1000, 1000), 1334),  # 1,000,000 / 750
    ((200, 200), 54),
    ((6000, 4000), 1532),  # fitted to 1313×875 (≤ 1568 px, ≤ 1.15 MP)
    ((1568, 100), 210),
])
def test_anthropic_image_tokens_are_pixels_over_750_after_fitting(size: tuple[int, int], tokens: int) -> None:
    assert image_tokens(*size, "anthropic") == tokens


def test_each_kind_has_an_estimate() -> None:
    image = AttachmentRef("a.png", "image/png", 10_000, SHA, "image", width=1000, height=1000)
    text = AttachmentRef("a.py", "text/plain", 4_000, SHA, "text")
    huge_text = AttachmentRef("a.log", "text/plain", 40_000_000, SHA, "text")
    pdf = AttachmentRef("a.pdf", "application/pdf", 90_000, SHA, "pdf", pages=3)
    other = AttachmentRef("a.zip", "application/zip", 5_000_000, SHA, "other")
    seeing = ModelCapabilities(vision=True, pdf=True)
    assert ref_tokens(image, api="anthropic", caps=seeing) == 1334
    assert ref_tokens(image, api="openai", caps=ModelCapabilities(vision=False)) == 30  # a note instead
    assert ref_tokens(text, api="openai") == 30 + 1000
    assert ref_tokens(huge_text, api="openai") == 30 + 262_144  # only the first MiB is sent
    assert ref_tokens(pdf, api="anthropic", caps=seeing) == 30 + 3 * 2250
    assert ref_tokens(pdf, api="openai") == 30 + 3 * 500  # unknown model: sent as text
    assert ref_tokens(other, api="anthropic") == 30
    assert estimate_tokens([image, text], api="anthropic", model="claude-sonnet-4-5") == 1334 + 1030
    assert estimate_tokens([image], api="openai", model="o3-mini") == 30
