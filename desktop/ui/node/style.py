"""Colours and the style sheet of a chat node's internals, derived from the widget's ``QPalette``.

Nothing here hard-codes a light or dark colour: every colour is a palette role or a blend of two
roles, so a node follows the application's light/dark scheme (and restyles itself on a
``PaletteChange``). The Markdown theme for message bodies comes from the same colours.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from PySide6.QtGui import QColor, QPalette

from desktop.ui.markdown.theme import MarkdownTheme  # light: the renderer loads after the first paint
from desktop.ui.theme import arrow_image

log = logging.getLogger(__name__)

__all__ = ["NodeColors", "node_colors", "node_stylesheet", "markdown_theme", "is_dark", "mix"]


def mix(a: QColor, b: QColor, t: float) -> QColor:
    """Blend ``a`` towards ``b`` by ``t`` (0 = a, 1 = b)."""
    return QColor(
        round(a.red() + (b.red() - a.red()) * t),
        round(a.green() + (b.green() - a.green()) * t),
        round(a.blue() + (b.blue() - a.blue()) * t),
    )


def is_dark(palette: QPalette) -> bool:
    """True when the palette's window colour is dark."""
    return palette.color(QPalette.ColorRole.Window).lightness() < 128


@dataclass(frozen=True, slots=True)
class NodeColors:
    """The colours a chat node is painted with (``#rrggbb`` strings)."""

    window: str
    base: str
    text: str
    muted: str
    border: str
    subtle_border: str
    accent: str
    accent_text: str
    user_bubble: str
    user_border: str
    card_bg: str
    code_bg: str
    link: str
    chip_bg: str
    error_bg: str
    error_border: str
    error_text: str
    warn_bg: str
    warn_border: str
    ok_text: str


def node_colors(palette: QPalette) -> NodeColors:
    """Derive the node colours from ``palette``."""
    role = QPalette.ColorRole
    window = palette.color(role.Window)
    base = palette.color(role.Base)
    text = palette.color(role.Text)
    accent = palette.color(role.Accent) if hasattr(role, "Accent") else palette.color(role.Highlight)
    if not accent.isValid() or accent == base:
        accent = palette.color(role.Highlight)
    dark = is_dark(palette)
    muted = mix(text, base, 0.42)
    border = mix(base, text, 0.16)
    red = QColor("#e5484d")
    amber = QColor("#e2a336")
    green = QColor("#30a46c")

    def hx(c: QColor) -> str:
        return str(c.name())

    return NodeColors(
        window=hx(window),
        base=hx(base),
        text=hx(text),
        muted=hx(muted),
        border=hx(border),
        subtle_border=hx(mix(base, text, 0.09)),
        accent=hx(accent),
        accent_text=hx(palette.color(role.HighlightedText)),
        user_bubble=hx(mix(base, accent, 0.16 if dark else 0.09)),
        user_border=hx(mix(base, accent, 0.30 if dark else 0.22)),
        card_bg=hx(mix(base, window, 0.55)),
        code_bg=hx(mix(base, text, 0.07 if dark else 0.045)),
        link=hx(palette.color(role.Link)),
        chip_bg=hx(mix(base, text, 0.06)),
        error_bg=hx(mix(base, red, 0.16 if dark else 0.09)),
        error_border=hx(mix(base, red, 0.45)),
        error_text=hx(mix(text, red, 0.45)),
        warn_bg=hx(mix(base, amber, 0.14 if dark else 0.10)),
        warn_border=hx(mix(base, amber, 0.55)),
        ok_text=hx(mix(text, green, 0.7)),
    )


def markdown_theme(colors: NodeColors) -> MarkdownTheme:
    """The Markdown theme matching ``colors``."""
    return MarkdownTheme(
        text=colors.text,
        code_bg=colors.code_bg,
        code_border=colors.subtle_border,
        link=colors.link,
        muted=colors.muted,
        dark=QColor(colors.base).lightness() < 128,
    )


