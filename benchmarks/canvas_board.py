"""Boards for the canvas benchmark and screenshot: projects whose ``canvas`` block places the cards.

``write_grid`` saves a project of ``n`` short nodes on a grid (every fifth node a fork of the one
before it); ``write_story`` a small board of real-looking conversations with forks and a fork whose
parent was deleted. ``python -m benchmarks.canvas_board OUT.png`` renders the story board in the
app's main window (1600×1000, canvas view, fit all) to ``OUT.png``.
"""

from __future__ import annotations

import asyncio
import logging
import sys
import tempfile
from pathlib import Path
from typing import Any

from desktop.core.chat.conversation import Conversation
from desktop.core.chat.types import ChatMessage, Usage
from desktop.core.store import NodeState, Project, ProjectStore

log = logging.getLogger(__name__)

__all__ = ["write_grid", "write_story"]

CARD_W, CARD_H, GAP = 600, 680, 120


def _conv(cid: str, texts: list[str], model: str) -> Conversation:
    messages = []
    for i, text in enumerate(texts):
        role = "user" if i % 2 == 0 else "assistant"
        usage = Usage(input_tokens=900 + 40 * i, output_tokens=350 + 10 * i) if role == "assistant" else None
        messages.append(ChatMessage(id=f"{cid}m{i}", role=role, content=text, ts=1_764_547_200_000 + i,
                                    usage=usage, model=model if role == "assistant" else None))
    return Conversation(cid, messages, 1_764_547_200_000)


def _save(folder: Path, nodes: list[NodeState], cards: dict[str, list[int]], edges: list[dict[str, str]],
          mode: str = "canvas") -> None:
    canvas: dict[str, Any] = {"mode": mode, "cards": cards, "edges": edges}
    with ProjectStore(folder) as store:
        store.save(Project(nodes=nodes, extra={"canvas": canvas}))


