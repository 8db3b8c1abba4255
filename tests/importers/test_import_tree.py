"""The tree → versions builder: every branch kept, navigable with the versions module's own functions."""

from __future__ import annotations

import json
import sys

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from desktop.core.chat import versions as V
from desktop.core.chat.conversation import Conversation, message_from_dict, message_to_dict
from desktop.core.chat.types import ChatMessage
from desktop.core.importers import TreeError, TreeNode, build_versions


def node(key: str, parent: str | None, role: str = "user", ts: int = 0) -> TreeNode:
    return TreeNode(
        key,
        parent,
        ChatMessage(key, role, key, ts, extra={"imported": {"id": key}}),  # type: ignore[arg-type]
        (float(ts), 0),
    )


def tree(spec: list[tuple[str, str | None, str]]) -> list[TreeNode]:
    """Nodes from ``(key, parent, role)``; timestamps follow the list order."""
    return [node(k, p, r, i) for i, (k, p, r) in enumerate(spec)]


def texts(conv: Conversation) -> list[str]:
    return [m.content for m in conv.messages]


def controls(conv: Conversation) -> dict[str, tuple[str, int, int]]:
    by_id = {m.id: m.content for m in conv.messages}
    return {by_id[k]: (c.kind, c.k, c.n) for k, c in V.version_controls(conv).items()}


def conv_of(nodes: list[TreeNode], leaf: str | None) -> Conversation:
    return Conversation("c-test", build_versions(nodes, leaf).messages, 0)


def every_original(messages: list[ChatMessage]) -> list[str]:
    """Original keys of every message on the path and in every stored version (however stored)."""
    out = [m.content for m in messages]
    for _label, tail in V.stored_versions(messages):
        out.extend(m.content for m in tail)
    return out


def test_a_linear_chain_is_the_path_without_records() -> None:
    nodes = tree(
        [("u1", None, "user"), ("a1", "u1", "assistant"), ("u2", "a1", "user"), ("a2", "u2", "assistant")]
    )
    conv = conv_of(nodes, "a2")
    assert texts(conv) == ["u1", "a1", "u2", "a2"]
    assert V.version_controls(conv) == {}
    assert all(V.VERSIONS_KEY not in m.extra and V.ANSWERS_KEY not in m.extra for m in conv.messages)
    assert len({m.id for m in conv.messages}) == 4 and all(m.id.startswith("m-") for m in conv.messages)


def test_regenerations_and_edits_become_versions_at_their_fork() -> None:
    nodes = tree(
        [
            ("u1", None, "user"),
            ("a1", "u1", "assistant"),
            ("a1r", "u1", "assistant"),
            ("u2", "a1r", "user"),
            ("a2", "u2", "assistant"),
            ("u2e", "a1r", "user"),
            ("a2e", "u2e", "assistant"),
            ("u2x", "a1", "user"),
        ]
    )
    conv = conv_of(nodes, "a2e")
    assert texts(conv) == ["u1", "a1r", "u2e", "a2e"]
    assert controls(conv) == {"a1r": ("answer", 2, 2), "u2e": ("edit", 2, 2)}
    # Switch to the first answer: its own continuation (u2x) comes with it.
    V.switch_version(conv, conv.messages[1].id, 1)
    assert texts(conv) == ["u1", "a1", "u2x"]
    V.switch_version(conv, conv.messages[1].id, 2)
    assert texts(conv) == ["u1", "a1r", "u2e", "a2e"]
    V.switch_version(conv, conv.messages[2].id, 1)
    assert texts(conv) == ["u1", "a1r", "u2", "a2"]
    assert sorted(every_original(conv.messages)) == sorted(n.key for n in nodes)


def test_edits_of_the_first_message_sit_on_it() -> None:
    nodes = tree(
        [("u1", None, "user"), ("a1", "u1", "assistant"), ("u1b", None, "user"), ("a1b", "u1b", "assistant")]
    )
    conv = conv_of(nodes, "a1")
    assert texts(conv) == ["u1", "a1"]
    assert controls(conv) == {"u1": ("edit", 1, 2)}
    V.switch_version(conv, conv.messages[0].id, 2)
    assert texts(conv) == ["u1b", "a1b"]


