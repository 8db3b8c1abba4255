"""The made-up files the feature screenshots use: a chart drawn with ``QPainter`` (PNG), a two-page
report written with ``QPdfWriter`` and a small ChatGPT data export (``conversations.json`` in a zip).
Nothing is downloaded; every byte is generated here."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path
from typing import Any

from PySide6.QtCore import QMarginsF, QPointF, QRectF, Qt
from PySide6.QtGui import QColor, QFont, QImage, QPageLayout, QPageSize, QPainter, QPdfWriter, QPen

__all__ = ["chart_png", "chatgpt_export", "receipt_png", "report_pdf"]

_WEEKS = [("W1", 412), ("W2", 468), ("W3", 455), ("W4", 530), ("W5", 612), ("W6", 590), ("W7", 688)]


def chart_png(path: Path, width: int = 720, height: int = 440) -> Path:
    """A bar chart of weekly sign-ups, as a user would paste a screenshot of a dashboard."""
    image = QImage(width, height, QImage.Format.Format_RGB32)
    image.fill(QColor("#ffffff"))
    painter = QPainter(image)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    title = QFont("DejaVu Sans", 15)
    title.setBold(True)
    painter.setFont(title)
    painter.setPen(QColor("#1f2937"))
    painter.drawText(QRectF(28, 16, width - 56, 30), Qt.AlignmentFlag.AlignLeft, "Weekly sign-ups")
    painter.setFont(QFont("DejaVu Sans", 10))
    painter.setPen(QColor("#6b7280"))
    painter.drawText(QRectF(28, 44, width - 56, 20), Qt.AlignmentFlag.AlignLeft, "Q3, all regions")
    left, top, right, bottom = 70.0, 84.0, width - 28.0, height - 50.0
    top_value = 800
    for value in range(0, top_value + 1, 200):
        y = bottom - (bottom - top) * value / top_value
        painter.setPen(QPen(QColor("#e5e7eb"), 1))
        painter.drawLine(QPointF(left, y), QPointF(right, y))
        painter.setPen(QColor("#6b7280"))
        painter.drawText(QRectF(0, y - 10, left - 10, 20),
                         Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter, str(value))
    slot = (right - left) / len(_WEEKS)
    for i, (week, value) in enumerate(_WEEKS):
        x = left + i * slot + slot * 0.2
        bar_top = bottom - (bottom - top) * value / top_value
        colour = QColor("#2563eb") if i < len(_WEEKS) - 1 else QColor("#f59e0b")
        painter.fillRect(QRectF(x, bar_top, slot * 0.6, bottom - bar_top), colour)
        painter.setPen(QColor("#374151"))
        painter.drawText(QRectF(x - 10, bar_top - 22, slot * 0.6 + 20, 18), Qt.AlignmentFlag.AlignCenter,
                         str(value))
        painter.drawText(QRectF(x - 10, bottom + 8, slot * 0.6 + 20, 18), Qt.AlignmentFlag.AlignCenter, week)
    painter.setPen(QPen(QColor("#9ca3af"), 1.5))
    painter.drawLine(QPointF(left, bottom), QPointF(right, bottom))
    painter.end()
    if not image.save(str(path)):
        raise OSError(f"could not write {path}")
    return path


_RECEIPT = [("2 x Croissant", "3.80"), ("Pain au levain 800 g", "6.50"), ("Flat white", "3.90"),
            ("Tarte aux pralines", "4.70")]


def receipt_png(path: Path, width: int = 360, height: int = 520) -> Path:
    """A photographed till receipt (grey table, white paper), as a phone would send it."""
    image = QImage(width, height, QImage.Format.Format_RGB32)
    image.fill(QColor("#8d8f94"))
    painter = QPainter(image)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    paper = QRectF(40, 24, width - 80, height - 48)
    painter.fillRect(paper, QColor("#fbfaf6"))
    mono = QFont("DejaVu Sans Mono", 10)
    bold = QFont(mono)
    bold.setBold(True)
    painter.setPen(QColor("#222222"))
    painter.setFont(bold)
    centre = Qt.AlignmentFlag.AlignCenter
    painter.drawText(QRectF(paper.left(), 44, paper.width(), 20), centre, "LEVAIN & CO.")
    painter.setFont(mono)
    painter.drawText(QRectF(paper.left(), 64, paper.width(), 20), centre, "12 rue d'Austerlitz, Lyon")
    y = 110.0
    left, right = paper.left() + 16, paper.right() - 16
    for item, price in _RECEIPT:
        painter.drawText(QPointF(left, y), item)
        painter.drawText(QRectF(left, y - 14, right - left, 20), Qt.AlignmentFlag.AlignRight, price)
        y += 26
    painter.setPen(QPen(QColor("#444444"), 1, Qt.PenStyle.DashLine))
    painter.drawLine(QPointF(left, y), QPointF(right, y))
    painter.setPen(QColor("#222222"))
    painter.setFont(bold)
    painter.drawText(QPointF(left, y + 26), "TOTAL EUR")
    painter.drawText(QRectF(left, y + 12, right - left, 20), Qt.AlignmentFlag.AlignRight, "18.90")
    painter.setFont(mono)
    painter.drawText(QPointF(left, y + 56), "VAT 5.5% incl.   0.99")
    painter.drawText(QPointF(left, y + 80), "CARD **** 4821")
    footer = QRectF(paper.left(), paper.bottom() - 40, paper.width(), 20)
    painter.drawText(footer, centre, "Merci et à bientôt !")
    painter.end()
    if not image.save(str(path)):
        raise OSError(f"could not write {path}")
    return path


_PAGES = [
    ("Q3 growth report", [
        "Sign-ups grew 67% over the quarter, from 412 in the first week to 688 in the last.",
        "Week 6 dipped while the pricing page was rebuilt; the new page converts 18% better.",
        "Most new accounts come from the EU (41%) and North America (37%).",
    ]),
    ("Next quarter", [
        "Target: 900 sign-ups a week by the end of Q4.",
        "Run the onboarding e-mail test in all regions.",
        "Hire a second support engineer for the APAC time zones.",
    ]),
]


def report_pdf(path: Path) -> Path:
    """A two-page A4 report with a real text layer (what a user drops in to ask about)."""
    writer = QPdfWriter(str(path))
    writer.setTitle("Q3 growth report")
    writer.setCreator("Chat Nodes screenshots")
    writer.setPageLayout(QPageLayout(QPageSize(QPageSize.PageSizeId.A4), QPageLayout.Orientation.Portrait,
                                     QMarginsF(20, 20, 20, 20), QPageLayout.Unit.Millimeter))
    writer.setResolution(96)
    painter = QPainter(writer)
    for number, (heading, lines) in enumerate(_PAGES):
        if number:
            writer.newPage()
        font = QFont("DejaVu Sans", 20)
        font.setBold(True)
        painter.setFont(font)
        painter.drawText(QPointF(0, 40), heading)
        painter.setFont(QFont("DejaVu Sans", 11))
        for i, line in enumerate(lines):
            painter.drawText(QPointF(0, 100 + i * 28), line)
    painter.end()
    return path


def _conversation(conv_id: str, title: str, t0: float, turns: list[tuple[str, str]]) -> dict[str, Any]:
    """One conversation in the export's shape: a ``mapping`` tree from ``client-created-root``."""
    root = "client-created-root"
    mapping: dict[str, dict[str, Any]] = {root: {"id": root, "message": None, "parent": None, "children": []}}
    parent, t = root, t0
    for i, (role, text) in enumerate(turns):
        t += 40.0
        nid = f"{conv_id}-m{i}"
        message = {
            "id": nid, "author": {"role": role, "name": None, "metadata": {}}, "create_time": t,
            "update_time": None, "content": {"content_type": "text", "parts": [text]},
            "status": "finished_successfully", "end_turn": True, "weight": 1.0,
            "metadata": {"model_slug": "gpt-4o"} if role == "assistant" else {}, "recipient": "all",
            "channel": None,
        }
        mapping[nid] = {"id": nid, "message": message, "parent": parent, "children": []}
        mapping[parent]["children"].append(nid)
        parent = nid
    return {"title": title, "create_time": t0, "update_time": t, "mapping": mapping, "moderation_results": [],
            "current_node": parent, "plugin_ids": None, "conversation_id": conv_id,
            "conversation_template_id": None, "gizmo_id": None, "is_archived": False, "safe_urls": [],
            "default_model_slug": "gpt-4o", "id": conv_id}


