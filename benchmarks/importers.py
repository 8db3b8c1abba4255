"""Import time of a 1,000-conversation ChatGPT export, into a new project (DESIGN.md §8, issue 29).

The export is built in a temp folder, shaped like a real one: a zip with ``conversations.json`` (a
hidden system message and ``user_editable_context`` at the top of each tree, float times, model slugs,
``recipient``), conversations of 6 to 60 messages with Markdown-rich answers from the corpus
(``benchmarks.corpus.make_answer``), a third of them with a regenerated answer and an edited
question, some with thoughts, code and its output. Ours is the whole ``python -m desktop import``
path minus printing: ``import_into_project`` into an empty project folder (stream, convert, build
versions, save ``project.json`` and the archive). The baseline, measured in the same run, is the least
any importer must do: read the member from the zip and ``json.loads`` it.

``measure()`` returns a plain result dict; ``run(settings)`` gives the suite's row.
"""

from __future__ import annotations

import json
import logging
import random
import shutil
import tempfile
import zipfile
from pathlib import Path
from typing import Any

from benchmarks._harness import Row, Settings, median, paired, timed
from benchmarks.corpus import make_answer
from desktop.core.importers import import_into_project
from desktop.core.store import ProjectStore

log = logging.getLogger(__name__)

__all__ = ["CONVERSATIONS", "build_export", "measure", "run"]

CONVERSATIONS = 1_000
_QUESTIONS = ("How do I stream a big JSON file in Python?", "Résumé de la réunion, s'il te plaît.",
              "Write a SQL query for the top customers by revenue.", "为什么这个测试在 CI 上失败？",
              "Plan a three-day trip to Rome 🚀", "Explain the borrow checker like I am five.")


def _message(nid: str, role: str, t: float, content: dict[str, Any], *, recipient: str = "all",
             model: str | None = None) -> dict[str, Any]:
    return {"id": nid, "author": {"role": role, "name": None, "metadata": {}}, "create_time": t,
            "update_time": None, "content": content, "status": "finished_successfully", "end_turn": True,
            "weight": 1.0, "metadata": {"model_slug": model} if model else {}, "recipient": recipient}


def _conversation(i: int, rng: random.Random) -> dict[str, Any]:
    t = 1_700_000_000.0 + i * 3600
    mapping: dict[str, dict[str, Any]] = {}

    def add(nid: str, parent: str | None, msg: dict[str, Any] | None) -> str:
        mapping[nid] = {"id": nid, "message": msg, "parent": parent, "children": []}
        if parent is not None:
            mapping[parent]["children"].append(nid)
        return nid

    add("root", None, None)
    top = add("sys", "root", _message("sys", "system", t, {"content_type": "text", "parts": [""]}))
    mapping["sys"]["message"]["metadata"] = {"is_visually_hidden_from_conversation": True}
    top = add("ctx", top, _message("ctx", "user", t, {"content_type": "user_editable_context",
                                                       "user_profile": "", "user_instructions": "Be brief"}))
    parent, k = top, 0
    exchanges = rng.randint(3, 30)
    branchy = i % 3 == 0
    for x in range(exchanges):
        k += 1
        t += 30
        question = _QUESTIONS[(i + x) % len(_QUESTIONS)]
        q = add(f"u{k}", parent, _message(f"u{k}", "user", t, {"content_type": "text", "parts": [question]}))
        if branchy and x == 1:  # an edited question with its own answer
            edited = {"content_type": "text", "parts": ["(edited) " + question]}
            e = add(f"e{k}", parent, _message(f"e{k}", "user", t + 5, edited))
            add(f"ea{k}", e, _message(f"ea{k}", "assistant", t + 6, {"content_type": "text", "parts": [
                make_answer(i * 100 + x, 400)]}, model="gpt-4o"))
        at = q
        if x % 7 == 3:  # code and its output
            at = add(f"c{k}", at, _message(f"c{k}", "assistant", t + 1, {"content_type": "code",
                                                                       "language": "unknown",
                                                                       "text": "print(sum(range(10)))"},
                                           recipient="python", model="gpt-4o"))
            at = add(f"o{k}", at, _message(f"o{k}", "tool", t + 2, {"content_type": "execution_output",
                                                                  "text": "45"}))
        if x % 5 == 2:
            thoughts = {"content_type": "thoughts",
                        "thoughts": [{"summary": "Plan", "content": "Thinking about the question."}]}
            at = add(f"t{k}", at, _message(f"t{k}", "assistant", t + 3, thoughts))
        a = add(f"a{k}", at, _message(f"a{k}", "assistant", t + 4, {"content_type": "text", "parts": [
            make_answer(i * 100 + x, rng.randint(300, 1_800))]}, model="gpt-4o"))
        if branchy and x == exchanges - 1:  # a regenerated last answer
            add(f"r{k}", at, _message(f"r{k}", "assistant", t + 8, {"content_type": "text", "parts": [
                make_answer(i * 100 + x + 50, 600)]}, model="gpt-4o"))
        parent = a
    return {"title": f"Conversation {i}: {_QUESTIONS[i % len(_QUESTIONS)]}",
            "create_time": 1_700_000_000.0 + i * 3600,
            "update_time": t, "mapping": mapping, "current_node": parent, "conversation_id": f"conv-{i:05d}",
            "id": f"conv-{i:05d}", "default_model_slug": "gpt-4o", "is_archived": False}