def test_a_branching_tool_step_makes_whole_answers_versions() -> None:
    # u → code → (output1 → text1 | output2 → text2): two answers to u, sharing the code message.
    nodes = tree(
        [
            ("u", None, "user"),
            ("code", "u", "assistant"),
            ("o1", "code", "assistant"),
            ("t1", "o1", "assistant"),
            ("o2", "code", "assistant"),
            ("t2", "o2", "assistant"),
        ]
    )
    conv = conv_of(nodes, "t1")
    assert texts(conv) == ["u", "code", "o1", "t1"]
    assert controls(conv) == {"code": ("answer", 1, 2)}
    V.switch_version(conv, conv.messages[1].id, 2)
    assert texts(conv) == ["u", "code", "o2", "t2"]
    assert len({m.id for m in conv.messages}) == 4  # the shared message was copied with a fresh id


def test_an_answer_that_also_continues_is_two_versions() -> None:
    # a has a user child (the path went on) and a non-user child (an alternative continuation).
    nodes = tree([("u", None, "user"), ("a", "u", "assistant"), ("u2", "a", "user"), ("b", "a", "assistant")])
    conv = conv_of(nodes, "u2")
    assert texts(conv) == ["u", "a", "u2"]
    V.switch_version(conv, conv.messages[1].id, 2)
    assert texts(conv) == ["u", "a", "b"]


def test_the_newest_leaf_is_shown_without_an_active_leaf_and_inner_leaves_extend() -> None:
    nodes = tree([("u", None, "user"), ("a", "u", "assistant"), ("b", "u", "assistant"), ("u2", "a", "user")])
    assert texts(conv_of(nodes, None)) == ["u", "a", "u2"]  # u2 is the newest leaf
    assert texts(conv_of(nodes, "a")) == ["u", "a", "u2"]  # an inner message: down its newest children
    assert texts(conv_of(nodes, "nowhere")) == ["u", "a", "u2"]


def test_parent_cycles_are_cut_and_nothing_is_lost() -> None:
    nodes = tree(
        [("u1", None, "user"), ("a1", "u1", "assistant"), ("x", "y", "user"), ("y", "x", "assistant")]
    )
    built = build_versions(nodes, "a1")
    conv = Conversation("c", built.messages, 0)
    found = every_original(conv.messages) + [m.content for extra in built.extras for m in extra]
    assert sorted(found) == ["a1", "u1", "x", "y"]


def test_a_self_parent_and_an_unknown_parent_are_the_top() -> None:
    nodes = tree([("u1", "u1", "user"), ("a1", "u1", "assistant"), ("u2", "ghost", "user")])
    conv = conv_of(nodes, "a1")
    assert texts(conv) == ["u1", "a1"]
    assert controls(conv) == {"u1": ("edit", 1, 2)}


def test_timestamps_never_go_back_from_parent_to_child() -> None:
    nodes = [node("u", None, "user", 5000), node("a", "u", "assistant", 1000), node("u2", "a", "user", 9000)]
    conv = conv_of(nodes, "u2")
    assert [m.ts for m in conv.messages] == [5000, 5000, 9000]


def test_long_chains_are_walked_without_recursion() -> None:
    n = 12_000
    nodes = [
        node(f"m{i}", f"m{i - 1}" if i else None, "user" if i % 2 == 0 else "assistant", i) for i in range(n)
    ]
    nodes.append(
        node("alt", "m0", "assistant", n)
    )  # a regeneration at the very top: the long tail is a version
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(200)  # proves the walk is iterative
    try:
        built = build_versions(nodes, "alt")
    finally:
        sys.setrecursionlimit(limit)
    conv = Conversation("c", built.messages, 0)
    assert texts(conv) == ["m0", "alt"]
    V.switch_version(conv, conv.messages[1].id, 1)
    assert len(conv.messages) == n


def deep_forks(levels: int) -> list[TreeNode]:
    """Each level: the shown path regenerates (``new``), the older answer (``old``) carries the next level."""
    spec: list[tuple[str, str | None, str]] = []
    parent: str | None = None
    for level in range(levels):
        spec += [
            (f"u{level}", parent, "user"),
            (f"new{level}", f"u{level}", "assistant"),
            (f"old{level}", f"u{level}", "assistant"),
        ]
        parent = f"old{level}"
    nodes = tree(spec)
    for n in nodes:  # the "old" answers are older siblings: the tail below a fork takes the newest
        if n.key.startswith("old"):
            n.order = (-1.0, 0)
    return nodes


def json_depth(obj: object) -> int:
    best, stack = 0, [(obj, 1)]
    while stack:
        item, d = stack.pop()
        best = max(best, d)
        if isinstance(item, dict):
            stack.extend((v, d + 1) for v in item.values())
        elif isinstance(item, list):
            stack.extend((v, d + 1) for v in item)
    return best


