"""Application look: Fusion style, a light and a dark palette that follow the system, a modest style sheet.

Chat nodes style their internals from the palette (``QPalette`` roles only), so everything the rest of
the UI needs to know about colours lives in the palette built here. Banners use the dynamic property
``bannerKind`` (``info``, ``warning``, ``error``) and are styled by the app-wide sheet.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from PySide6.QtGui import QColor, QGuiApplication, QIcon, QPalette
from PySide6.QtWidgets import QApplication, QStyleFactory

from desktop.ui.lifetime import connect_for

log = logging.getLogger(__name__)

__all__ = ["Scheme", "ThemeColors", "LIGHT", "DARK", "build_palette", "style_sheet", "apply_theme",
           "system_scheme", "follow_system_scheme", "current_scheme", "app_icon", "resource_dir", "key_mark",
           "arrow_image",
           "KEY_MARK_TIPS"]

Scheme = Literal["light", "dark"]


@dataclass(frozen=True)
class ThemeColors:
    """The handful of colours a scheme is made of (hex strings)."""

    window: str
    base: str
    alt_base: str
    text: str
    muted: str
    border: str
    button: str
    accent: str
    accent_text: str
    highlight: str
    link: str
    info_bg: str
    info_border: str
    warn_bg: str
    warn_border: str
    error_bg: str
    error_border: str
    tooltip_bg: str
    tooltip_text: str


LIGHT = ThemeColors(
    window="#f4f5f7",
    base="#ffffff",
    alt_base="#f0f2f5",
    text="#1d2330",
    muted="#6b7385",
    border="#d5d9e0",
    button="#fbfbfc",
    accent="#4f5bd5",
    accent_text="#ffffff",
    highlight="#4f5bd5",
    link="#3949c8",
    info_bg="#eef0fd",
    info_border="#c3c8f4",
    warn_bg="#fff6e0",
    warn_border="#f0d08a",
    error_bg="#fdecec",
    error_border="#f1b4b4",
    tooltip_bg="#1d2330",
    tooltip_text="#f4f5f7",
)

DARK = ThemeColors(
    window="#1c1e24",
    base="#23262e",
    alt_base="#2a2d36",
    text="#e6e8ee",
    muted="#9097a6",
    border="#383c47",
    button="#2b2e38",
    accent="#7c87f2",
    accent_text="#10121a",
    highlight="#5c68e0",
    link="#9aa4ff",
    info_bg="#262a42",
    info_border="#3d4470",
    warn_bg="#3a3120",
    warn_border="#6b5a2e",
    error_bg="#3d2326",
    error_border="#73383e",
    tooltip_bg="#e6e8ee",
    tooltip_text="#1c1e24",
)


def colors_for(scheme: Scheme) -> ThemeColors:
    """The colour set of ``scheme``."""
    return DARK if scheme == "dark" else LIGHT


def build_palette(scheme: Scheme) -> QPalette:
    """A complete ``QPalette`` for ``scheme`` (active, inactive and disabled groups)."""
    c = colors_for(scheme)
    pal = QPalette()
    roles = {
        QPalette.ColorRole.Window: c.window,
        QPalette.ColorRole.WindowText: c.text,
        QPalette.ColorRole.Base: c.base,
        QPalette.ColorRole.AlternateBase: c.alt_base,
        QPalette.ColorRole.Text: c.text,
        QPalette.ColorRole.Button: c.button,
        QPalette.ColorRole.ButtonText: c.text,
        QPalette.ColorRole.BrightText: "#ffffff",
        QPalette.ColorRole.Highlight: c.highlight,
        QPalette.ColorRole.HighlightedText: "#ffffff",
        QPalette.ColorRole.Link: c.link,
        QPalette.ColorRole.LinkVisited: c.link,
        QPalette.ColorRole.ToolTipBase: c.tooltip_bg,
        QPalette.ColorRole.ToolTipText: c.tooltip_text,
        QPalette.ColorRole.PlaceholderText: c.muted,
        QPalette.ColorRole.Accent: c.accent,
        QPalette.ColorRole.Light: "#ffffff" if scheme == "light" else "#3a3e4a",
        QPalette.ColorRole.Midlight: c.alt_base,
        QPalette.ColorRole.Mid: c.border,
        QPalette.ColorRole.Dark: c.muted,
        QPalette.ColorRole.Shadow: "#000000",
    }
    for role, value in roles.items():
        pal.setColor(role, QColor(value))
    disabled_text = QColor(c.muted)
    disabled_text.setAlpha(150)
    for role in (QPalette.ColorRole.WindowText, QPalette.ColorRole.Text, QPalette.ColorRole.ButtonText,
                 QPalette.ColorRole.PlaceholderText):
        pal.setColor(QPalette.ColorGroup.Disabled, role, disabled_text)
    pal.setColor(QPalette.ColorGroup.Disabled, QPalette.ColorRole.Highlight, QColor(c.border))
    pal.setColor(QPalette.ColorGroup.Inactive, QPalette.ColorRole.Highlight, QColor(c.highlight))
    return pal


def style_sheet(scheme: Scheme) -> str:
    """The app-wide style sheet: spacing, rounded inputs, toolbar, status bar and banners."""
    c = colors_for(scheme)
    return f"""
