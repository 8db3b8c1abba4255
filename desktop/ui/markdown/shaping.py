"""When text may be laid out without OpenType shaping (``QFont.PreferNoShaping``), and the font for it.

Shaping (kerning, ligatures, contextual forms, mark positioning) is most of what laying text out
costs: without it, Qt lays out Latin text ~30-40 % faster. For Latin it is cosmetic; for Arabic it
is not (letters lose their joined forms), nor for a letter followed by a combining accent (the accent
is drawn after the letter instead of on it), nor for emoji sequences joined by U+200D. Qt does not
make that distinction for us: with ``PreferNoShaping`` it shapes none of it (measured with Qt 6.11).

So the flag is only set for text made entirely of characters that never need shaping: Latin-1,
Latin Extended and IPA (below U+0300, i.e. before the combining marks), Greek and Cyrillic (their
combining marks excluded), precomposed Vietnamese and polytonic Greek letters, the punctuation and
symbols answers are full of (dashes, quotes, bullets, ellipsis, currency, arrows, maths, box
drawing) without the zero-width joiners and the bidirectional controls, and CJK ideographs, kana,
Hangul syllables and full-width forms (no contextual forms; their combining marks excluded).
Emoji are not in the list: skin tones, flags, keycaps and joined sequences are shaping.
"""

from __future__ import annotations

import logging
import re

from PySide6.QtGui import QFont

log = logging.getLogger(__name__)

__all__ = ["needs_shaping", "layout_font"]

_NEEDS_SHAPING = re.compile(
    "[^\u0000-\u02ff"  # ASCII, Latin-1, Latin Extended-A/B, IPA, spacing modifiers
    "\u0370-\u0482\u048a-\u052f"  # Greek, Cyrillic (not its combining marks U+0483-9)
    "\u1e00-\u1fff"  # Latin Extended Additional (Vietnamese), Greek Extended: precomposed letters
    "\u2000-\u200b"  # spaces, zero-width space (not ZWNJ/ZWJ U+200C/D, nor LRM/RLM U+200E/F)
    "\u2010-\u2027"  # dashes, quotes, bullets, ellipsis (not U+2028/9, nor the bidi embeddings U+202A-E)
    "\u2030-\u205e"  # per mille, primes, other punctuation (not the invisible operators and isolates)
    "\u20a0-\u20cf"  # currency
    "\u2100-\u23ff"  # letterlike, number forms, arrows, mathematical operators, technical
    "\u2460-\u25ff"  # enclosed alphanumerics, box drawing, blocks, geometric shapes
    "\u2e80-\u2fdf"  # CJK radicals
    "\u3000-\u3029\u3030-\u3098\u309b-\u30ff"  # CJK punctuation, kana (not the combining marks)
    "\u3100-\u4dbf\u4e00-\u9fff"  # bopomofo, Hangul compatibility jamo, CJK ideographs
    "\uac00-\ud7a3\uf900-\ufaff\uff01-\uffef"  # Hangul syllables, compatibility ideographs, full width
    "]"
)


def needs_shaping(text: str) -> bool:
    """True when ``text`` holds a character that may need OpenType shaping to be shown right."""
    return not text.isascii() and _NEEDS_SHAPING.search(text) is not None


def layout_font(font: QFont, *, shaped: bool) -> QFont:
    """``font`` with ``PreferNoShaping`` set (``shaped`` False) or cleared (``shaped`` True)."""
    out = QFont(font)
    strategy = out.styleStrategy()
    no_shaping = QFont.StyleStrategy.PreferNoShaping
    out.setStyleStrategy(strategy & ~no_shaping if shaped else strategy | no_shaping)
    return out
