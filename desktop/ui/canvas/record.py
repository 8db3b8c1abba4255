"""The canvas's block of ``project.json`` (top-level key ``canvas``): the view, the cards, the forks.

::

    "canvas": {"mode": "canvas", "view": [cx, cy, zoom],
               "cards": {"<node id>": [x, y, width, height], ...},
               "edges": [{"from": "<node id>", "to": "<node id>", "message": "<message id>",
                          "label": "first words"}, ...]}

Every part is optional; a file without the block opens in the desk with each card at its node's
``x``, ``y``, ``width``, ``height``. A malformed part is dropped with a log line (the project still
opens), unknown keys are written back.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Any

log = logging.getLogger(__name__)

__all__ = ["CANVAS_KEY", "CanvasRecord", "EdgeRecord", "read_record", "write_record"]

CANVAS_KEY = "canvas"
"""The key of ``Project.extra`` the block lives under."""


@dataclass(slots=True)
class EdgeRecord:
    """One fork: ``child`` was forked from ``parent`` at message ``message``."""

    parent: str
    child: str
    message: str = ""
    label: str = ""


@dataclass(slots=True)
class CanvasRecord:
    """The canvas's saved state.

    Attributes:
        mode: ``desk`` (the MDI area / tabs) or ``canvas``.
        view: ``(cx, cy, zoom)``: the board's centre and zoom, or None (fit all).
        cards: Each card's ``(x, y, width, height)`` by node id.
        edges: The forks.
        extra: Unknown keys, written back.
    """

    mode: str = "desk"
    view: tuple[float, float, float] | None = None
    cards: dict[str, tuple[int, int, int, int]] = field(default_factory=dict)
    edges: list[EdgeRecord] = field(default_factory=list)
    extra: dict[str, Any] = field(default_factory=dict)


def _number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and abs(value) < 1e7


def read_record(raw: object) -> CanvasRecord:
    """The record in ``raw`` (``Project.extra["canvas"]``); what is malformed is left out."""
    record = CanvasRecord()
    if not isinstance(raw, dict):
        if raw is not None:
            log.warning("project.json: canvas must be an object; ignored")
        return record
    record.extra = {k: v for k, v in raw.items() if k not in ("mode", "view", "cards", "edges")}
    if raw.get("mode") in ("desk", "canvas"):
        record.mode = raw["mode"]
    view = raw.get("view")
    if isinstance(view, list) and len(view) == 3 and all(_number(v) for v in view) and view[2] > 0:
        record.view = (float(view[0]), float(view[1]), float(view[2]))
    cards = raw.get("cards", {})
    if isinstance(cards, dict):
        for node_id, rect in cards.items():
            if (isinstance(rect, list) and len(rect) == 4 and all(_number(v) for v in rect)
                    and rect[2] > 0 and rect[3] > 0):
                record.cards[str(node_id)] = (round(rect[0]), round(rect[1]), round(rect[2]), round(rect[3]))
            else:
                log.warning("project.json: canvas card %r is malformed; ignored", node_id)
    edges = raw.get("edges", [])
    if isinstance(edges, list):
        for item in edges:
            if isinstance(item, dict) and all(isinstance(item.get(k), str) for k in ("from", "to")):
                record.edges.append(EdgeRecord(item["from"], item["to"], str(item.get("message") or ""),
                                               str(item.get("label") or "")))
            else:
                log.warning("project.json: canvas edge %r is malformed; ignored", item)
    return record


def write_record(record: CanvasRecord) -> dict[str, Any]:
    """The JSON object of ``record``."""
    out: dict[str, Any] = dict(record.extra)
    out["mode"] = record.mode
    if record.view is not None:
        out["view"] = [round(record.view[0], 1), round(record.view[1], 1), round(record.view[2], 4)]
    out["cards"] = {node_id: list(rect) for node_id, rect in record.cards.items()}
    out["edges"] = [{"from": e.parent, "to": e.child, "message": e.message, "label": e.label}
                    for e in record.edges]
    return out
