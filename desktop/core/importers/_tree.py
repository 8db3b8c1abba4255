"""A message tree (every edit and regeneration a branch) to a conversation with versions.

Exports keep a conversation as a tree; Chat Nodes keeps the *active path* as the conversation and
every other branch as a version at the message where it forks (``desktop.core.chat.versions``:
``extra["versions"]`` on a user message for its edits, ``extra["answerVersions"]`` on a user message
for the answers to it, each ``{"active": i, "others": [ref, ...]}`` naming tails in the flat table
``extra["versionTails"]`` of the active-path message that owns the fork). ``build_versions`` maps one
to the other without losing a branch:

* **Edits.** Several user children of one message (or of the top) are versions of that user message:
  the record sits on the one the path takes, each other tail starts with its user message.
* **Answers.** Everything below a user message up to the next user message is its answer. When the
  answer branches anywhere (regenerations, or a tool step answered twice), each distinct answer
  (a chain of non-user messages ending where a user message follows, or at a leaf) is one version
  of the answers to that user message; a chain shared by two answers is copied into both.
* **The path a tail takes** below a fork: the active path when it runs there, else the newest
  child at each step.
* **Tables, not nesting.** Tails are written straight into the owner's table (a fork inside a stored
  tail names its own tails by ref in the same table), so however deeply an export branches, the
  project file's JSON depth stays that of one message, its table, a tail, a message, its record
  (far below ``_docstore.MAX_DEPTH``): every branch stays a version of the one node.
* **What has no carrier**: alternatives of the opening messages before any user message (a record
  lives on a user message) become *extra* conversations, each that branch from the top.

Walks are iterative (chains of any length, forks nested any number of levels: a queue of tails to
build, never recursion). Parent cycles are cut at their oldest message, timestamps are forced to
never go back in time from parent to child, and the work is bounded (``TreeError`` for a tree too
tangled to import).
"""

from __future__ import annotations

import copy
import logging
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from desktop.core.chat.conversation import message_to_dict, new_id
from desktop.core.chat.types import ChatMessage
from desktop.core.chat.versions import ANSWERS_KEY, TAILS_KEY, VERSIONS_KEY

__all__ = ["BuiltTree", "TreeError", "TreeNode", "build_versions", "count_leaves"]

log = logging.getLogger(__name__)

_ROOT = "\x00root"
_Kind = Literal["edit", "answer"]
_Table = dict[str, list[dict[str, Any]]]


class TreeError(ValueError):
    """The tree cannot be turned into a conversation (the message says why)."""


@dataclass(slots=True)
class TreeNode:
    """One message of an imported tree.

    Attributes:
        key: The message's id in the export (unique within the conversation).
        parent: The key of its nearest kept ancestor, or None at the top.
        message: The message (its ``id`` is replaced by a fresh one each time it is emitted; its
            ``ts`` may be raised to its parent's).
        order: Sort key among siblings, oldest first (creation time, then position in the file).
    """

    key: str
    parent: str | None
    message: ChatMessage
    order: tuple[float, int] = (0.0, 0)


@dataclass(slots=True)
class BuiltTree:
    """What ``build_versions`` made.

    Attributes:
        messages: The active path, with version records for every other branch.
        extras: Alternatives of the opening messages (before any user message, so no message can
            carry them as versions), each a whole conversation of its own.
        forks: Fork points recorded (edits and answers).
        leaves: Distinct branches (leaves) of the tree.
    """

    messages: list[ChatMessage]
    extras: list[list[ChatMessage]] = field(default_factory=list)
    forks: int = 0
    leaves: int = 0


def count_leaves(nodes: Sequence[TreeNode]) -> int:
    """How many branches (leaves) a tree has; cheap, for previews (cycles count as one branch)."""
    keys = {n.key for n in nodes}
    has_child = {n.parent for n in nodes if n.parent in keys and n.parent != n.key}
    return max(1, sum(1 for n in nodes if n.key not in has_child)) if nodes else 0


def build_versions(
    nodes: Sequence[TreeNode],
    active_leaf: str | None,
    *,
    work_factor: int = 20,
) -> BuiltTree:
    """Turn a message tree into its active path with every other branch kept as versions.

    Args:
        nodes: The kept messages with their parents (unknown parents count as the top).
        active_leaf: The message the export shows last; None or unknown: the newest leaf. A message
            that has children is followed down its newest children to a leaf.
        work_factor: Copies allowed per message before the tree counts as too tangled.

    Returns:
        The conversation's messages (fresh ids; versions in the flat table) and the extras.

    Raises:
        TreeError: The branches would copy more than ``work_factor`` messages per message.
    """
    return _Builder(nodes, work_factor).build(active_leaf)


