"""Reading a project folder for the index: ``project.json`` node by node, without the project lock.

``json.loads`` is one C call that keeps the GIL: 8 MB of ``project.json`` (40 nodes at the history
cap) hold every other Python thread, the GUI's included, for ~100 ms. So the top level of the file
(``{"version": …, "nodes": [ … ], …}``, DESIGN §2.5) is walked here and each node is decoded on its
own (``JSONDecoder.raw_decode``, the same scanner), a few milliseconds each, with the GIL free in
between. What a node means stays ``project_from_dict``'s business: each node goes through it, with
the file's other top-level keys. A file of any other shape is read the plain way.

The project lock is not taken (the app's window may hold it; reading needs no lock: saves replace
the file atomically), and nothing is repaired or written.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..store import PROJECT_FILE, NodeState, Project, project_from_dict
from ..text import repair_surrogates
from ._snapshot import ProjectSnapshot, snapshot_project

__all__ = ["read_project", "MAX_PROJECT_BYTES"]

log = logging.getLogger(__name__)

MAX_PROJECT_BYTES = 512 * 1024 * 1024
"""A ``project.json`` larger than this is not read for the index (it is not a real project file)."""
_WS = re.compile(r"[ \t\n\r]*")
_DECODER = json.JSONDecoder()


def _skip(text: str, i: int) -> int:
    match = _WS.match(text, i)
    return match.end() if match is not None else i


def _expect(text: str, i: int, char: str) -> int:
    if text[i : i + 1] != char:
        raise ValueError(f"expected {char!r} at {i}")
    return _skip(text, i + 1)


def _split(text: str, pace: Callable[[], None]) -> tuple[dict[str, Any], list[Any]]:
    """``(top-level keys but "nodes" and "closed", the decoded nodes then the closed ones)``, one
    ``raw_decode`` per node (each closed node is read as a node: it has the same shape).

    Raises:
        ValueError: Not an object with a ``nodes`` array (the caller reads it the plain way).
    """
    top: dict[str, Any] = {}
    nodes: list[Any] | None = None
    closed: list[Any] = []
    i = _expect(text, _skip(text, 0), "{")
    while text[i : i + 1] != "}":
        key, i = _DECODER.raw_decode(text, i)
        if not isinstance(key, str):
            raise ValueError("a key that is not a string")
        i = _expect(text, _skip(text, i), ":")
        if key in ("nodes", "closed") and text[i : i + 1] == "[":
            into: list[Any] = closed
            if key == "nodes":
                nodes = into = []
            i = _skip(text, i + 1)
            while text[i : i + 1] != "]":
                node, i = _DECODER.raw_decode(text, i)
                into.append(node)
                pace()
                i = _skip(text, i)
                if text[i : i + 1] == ",":
                    i = _skip(text, i + 1)
            i = _skip(text, i + 1)
        else:
            top[key], i = _DECODER.raw_decode(text, i)
            i = _skip(text, i)
        if text[i : i + 1] == ",":
            i = _skip(text, i + 1)
    if nodes is None or _skip(text, i + 1) != len(text):
        raise ValueError("not a project object")
    return top, nodes + closed


def _nodes(text: str, repair: bool, pace: Callable[[], None]) -> list[NodeState]:
    try:
        top, raw_nodes = _split(text, pace)
    except (ValueError, IndexError, RecursionError):
        raw = json.loads(text)
        if repair:
            raw, _ = repair_surrogates(raw)
        return project_from_dict(raw).all_nodes()
    project_from_dict({**top, "nodes": []})  # the top level as the app checks it (version...)
    out: list[NodeState] = []
    for raw_node in raw_nodes:
        pace()
        if repair:
            raw_node, _ = repair_surrogates(raw_node)
        try:
            out.extend(project_from_dict({**top, "nodes": [raw_node]}).nodes)
        except ValueError as exc:  # one bad node: the others are still searchable
            log.warning("a node of a project could not be read for the index: %s", exc)
    return out


def _nothing() -> None:
    pass


def read_project(folder: Path, *, pace: Callable[[], None] | None = None) -> ProjectSnapshot:
    """The snapshot of the ``project.json`` in ``folder`` (see the module doc).

    A node that cannot be read is left out (logged); the others are indexed.

    Args:
        folder: The project folder.
        pace: Called between nodes (``Pacer.tick``).

    Raises:
        FileNotFoundError: There is no ``project.json``.
        OSError: It could not be read.
        ValueError: It is not a readable project (not UTF-8, not JSON, wrong types, too big).
    """
    path = Path(folder) / PROJECT_FILE
    with open(path, "rb") as fh:
        data = fh.read(MAX_PROJECT_BYTES + 1)
    if len(data) > MAX_PROJECT_BYTES:
        raise ValueError(f"{path} is larger than {MAX_PROJECT_BYTES >> 20} MiB")
    try:
        nodes = _nodes(data.decode("utf-8-sig"), b"\\u" in data, pace or _nothing)
    except (UnicodeDecodeError, RecursionError) as exc:
        raise ValueError(f"{path} is not readable: {type(exc).__name__}") from None
    return snapshot_project(folder, Project(nodes=nodes))