def build_export(path: Path, conversations: int, seed: int = 29) -> int:
    """Write a ChatGPT export zip of ``conversations`` conversations; returns the JSON's size in bytes."""
    rng = random.Random(seed)
    data = json.dumps([_conversation(i, rng) for i in range(conversations)], ensure_ascii=False).encode()
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("conversations.json", data)
        zf.writestr("user.json", b"{}")
    return len(data)


def _baseline(path: Path) -> float:
    def work() -> None:
        with zipfile.ZipFile(path) as zf:
            json.loads(zf.read("conversations.json"))
    return timed(work)


def measure(conversations: int = CONVERSATIONS, runs: int = 5, *, warmup: int = 1) -> dict[str, Any]:
    """Time ``import_into_project`` of a ``conversations``-conversation export into a fresh project.

    Returns:
        ``{"conversations", "json_bytes", "runs", "ours_ms", "baseline_ms", "ours_median_ms",
        "baseline_median_ms", "ratio", "messages", "nodes"}``.
    """
    with tempfile.TemporaryDirectory(prefix="chatnodes-import-bench-") as tmp:
        root = Path(tmp)
        export = root / "export.zip"
        size = build_export(export, conversations)
        counter = [0]
        facts: dict[str, int] = {}

        def ours() -> float:
            counter[0] += 1
            folder = root / f"project-{counter[0]}"

            def work() -> None:
                with ProjectStore(folder) as store:
                    outcome, _ = import_into_project(store, export)
                if len(outcome.report.imported) != conversations or outcome.report.problems:
                    raise RuntimeError(f"imported {len(outcome.report.imported)} of {conversations}: "
                                       f"{outcome.report.problems[:3]}")
                facts["messages"] = sum(i.messages for i in outcome.report.imported)
                facts["nodes"] = len(outcome.nodes)
            ms = timed(work)
            shutil.rmtree(folder, ignore_errors=True)
            return ms

        ours_ms, base_ms = paired(ours, lambda: _baseline(export), runs, warmup=warmup)
    ours_med, base_med = median(ours_ms), median(base_ms)
    return {"conversations": conversations, "json_bytes": size, "runs": runs, "ours_ms": ours_ms,
            "baseline_ms": base_ms, "ours_median_ms": ours_med, "baseline_median_ms": base_med,
            "ratio": ours_med / base_med if base_med > 0 else float("inf"), **facts}


def run(settings: Settings) -> list[Row]:
    """The suite's row: a 1,000-conversation export imported into a new project (20 in the smoke run)."""
    n = 20 if settings.smoke else CONVERSATIONS
    result = measure(n, max(settings.runs, 1 if settings.smoke else 3), warmup=settings.warmup)
    mib = result["json_bytes"] / 2**20
    return [
        Row("import.chatgpt", f"import a {n:,}-conversation ChatGPT export ({mib:.0f} MiB of JSON, "
            f"{result['messages']:,} messages) into a new project", "ms", result["ours_ms"],
            "unzip + json.loads of the same export", result["baseline_ms"],
            note="whole import: stream, convert, versions, save project.json and the archive; info row "
                 "(no budget in DESIGN.md §7)"),
    ]


if __name__ == "__main__":  # pragma: no cover - manual run
    out = measure()
    print({k: v for k, v in out.items() if not k.endswith("_ms") or "median" in k})