QMainWindow::separator {{ width: 1px; height: 1px; background: {c.border}; }}
QToolBar {{
    background: {c.window}; border: none; border-bottom: 1px solid {c.border};
    spacing: 2px; padding: 3px 6px;
}}
QToolBar QToolButton {{
    border: 1px solid transparent; border-radius: 6px; padding: 4px 9px; color: {c.text};
}}
QToolBar QToolButton:hover {{ background: {c.alt_base}; border-color: {c.border}; }}
QToolBar QToolButton:pressed, QToolBar QToolButton:checked {{
    background: {c.info_bg}; border-color: {c.info_border};
}}
QStatusBar {{ background: {c.window}; border-top: 1px solid {c.border}; color: {c.muted}; }}
QStatusBar::item {{ border: none; }}
QStatusBar QLabel {{ color: {c.muted}; padding: 0 8px; }}
QStatusBar QLabel#sessionCostLabel {{ color: {c.text}; font-weight: 600; }}
QMenuBar {{ background: {c.window}; }}
QMenuBar::item {{ padding: 4px 10px; border-radius: 4px; }}
QMenuBar::item:selected {{ background: {c.alt_base}; }}
QMenu {{ background: {c.base}; border: 1px solid {c.border}; padding: 4px; }}
QMenu::item {{ padding: 5px 22px 5px 18px; border-radius: 4px; }}
QMenu::item:selected {{ background: {c.highlight}; color: #ffffff; }}
QMenu::separator {{ height: 1px; background: {c.border}; margin: 4px 6px; }}
QLineEdit, QPlainTextEdit, QTextEdit, QSpinBox, QDoubleSpinBox, QComboBox {{
    border: 1px solid {c.border}; border-radius: 6px; padding: 4px 6px;
    background: {c.base}; selection-background-color: {c.highlight}; selection-color: #ffffff;
}}
QLineEdit:focus, QPlainTextEdit:focus, QTextEdit:focus, QSpinBox:focus, QDoubleSpinBox:focus,
QComboBox:focus {{ border-color: {c.accent}; }}
QLineEdit:read-only {{ background: {c.alt_base}; color: {c.muted}; }}
QComboBox::drop-down {{ border: none; width: 20px; }}
QDialogButtonBox {{ dialogbuttonbox-buttons-have-icons: 0; }}
QPushButton {{
    border: 1px solid {c.border}; border-radius: 6px; padding: 5px 14px; background: {c.button};
}}
QPushButton:hover {{ border-color: {c.accent}; }}
QPushButton:pressed {{ background: {c.alt_base}; }}
QPushButton:default {{ background: {c.accent}; color: {c.accent_text}; border-color: {c.accent}; }}
QPushButton:disabled {{ color: {c.muted}; background: {c.alt_base}; }}
QDialog QToolButton {{
    border: 1px solid {c.border}; border-radius: 6px; padding: 4px 12px; background: {c.button};
}}
QDialog QToolButton:hover {{ border-color: {c.accent}; }}
QDialog QToolButton::menu-indicator {{ image: none; width: 0; }}
QListWidget, QTableWidget, QTreeView, QListView, QTableView {{
    border: 1px solid {c.border}; border-radius: 6px; background: {c.base};
    alternate-background-color: {c.alt_base};
}}
QListWidget::item {{ padding: 5px 8px; border-radius: 4px; }}
QListWidget::item:selected {{ background: {c.highlight}; color: #ffffff; }}
QHeaderView::section {{
    background: {c.alt_base}; border: none; border-bottom: 1px solid {c.border}; padding: 4px 6px;
}}
QTabBar::tab {{
    padding: 5px 14px; border: 1px solid transparent; border-top-left-radius: 6px;
    border-top-right-radius: 6px; color: {c.muted};
}}
QTabBar::tab:selected {{ background: {c.base}; border-color: {c.border}; color: {c.text}; }}
QGroupBox {{ border: 1px solid {c.border}; border-radius: 8px; margin-top: 14px; padding: 10px 8px 8px 8px; }}
QGroupBox::title {{ subcontrol-origin: margin; left: 10px; padding: 0 4px; color: {c.muted}; }}
QMdiArea {{ background: {c.window}; }}
QFrame[bannerKind] {{ border-radius: 8px; border: 1px solid {c.info_border}; background: {c.info_bg}; }}
QFrame[bannerKind="warning"] {{ border-color: {c.warn_border}; background: {c.warn_bg}; }}
QFrame[bannerKind="error"] {{ border-color: {c.error_border}; background: {c.error_bg}; }}
QFrame[bannerKind] QLabel {{ background: transparent; border: none; color: {c.text}; }}
QFrame[bannerKind] QPushButton {{ padding: 3px 10px; }}
QFrame[bannerKind] QToolButton {{ border: none; background: transparent; color: {c.muted}; padding: 2px; }}
QToolTip {{ background: {c.tooltip_bg}; color: {c.tooltip_text}; border: none; padding: 4px 6px; }}
{_SCROLL_BARS.format(handle=c.border, hover=c.muted)}{_arrows(scheme, c)}"""


def _arrows(scheme: Scheme, c: ThemeColors) -> str:
    """The arrows of combo and spin boxes: once their frame is styled, Qt draws none (combo boxes) or
    bare brackets (spin boxes, Fusion) unless the sheet gives them images (``resources/icons``)."""
    down, up = arrow_image("down", scheme), arrow_image("up", scheme)
    if down is None or up is None:
        return ""
    spin = "QSpinBox::{0}, QDoubleSpinBox::{0}"
    return f"""
QComboBox::down-arrow {{ image: url("{down}"); width: 10px; height: 10px; }}
QComboBox::down-arrow:disabled {{ image: none; }}
QSpinBox, QDoubleSpinBox {{ padding-right: 22px; }}
{spin.format("up-button")}, {spin.format("down-button")} {{
    subcontrol-origin: border; width: 20px; border: none; border-left: 1px solid {c.border};
}}
{spin.format("up-button")} {{ subcontrol-position: top right; border-top-right-radius: 6px; }}
{spin.format("down-button")} {{ subcontrol-position: bottom right; border-bottom-right-radius: 6px; }}
{spin.format("up-button:hover")}, {spin.format("down-button:hover")} {{ background: {c.alt_base}; }}
{spin.format("up-arrow")} {{ image: url("{up}"); width: 9px; height: 9px; }}
{spin.format("down-arrow")} {{ image: url("{down}"); width: 9px; height: 9px; }}
"""


# Thin scroll bars, a rounded handle, no arrow buttons. Also a speed fix: Fusion draws its own scroll
# bar in ~1.7 ms (gradients, every time), and a transcript's bar repaints on every streamed frame and
# every scroll step; drawn from these rules it costs ~0.02 ms.
_SCROLL_BARS = """
QScrollBar:vertical {{ background: transparent; width: 12px; margin: 0; border: none; }}
QScrollBar:horizontal {{ background: transparent; height: 12px; margin: 0; border: none; }}
QScrollBar::handle {{ background: {handle}; border-radius: 3px; }}
QScrollBar::handle:vertical {{ min-height: 32px; margin: 2px 3px; }}
QScrollBar::handle:horizontal {{ min-width: 32px; margin: 3px 2px; }}
QScrollBar::handle:hover, QScrollBar::handle:pressed {{ background: {hover}; }}
QScrollBar::add-line, QScrollBar::sub-line {{ width: 0; height: 0; border: none; background: none; }}
QScrollBar::add-page, QScrollBar::sub-page {{ background: none; }}
QScrollBar[idle="true"]::handle, QScrollBar[idle="true"]::handle:hover {{ background: transparent; }}
"""


def system_scheme(*, exact: bool = True) -> Scheme:
    """The system colour scheme; light when unknown.

    Args:
        exact: Ask ``QStyleHints.colorScheme()`` (creating Qt's enum namespace costs ~25 ms, so the
            first theme before the first paint passes False). False, or an unknown scheme, falls back
            to the lightness of the platform palette, which follows the system scheme on current
            platforms.
    """
    app = QGuiApplication.instance()
    if app is None:
        return "light"
    if exact:
        try:
            name = QGuiApplication.styleHints().colorScheme().name
        except AttributeError:  # Qt < 6.5
            name = "Unknown"
        if name in ("Dark", "Light"):
            return "dark" if name == "Dark" else "light"
    if _current_applied:
        return _current  # the app palette is ours now: it says nothing about the system
    window = QGuiApplication.palette().color(QPalette.ColorRole.Window)
    return "dark" if window.lightness() < 128 else "light"


_current: Scheme = "light"
_current_applied = False


def current_scheme() -> Scheme:
    """The scheme applied last by ``apply_theme``."""
    return _current


def apply_theme(app: QApplication, scheme: Scheme | None = None) -> Scheme:
    """Apply Fusion, the palette and the style sheet of ``scheme`` (the system's when None).

    Returns:
        The scheme applied.
    """
    global _current, _current_applied
    chosen: Scheme = scheme if scheme is not None else system_scheme()
    fusion = QStyleFactory.create("Fusion")
    if fusion is not None and app.style().name().lower() != "fusion":
        app.setStyle(fusion)
    app.setPalette(build_palette(chosen))
    app.setStyleSheet(style_sheet(chosen))
    _current = chosen
    _current_applied = True
    log.debug("theme applied: %s", chosen)
    return chosen


def follow_system_scheme(app: QApplication) -> None:
    """Re-apply the theme whenever the system colour scheme changes."""
    try:
        hints = QGuiApplication.styleHints()
        connect_for(app, hints.colorSchemeChanged, lambda _scheme: apply_theme(app))
    except AttributeError:  # Qt < 6.5
        log.debug("colorSchemeChanged not available; the theme will not follow the system")


def arrow_image(direction: Literal["up", "down"], scheme: Scheme) -> str | None:
    """The path of the small ``up``/``down`` chevron for ``scheme`` as a style sheet ``url()`` wants it
    (``resources/icons/arrow-<direction>-<scheme>.png``), or None when the files are missing."""
    folder = resource_dir()
    if folder is None:
        return None
    path = folder / "icons" / f"arrow-{direction}-{scheme}.png"
    return path.as_posix() if path.is_file() else None


def resource_dir() -> Path | None:
    """The folder with the app icons: ``desktop/resources`` (installed) or the repository's ``resources``."""
    here = Path(__file__).resolve().parent.parent  # desktop/
    for candidate in (here / "resources", here.parent / "resources"):
        if (candidate / "icons").is_dir():
            return candidate
    return None


def app_icon() -> QIcon:
    """The application icon (every PNG size plus the SVG); an empty icon when the files are missing."""
    icon = QIcon()
    folder = resource_dir()
    if folder is None:
        log.debug("app icon files not found")
        return icon
    icons = folder / "icons"
    for png in sorted(icons.glob("chatnodes-*.png")):
        icon.addFile(str(png))
    svg = icons / "chatnodes.svg"
    if svg.is_file():
        icon.addFile(str(svg))
    return icon


KEY_MARK_TIPS = {True: "A key is set for this provider", False: "This provider needs an API key: none is set",
                 None: "This provider works without a key"}
"""The tooltip of each :func:`key_mark`."""

_key_marks: dict[tuple[bool | None, Scheme], QIcon] = {}


def key_mark(has_key: bool | None) -> QIcon:
    """What a provider list shows beside a provider: a green check when a key is set (``True``), a hollow
    circle when it needs one and none is set (``False``), a blank of the same size when it needs none
    (``None``), so the names stay aligned."""
    from PySide6.QtCore import QPointF, Qt
    from PySide6.QtGui import QPainter, QPainterPath, QPen, QPixmap

    key = (has_key, _current)
    icon = _key_marks.get(key)
    if icon is not None:
        return icon
    def draw(color: str) -> QPixmap:
        pixmap = QPixmap(32, 32)  # drawn at twice the 16 px it shows at, for high-DPI screens
        pixmap.fill(Qt.GlobalColor.transparent)
        if has_key is None:
            return pixmap
        painter = QPainter(pixmap)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        pen = QPen(QColor(color), 4.2 if has_key else 2.6)
        pen.setCapStyle(Qt.PenCapStyle.RoundCap)
        pen.setJoinStyle(Qt.PenJoinStyle.RoundJoin)
        painter.setPen(pen)
        if has_key:
            path = QPainterPath(QPointF(7, 17))
            path.lineTo(QPointF(13.5, 23.5))
            path.lineTo(QPointF(25, 9))
            painter.drawPath(path)
        else:
            painter.drawEllipse(QPointF(16, 16), 8.5, 8.5)
        painter.end()
        return pixmap

    green = "#2f9e5b" if _current == "light" else "#5cc98a"
    icon = QIcon(draw(green if has_key else colors_for(_current).muted))
    icon.addPixmap(draw("#ffffff"), QIcon.Mode.Selected)  # on the selection's highlight
    _key_marks[key] = icon
    return icon