class _Builder:
    def __init__(self, nodes: Sequence[TreeNode], work_factor: int) -> None:
        self.nodes: dict[str, TreeNode] = {}
        for n in nodes:
            self.nodes.setdefault(n.key, n)
        self.budget = work_factor * len(self.nodes) + 10_000
        self.parent: dict[str, str] = {}
        self.children: dict[str, list[str]] = {_ROOT: []}
        self.active_next: dict[str, str] = {}
        self.pending: deque[tuple[_Table, str, _Kind, str, str]] = deque()
        """Tails still to build: (the owner's table, the ref, kind, the option, where it forks)."""
        self.owners: dict[str, tuple[ChatMessage, _Table]] = {}
        """Active-path messages that own a table, by message id."""
        self.forks = 0
        self._link()

    # ---------------------------------------------------------------------------------------------
    # Structure

    def _link(self) -> None:
        nodes = self.nodes
        for key, n in nodes.items():
            p = n.parent
            self.parent[key] = p if p is not None and p in nodes and p != key else _ROOT
        self._rebuild_children()
        reached = self._reach([_ROOT])
        if len(reached) <= len(nodes):  # some messages hang in a parent cycle: cut each at its oldest
            for key in sorted(nodes, key=lambda k: nodes[k].order):
                if key in reached:
                    continue
                seen: dict[str, int] = {}
                x = key
                while x not in seen and x not in reached:
                    seen[x] = len(seen)
                    x = self.parent[x]
                if x in reached:  # pragma: no cover - reached nodes are closed under children
                    continue
                cycle = [k for k, i in seen.items() if i >= seen[x]]
                cut = min(cycle, key=lambda k: nodes[k].order)
                log.info("parent cycle of %d messages cut at %s", len(cycle), cut)
                self.parent[cut] = _ROOT
                self._rebuild_children()
                reached |= self._reach([cut])
        self._force_time()

    def _rebuild_children(self) -> None:
        children: dict[str, list[str]] = {_ROOT: []}
        for key in self.nodes:
            children.setdefault(key, [])
        for key, p in self.parent.items():
            children[p].append(key)
        for kids in children.values():
            kids.sort(key=lambda k: self.nodes[k].order)
        self.children = children

    def _reach(self, starts: list[str]) -> set[str]:
        reached = set(starts)
        stack = list(starts)
        while stack:
            for c in self.children[stack.pop()]:
                if c not in reached:
                    reached.add(c)
                    stack.append(c)
        return reached

    def _force_time(self) -> None:
        """A message is never older than its parent (exports have null, tied and backwards times)."""
        stack = [(c, -1) for c in self.children[_ROOT]]
        while stack:
            key, floor = stack.pop()
            msg = self.nodes[key].message
            if msg.ts < floor:
                msg.ts = floor
            stack.extend((c, msg.ts) for c in self.children[key])

    def _is_user(self, key: str) -> bool:
        return key != _ROOT and self.nodes[key].message.role == "user"

    def _active_path(self, leaf: str | None) -> None:
        if leaf is None or leaf not in self.nodes:
            leaves = [k for k in self.nodes if not self.children[k]]
            if not leaves:
                return
            leaf = max(leaves, key=lambda k: (self.nodes[k].message.ts, self.nodes[k].order))
        x = leaf
        while self.children[x]:  # an inner message: follow its newest children down to a leaf
            x = self.children[x][-1]
        while True:
            p = self.parent[x]
            self.active_next[p] = x
            if p == _ROOT:
                break
            x = p

    # ---------------------------------------------------------------------------------------------
    # Choices

    def _alternatives(self, u: str) -> list[str]:
        """The answers below ``u``: the end of each chain of non-user messages (``u``: no answer)."""
        kids = self.children[u]
        ends: list[str] = [u] if any(self._is_user(c) for c in kids) else []
        stack = [c for c in reversed(kids) if not self._is_user(c)]
        while stack:
            n = stack.pop()
            nk = self.children[n]
            if not nk or any(self._is_user(c) for c in nk):
                ends.append(n)
            stack.extend(c for c in reversed(nk) if not self._is_user(c))
        return ends

    def _chosen_answer(self, u: str) -> str:
        nxt = self.active_next.get(u)
        if nxt is None:  # off the active path: the newest child at each step
            n = u
            while True:
                kids = self.children[n]
                if not kids or self._is_user(kids[-1]):
                    return n
                n = kids[-1]
        if self._is_user(nxt):
            return u
        n = nxt
        while True:
            m = self.active_next.get(n)
            if m is None or self._is_user(m):
                return n
            n = m

    def _chosen_user(self, at: str, users: list[str]) -> str:
        nxt = self.active_next.get(at)
        return nxt if nxt in users else users[-1]

    def _chain(self, end: str, top: str) -> list[str]:
        out: list[str] = []
        while end != top:
            out.append(end)
            end = self.parent[end]
        out.reverse()
        return out

    # ---------------------------------------------------------------------------------------------
    # Emission

    def _emit(self, key: str) -> ChatMessage:
        self.budget -= 1
        if self.budget < 0:
            raise TreeError("its branches are too tangled to import (they would copy too many messages)")
        t = self.nodes[key].message
        return ChatMessage(
            id=new_id("m"), role=t.role, content=t.content, ts=t.ts, thinking=t.thinking,
            thinking_blocks=copy.deepcopy(t.thinking_blocks) if t.thinking_blocks is not None else None,
            tool_calls=[c.copy() for c in t.tool_calls] if t.tool_calls is not None else None,
            usage=t.usage, model=t.model, stopped=t.stopped,
            # Each copy gets its own extra (records are written into it); values below the first
            # level are shared read-only (the import marker).
            extra={k: dict(v) if isinstance(v, dict) else v for k, v in t.extra.items()},
        )

    def _record(self, msg: ChatMessage, kind: _Kind, options: list[str], chosen: str, at: str,
                table: _Table | None) -> None:
        """Write the fork's record on ``msg``; its other tails are queued for ``table`` (None: ``msg``
        is on the active path and owns a table of its own)."""
        if table is None:
            table = self.owners.setdefault(msg.id, (msg, {}))[1]
        refs: list[str] = []
        for o in options:
            if o != chosen:
                refs.append(new_id("v"))
                self.pending.append((table, refs[-1], kind, o, at))
        msg.extra[VERSIONS_KEY if kind == "edit" else ANSWERS_KEY] = {
            "active": options.index(chosen), "others": refs}
        self.forks += 1

    def _tail(self, *, end: str | None = None, top: str = _ROOT, start_user: str | None = None,
              table: _Table | None) -> list[ChatMessage]:
        """A tail: the chain ``top``→``end`` then what follows, or from the user message ``start_user`` on.

        ``table``: the table its forks' tails go to (None: the tail is an active path).
        """
        out: list[ChatMessage] = []
        pending = start_user
        at = _ROOT
        if end is not None:
            out.extend(self._emit(k) for k in self._chain(end, top))
            at = end
        while True:
            if pending is not None:
                u, pending = pending, None
                msg = self._emit(u)
            else:
                users = [c for c in self.children[at] if self._is_user(c)]
                if not users:
                    return out
                u = self._chosen_user(at, users)
                msg = self._emit(u)
                if len(users) > 1:
                    self._record(msg, "edit", users, u, at, table)
            out.append(msg)
            ends = self._alternatives(u)
            if not ends:
                return out
            end = self._chosen_answer(u)
            if len(ends) > 1:
                self._record(msg, "answer", ends, end, u, table)
            out.extend(self._emit(k) for k in self._chain(end, u))
            at = end

    def build(self, active_leaf: str | None) -> BuiltTree:
        if not self.nodes:
            return BuiltTree([])
        self._active_path(active_leaf)
        leaves = sum(1 for k in self.nodes if not self.children[k])
        ends = self._alternatives(_ROOT)
        end = self._chosen_answer(_ROOT)
        main = self._tail(end=end, table=None)
        # Alternatives of the opening messages: no user message to carry them, so whole conversations.
        extras = [self._tail(end=o, table=None) for o in ends if o != end]
        while self.pending:  # breadth first: a queue, never recursion, however deep forks nest
            table, ref, kind, option, at = self.pending.popleft()
            tail = self._tail(start_user=option, table=table) if kind == "edit" else \
                self._tail(end=option, top=at, table=table)
            table[ref] = [message_to_dict(m) for m in tail]
        for msg, table in self.owners.values():
            msg.extra[TAILS_KEY] = table
        return BuiltTree(main, extras, self.forks, leaves)