def node_stylesheet(c: NodeColors) -> str:
    """The style sheet installed on a ``ChatNodeWidget`` (it wins over the app-wide sheet)."""
    return f"""
QWidget#chatNode {{ background: {c.base}; }}
QFrame#nodeHeader {{ background: {c.window}; border: none; border-bottom: 1px solid {c.subtle_border}; }}
QLineEdit#nodeTitle {{
    border: 1px solid transparent; background: transparent; font-weight: 600; padding: 2px 4px;
}}
QLineEdit#nodeTitle:hover {{ border-color: {c.border}; }}
QLineEdit#nodeTitle:focus {{ border-color: {c.accent}; background: {c.base}; }}
QFrame#systemPrompt {{ background: {c.window}; border: none; border-bottom: 1px solid {c.subtle_border}; }}
QToolButton#systemPromptToggle {{
    border: none; background: transparent; color: {c.muted}; padding: 1px 2px;
}}
QToolButton#systemPromptToggle:hover {{ color: {c.text}; }}
QPlainTextEdit#systemPromptEdit {{
    border: 1px solid {c.border}; border-radius: 6px; background: {c.base}; padding: 2px 4px;
}}
QLabel#tokenChip, QLabel#costChip {{
    background: {c.chip_bg}; color: {c.muted}; border: 1px solid {c.subtle_border};
    border-radius: 9px; padding: 1px 8px;
}}
QLabel#costChip {{ color: {c.text}; font-weight: 600; }}
QToolButton#toolsButton {{
    border: 1px solid {c.border}; border-radius: 6px; padding: 3px 22px 3px 10px; background: {c.base};
    color: {c.text};
}}
QToolButton#toolsButton:hover, QToolButton#branchesButton:hover {{ border-color: {c.accent}; }}
QToolButton#branchesButton {{
    border: 1px solid {c.border}; border-radius: 6px; padding: 3px 10px; background: {c.base};
    color: {c.text};
}}
QToolButton#toolsButton::menu-indicator {{
    image: url("{arrow_image("down", "dark" if QColor(c.base).lightness() < 128 else "light") or ""}");
    subcontrol-origin: padding; subcontrol-position: center right; right: 7px; width: 9px; height: 9px;
}}
QProgressBar#contextMeter {{ border: none; background: {c.chip_bg}; border-radius: 1px; }}
QProgressBar#contextMeter::chunk {{ background: {c.accent}; border-radius: 1px; }}
QProgressBar#contextMeter[warning="true"]::chunk {{ background: {c.warn_border}; }}
QScrollArea#transcript {{ border: none; background: {c.base}; }}
QWidget#transcriptContent {{ background: {c.base}; }}
QTextBrowser#messageBody, QPlainTextEdit#thinkingBody {{
    border: none; background: transparent; padding: 0; margin: 0; color: {c.text};
}}
QPlainTextEdit#thinkingBody {{ color: {c.muted}; }}
QToolButton#copyCodeButton {{
    border: 1px solid {c.subtle_border}; border-radius: 5px; padding: 0 6px; color: {c.muted};
    background: {c.code_bg};
}}
QToolButton#copyCodeButton:hover {{ border-color: {c.border}; color: {c.text}; }}
QFrame#message {{ background: transparent; border: none; }}
QFrame#userBubble {{
    background: {c.user_bubble}; border: 1px solid {c.user_border}; border-radius: 12px;
}}
QLabel#userText {{ color: {c.text}; background: transparent; }}
QLabel#noteText {{ color: {c.muted}; font-style: italic; padding: 2px 6px; }}
QLabel#messageMeta {{ color: {c.muted}; }}
QLabel#stoppedMark {{ color: {c.error_text}; }}
QLabel#roleLabel {{ color: {c.muted}; font-weight: 600; }}
QToolButton#copyButton {{
    border: 1px solid transparent; border-radius: 5px; padding: 1px 6px; color: {c.muted};
    background: transparent;
}}
QToolButton#copyButton:hover {{ border-color: {c.border}; color: {c.text}; }}
QFrame#thinkingBlock {{
    border-left: 3px solid {c.border}; background: transparent; padding-left: 2px;
}}
QToolButton#thinkingToggle {{
    border: none; color: {c.muted}; background: transparent; padding: 1px 2px; font-style: italic;
}}
QToolButton#thinkingToggle:hover {{ color: {c.text}; }}
QFrame#toolCard {{
    background: {c.card_bg}; border: 1px solid {c.subtle_border}; border-radius: 8px;
}}
QFrame#toolCard QLabel {{ background: transparent; border: none; }}
QLabel#toolName {{ font-weight: 600; font-family: monospace; }}
QLabel#toolArgs {{ color: {c.muted}; font-family: monospace; }}
QLabel#toolStatus {{ color: {c.muted}; border-radius: 8px; padding: 0 6px; }}
QLabel#toolStatus[status="done"] {{ color: {c.ok_text}; }}
QLabel#toolStatus[status="error"], QLabel#toolStatus[status="denied"],
QLabel#toolStatus[status="skipped"] {{ color: {c.error_text}; }}
QLabel#toolStatus[status="awaiting_approval"] {{ color: {c.text}; font-weight: 600; }}
QToolButton#resultToggle {{ border: none; color: {c.muted}; background: transparent; padding: 0 2px; }}
QToolButton#resultToggle:hover {{ color: {c.text}; }}
QPlainTextEdit#toolResult, QPlainTextEdit#permissionArgs, QPlainTextEdit#writeContent {{
    font-family: monospace; background: {c.code_bg}; border: 1px solid {c.subtle_border};
    border-radius: 6px; padding: 4px; color: {c.text};
}}
QFrame#permissionCard {{
    background: {c.warn_bg}; border: 1px solid {c.warn_border}; border-radius: 8px;
}}
QFrame#permissionCard QLabel {{ background: transparent; border: none; }}
QPushButton#approveButton {{
    background: {c.accent}; color: {c.accent_text}; border: 1px solid {c.accent}; font-weight: 600;
}}
QPushButton#denyButton, QPushButton#alwaysAllowButton, QPushButton#retryButton {{
    background: {c.base};
}}
QFrame#errorRow {{
    background: {c.error_bg}; border: 1px solid {c.error_border}; border-radius: 8px;
}}
QFrame#errorRow QLabel {{ background: transparent; border: none; color: {c.text}; }}
QLabel#loadOlder {{ color: {c.muted}; padding: 6px; }}
QFrame#inputBar {{ background: {c.window}; border: none; border-top: 1px solid {c.subtle_border}; }}
QPlainTextEdit#chatInput {{ border-radius: 8px; padding: 6px 8px; background: {c.base}; }}
QPushButton#sendButton {{
    background: {c.accent}; color: {c.accent_text}; border: 1px solid {c.accent}; font-weight: 600;
    border-radius: 8px; padding: 6px 16px;
}}
QPushButton#sendButton[busy="true"] {{
    background: {c.base}; color: {c.error_text}; border-color: {c.error_border};
}}
QPushButton#sendButton:disabled {{ background: {c.chip_bg}; color: {c.muted}; border-color: {c.border}; }}
QToolButton#attachButton {{ border: 1px solid transparent; border-radius: 8px; padding: 5px; }}
QToolButton#attachButton:hover {{ border-color: {c.border}; background: {c.chip_bg}; }}
QFrame#attachmentChips {{ background: {c.window}; border: none; border-top: 1px solid {c.subtle_border}; }}
QFrame#attachmentChip, QFrame#attachmentFile {{
    background: {c.base}; border: 1px solid {c.border}; border-radius: 8px;
}}
QFrame#attachmentChip QLabel, QFrame#attachmentFile QLabel {{ background: transparent; border: none; }}
QLabel#attachmentBadge {{
    background: {c.chip_bg}; color: {c.muted}; border: 1px solid {c.subtle_border}; border-radius: 6px;
}}
QLabel#attachmentNote {{ color: {c.muted}; }}
QLabel#attachmentProblem, QLabel#attachmentStatus {{ color: {c.error_text}; }}
QToolButton#removeAttachmentButton {{
    border: none; color: {c.muted}; background: transparent; padding: 0 3px;
}}
QToolButton#removeAttachmentButton:hover {{ color: {c.error_text}; }}
QToolButton#attachmentThumb {{
    background: {c.code_bg}; border: 1px solid {c.subtle_border}; border-radius: 8px;
}}
QToolButton#attachmentThumb:hover {{ border-color: {c.accent}; }}
QToolButton#attachmentPlaceholder, QFrame#attachmentPlaceholder {{
    background: {c.error_bg}; border: 1px dashed {c.error_border}; border-radius: 8px; color: {c.error_text};
}}
QFrame#attachmentPlaceholder QLabel {{ background: transparent; border: none; }}
QFrame#visionCard {{ background: {c.warn_bg}; border: 1px solid {c.warn_border}; border-radius: 8px; }}
QFrame#visionCard QLabel {{ background: transparent; border: none; }}
"""