_CHATS: list[tuple[str, list[str]]] = [
    ("Sourdough starter schedule", [
        "My starter doubles in 4 hours at 24 °C. When should I feed it for a Saturday bake?",
        "Feed it Friday at 8 pm at 1:5:5, then again Saturday at 7 am; it peaks around 11.",
        "And if my kitchen is colder?",
        "At 20 °C add about two hours, or use 30 °C water for the morning feed.",
    ]),
    ("Regex for ISO dates", [
        "A regex that matches 2024-03-17 but not 2024-13-40?",
        r"`^\d{4}-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])$`; check the day per month in code.",
    ]),
    ("Cover letter for the data analyst job", [
        "Help me open a cover letter for a junior data analyst role at a logistics firm.",
        "Lead with the delivery-time dashboard you built: it is exactly their problem.",
        "Make it shorter.",
        "“I cut late deliveries by 12% with one dashboard; I would like to do that for you.”",
    ]),
    ("Kyoto in November", [
        "Three days in Kyoto mid-November: which temples for the autumn leaves?",
        "Eikandō at dusk, Tōfuku-ji early, and the Sagano line to Arashiyama on day three.",
    ]),
    ("Explain Raft leader election", [
        "Explain Raft leader election like I know Paxos.",
        "Terms are ballots; a follower that hears no heartbeat becomes a candidate and asks for votes.",
        "Why randomised timeouts?",
        "So two candidates rarely split the vote twice in a row.",
    ]),
    ("Birthday gift ideas for Dad", [
        "Gift ideas for a dad who likes birds and hates clutter?",
        "A year of a bird-feeder seed subscription, or a guided dawn walk at a reserve.",
    ]),
]


def chatgpt_export(path: Path) -> Path:
    """A ChatGPT data export (``conversations.json`` and ``user.json`` in a zip) of six conversations."""
    t0 = 1_726_000_000.0
    conversations = []
    for i, (title, texts) in enumerate(_CHATS):
        turns = [("user" if k % 2 == 0 else "assistant", text) for k, text in enumerate(texts)]
        conversations.append(_conversation(f"conv-{i + 1:03d}", title, t0 + i * 86_400 * 3, turns))
    conversations.reverse()  # the export lists the newest first
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("conversations.json", json.dumps(conversations, ensure_ascii=False))
        archive.writestr("user.json", json.dumps({"id": "user-1", "email": "ada@example.org"}))
    return path