def write_grid(folder: Path, n: int, *, columns: int = 20, mode: str = "canvas") -> None:
    """A project of ``n`` nodes (4 short messages each) on a grid of ``columns``; forks every 5th."""
    nodes, cards, edges = [], {}, []
    for i in range(n):
        texts = [f"Question {i}: how do I do thing {i}?", f"Answer {i}: do it like this, then that.",
                 f"Follow-up {i}", f"Reply {i}: sure, here is more detail."]
        nid = f"n{i}"
        conv = _conv(f"c{i}", texts, "gpt-4o-mini")
        nodes.append(NodeState(id=nid, title=f"Node {i + 1}", conversation=conv,
                               model="gpt-4o-mini"))
        cards[nid] = [(i % columns) * (CARD_W + GAP), (i // columns) * (CARD_H + GAP), CARD_W, CARD_H]
        if i % 5 == 4:
            edges.append({"from": f"n{i - 1}", "to": nid, "message": f"c{i - 1}m2",
                          "label": f"Follow-up {i - 1}"})
    _save(folder, nodes, cards, edges, mode)


_STORY: list[tuple[str, str, str, list[str], tuple[int, int]]] = [
    ("a", "Trip to Lisbon", "gpt-4o-mini",
     ["Plan a 3-day trip to Lisbon in March for two, we like food and walking.",
      "Day 1: Alfama at sunrise, the castle, lunch at a tasca, Fado in the evening.\n"
      "Day 2: Belém (tower, monastery, pastéis), LX Factory.\nDay 3: Sintra by train."], (0, 0)),
    ("b", "Lisbon on a budget", "gpt-4o-mini",
     ["Plan a 3-day trip to Lisbon in March for two, we like food and walking.",
      "Day 1: Alfama at sunrise, the castle, lunch at a tasca, Fado in the evening.",
      "Keep it under 400 euros, no taxis.",
      "Stay in Graça, walk everywhere; a 24-hour Viva Viagem card covers Belém and Sintra."], (860, -300)),
    ("c", "Lisbon with kids", "claude-sonnet-4",
     ["Plan a 3-day trip to Lisbon in March for two, we like food and walking.",
      "Day 1: Alfama at sunrise, the castle, lunch at a tasca, Fado in the evening.",
      "Actually we are bringing two kids, 6 and 9.",
      "Swap Fado for the Oceanário; tram 28 early, before the queues; Belém has the best playground."],
     (860, 300)),
    ("d", "Rust borrow checker", "claude-sonnet-4",
     ["Why does the borrow checker reject my loop that pushes into a Vec while iterating it?",
      "Because `for x in &v` holds a shared borrow of `v` for the whole loop, and `push` needs a\n"
      "mutable one. Collect what to add first, then extend after the loop.",
      "And with indices?",
      "Indexing re-borrows each time, so `for i in 0..v.len()` compiles, but the length is fixed at start."],
     (0, 1000)),
    ("e", "Lifetimes deep dive", "claude-sonnet-4",
     ["Why does the borrow checker reject my loop that pushes into a Vec while iterating it?",
      "Because `for x in &v` holds a shared borrow of `v` for the whole loop.",
      "Explain it with lifetimes, like I'm writing a compiler.",
      "Think of `'a` as a region of the control-flow graph: the shared loan is live on every edge of the "
      "loop body, and `push` asks for a unique loan on one of them."], (860, 1000)),
    ("f", "Quarterly report", "gpt-4.1",
     ["Draft the summary of Q3: revenue up 12 %, churn down to 3.1 %, two launches.",
      "Q3 in one line: we grew faster while losing fewer customers. Revenue rose 12 % quarter on quarter…"],
     (1900, 1050)),
    ("g", "Report, board version", "gpt-4.1",
     ["Draft the summary of Q3: revenue up 12 %, churn down to 3.1 %, two launches.",
      "Shorter, for the board: three bullets, no adjectives."], (2800, 1000)),
]


def write_story(folder: Path) -> None:
    """A board of seven conversations: forks from Lisbon, Rust and the report (whose parent, a deleted
    "Q3 numbers" node, shows as a stub), laid out by hand."""
    nodes, cards = [], {}
    for key, title, model, texts, (x, y) in _STORY:
        nodes.append(NodeState(id=f"s{key}", title=title, conversation=_conv(f"c{key}", texts, model),
                               model=model))
        cards[f"s{key}"] = [x, y, CARD_W, 460]
    edges = [
        {"from": "sa", "to": "sb", "message": "cam1", "label": "Day 1: Alfama at sunrise, the…"},
        {"from": "sa", "to": "sc", "message": "cam1", "label": "Day 1: Alfama at sunrise, the…"},
        {"from": "sd", "to": "se", "message": "cdm1", "label": "Because `for x in &v` holds…"},
        {"from": "sf", "to": "sg", "message": "cfm0", "label": "Draft the summary of Q3:…"},
        {"from": "gone", "to": "sf", "message": "x", "label": "Q3 numbers"},
    ]
    _save(folder, nodes, cards, edges)


def render_story(out: Path) -> None:
    """Render the story board in the app's window to ``out`` (PNG)."""
    from PySide6.QtWidgets import QApplication

    from benchmarks._qt import app_and_loop, run_on_loop
    from desktop.app import create_main_window

    app, _loop = app_and_loop()
    app.setQuitOnLastWindowClosed(False)
    with tempfile.TemporaryDirectory(prefix="chatnodes-board-") as tmp:
        project, config = Path(tmp) / "project", Path(tmp) / "config"
        write_story(project)
        window = create_main_window(project_dir=project, config_dir=config)
        window.resize(1600, 1000)
        window.show()

        async def settle() -> None:
            for _ in range(30):
                await asyncio.sleep(0.03)
            welcome = window.banner_area.find("welcomeBanner")
            if welcome is not None:
                welcome.dismiss()
            window.canvas.fit_all()
            window.canvas.cards["sf"].setSelected(True)
            for _ in range(15):
                await asyncio.sleep(0.03)

        run_on_loop(settle())
        window.grab().save(str(out))
        closed = asyncio.Event()
        window.closed.connect(closed.set)
        window.close()
        run_on_loop(asyncio.wait_for(closed.wait(), 30))
        QApplication.processEvents()


if __name__ == "__main__":
    render_story(Path(sys.argv[1]))