def test_forks_nested_any_depth_stay_versions_of_one_conversation_in_a_flat_table() -> None:
    levels = 60  # 16 used to be the limit (deeper branches became extra nodes "Title (branch k)")
    nodes = deep_forks(levels)
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(150)  # the build is iterative: nested forks never recurse
    try:
        built = build_versions(nodes, "new0")
    finally:
        sys.setrecursionlimit(limit)
    assert built.extras == [] and built.forks == levels
    conv = Conversation("c", built.messages, 0)
    assert texts(conv) == ["u0", "new0"]
    assert set(every_original(conv.messages)) == {n.key for n in nodes}
    # One table, on the path message that owns every fork below it; no stored message has one.
    assert V.TAILS_KEY in conv.messages[0].extra
    assert V.flatten_versions(conv.messages) == 0  # already the flat form
    depth = max(json_depth(message_to_dict(m)) for m in conv.messages)
    assert depth <= 12  # message, table, tail, message, record: the same for 1 or 60 levels
    shallow = build_versions(deep_forks(2), "new0").messages
    assert max(json_depth(message_to_dict(m)) for m in shallow) == depth
    # Walk down: at each level switch to the older answer, whose continuation holds the next fork.
    for level in range(levels - 1):
        carrier = conv.messages[2 * level]
        assert controls(conv)[f"new{level}"] == ("answer", 2, 2)  # the ‹ 2/2 › under the shown answer
        V.switch_fork(conv, carrier.id, "answer", 1)
        assert texts(conv)[-3:] == [f"old{level}", f"u{level + 1}", f"new{level + 1}"]
        assert controls(conv)[f"old{level}"] == ("answer", 1, 2)
    assert len(conv.messages) == 2 * levels


def test_a_tangled_tree_is_refused_with_a_message() -> None:
    # A chain of 400 assistant messages each also answered by the user: every answer copies the chain.
    spec: list[tuple[str, str | None, str]] = [("u", None, "user")]
    prev = "u"
    for i in range(400):
        spec += [(f"a{i}", prev, "assistant"), (f"x{i}", f"a{i}", "user")]
        prev = f"a{i}"
    with pytest.raises(TreeError, match="too tangled"):
        build_versions(tree(spec), None, work_factor=2)


def test_imported_versions_persist_and_load_back() -> None:
    nodes = tree([("u1", None, "user"), ("a1", "u1", "assistant"), ("a1r", "u1", "assistant")])
    conv = conv_of(nodes, "a1r")
    from desktop.core.chat.conversation import conversation_to_json, deserialize_conversation

    again = deserialize_conversation(conversation_to_json(conv))
    assert controls(again) == {"a1r": ("answer", 2, 2)}
    (ref,) = again.messages[0].extra[V.ANSWERS_KEY]["others"]
    stored = again.messages[0].extra[V.TAILS_KEY][ref]  # the tail sits in the carrier's flat table
    assert [message_from_dict(d).content for d in stored] == ["a1"]
    json.dumps(stored)


@st.composite
def random_trees(draw: st.DrawFn) -> tuple[list[TreeNode], str | None]:
    n = draw(st.integers(1, 40))
    spec: list[tuple[str, str | None, str]] = []
    for i in range(n):
        parent = None if i == 0 else draw(st.one_of(st.none(), st.sampled_from([f"k{j}" for j in range(i)])))
        spec.append((f"k{i}", parent, draw(st.sampled_from(["user", "assistant", "assistant", "note"]))))
    leaf = draw(st.one_of(st.none(), st.sampled_from([k for k, _, _ in spec])))
    return tree(spec), leaf


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(random_trees())
def test_any_tree_keeps_every_message_and_every_version_switches(
    case: tuple[list[TreeNode], str | None],
) -> None:
    nodes, leaf = case
    built = build_versions(nodes, leaf)
    conv = Conversation("c", built.messages, 0)
    found = set(every_original(conv.messages))
    for extra in built.extras:
        found |= set(every_original(extra))
    assert found == {n.key for n in nodes}
    before = texts(conv)
    for control in list(V.version_controls(conv).values()):
        at = next(i for i, m in enumerate(conv.messages) if m.id == control.carrier_id)
        for k in [*range(1, control.n + 1), control.k]:  # every version, then back
            V.switch_fork(conv, conv.messages[at].id, control.kind, k)  # an edit replaces the carrier
        assert texts(conv) == before
