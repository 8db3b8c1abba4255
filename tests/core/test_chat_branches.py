"""The branch map of a conversation: points, branches, counts, costs, switching, fork links."""

from __future__ import annotations

import pytest

from desktop.core.chat.branches import Peer, branch_map, fork_origin, preview
from desktop.core.chat.conversation import Conversation, append_message, create_conversation, new_id
from desktop.core.chat.cost import Price
from desktop.core.chat.locate import VersionStep
from desktop.core.chat.types import ChatMessage, ToolCall, Usage
from desktop.core.chat.versions import (
    ANSWERS_KEY,
    TAILS_KEY,
    edit_user_message,
    fork_prefix,
    regenerate,
    switch_fork,
)

PRICES = {"m": Price(input=1.0, output=2.0)}  # an answer with Usage(t, 2) costs (t + 4) / 1e6


def _answer(conv: Conversation, text: str, tokens: int, *, tool: bool = False) -> ChatMessage:
    if tool:
        call = ToolCall(f"call-{new_id()}", "read_file", "{}", "ok", False, "done")
        first = append_message(conv, "assistant", "")
        first.tool_calls, first.usage, first.model = [call], Usage(tokens, 2), "m"
        append_message(conv, "tool", "ok").tool_calls = [call.copy()]
    msg = append_message(conv, "assistant", text)
    msg.usage, msg.model = Usage(tokens, 2), "m"
    return msg


def _usd(*tokens: int) -> float:
    return sum(t + 4 for t in tokens) / 1_000_000


def _texts(conv: Conversation) -> list[str]:
    return [m.content for m in conv.messages]


def _apply(conv: Conversation, steps: tuple[VersionStep, ...]) -> None:
    for s in steps:
        switch_fork(conv, s.carrier_id, s.kind, s.k)


def _edited_and_regenerated() -> Conversation:
    """one/answer, two/answer; the answer to two regenerated; then the first message edited."""
    conv = create_conversation()
    append_message(conv, "user", "one")
    _answer(conv, "answer to one", 10)
    append_message(conv, "user", "two")
    first_two = _answer(conv, "answer to two", 11)
    regenerate(conv, first_two.id)
    _answer(conv, "second answer to two", 20, tool=True)
    edit_user_message(conv, conv.messages[0].id, "ONE, said differently this time with many words indeed")
    _answer(conv, "answer to ONE", 30)
    return conv


def test_a_conversation_without_versions_is_one_branch() -> None:
    conv = create_conversation()
    append_message(conv, "user", "hi")
    _answer(conv, "hello", 5)
    m = branch_map(conv.messages, None, PRICES)
    assert (m.messages, m.points, m.forks, m.leaves) == (2, (), (), 1)
    assert m.cost.usd == pytest.approx(_usd(5)) and not m.cost.estimated


def test_edits_and_regenerates_make_a_tree_with_counts_costs_and_previews() -> None:
    conv = _edited_and_regenerated()
    one = conv.messages[0]
    assert _texts(conv) == ["ONE, said differently this time with many words indeed", "answer to ONE"]
    m = branch_map(conv.messages, None, PRICES)
    assert (m.messages, m.leaves) == (2, 3)
    assert m.cost.usd == pytest.approx(_usd(30))
    assert m.total.usd == pytest.approx(_usd(10, 11, 20, 20, 30))  # every version, as the cost chip
    [edit] = m.points
    assert (edit.carrier_id, edit.kind, edit.index) == (one.id, "edit", 0)
    assert edit.prompt == "ONE, said differently this time with many words…"
    old, shown = edit.branches
    assert (shown.k, shown.shown, shown.steps, shown.messages, shown.points) == (2, True, (), 2, ())
    assert shown.preview == "ONE, said differently this time with many words…"
    assert shown.cost.usd == pytest.approx(_usd(30))
    assert (old.k, old.shown, old.messages, old.preview) == (1, False, 6, "one")
    assert old.steps == (VersionStep(one.id, "edit", 1),)
    assert old.cost.usd == pytest.approx(_usd(10, 20, 20))  # the shown answer: a tool call and a text
    [answers] = old.points
    assert (answers.kind, answers.index, answers.prompt) == ("answer", 3, "two")
    first, second = answers.branches
    two_id = answers.carrier_id
    assert (first.k, first.shown, first.messages, first.preview) == (1, False, 1, "answer to two")
    assert first.steps == (VersionStep(one.id, "edit", 1), VersionStep(two_id, "answer", 1))
    assert first.cost.usd == pytest.approx(_usd(11))
    # the answer the stored branch shows: reached by showing that branch, 3 messages (call, result, text)
    assert (second.k, second.shown, second.steps, second.messages) == (2, False, old.steps, 3)
    assert second.preview == "ok" and second.cost.usd == pytest.approx(_usd(20, 20))


def test_a_branchs_steps_switch_the_conversation_to_it_and_the_map_follows() -> None:
    conv = _edited_and_regenerated()
    target = branch_map(conv.messages, None, PRICES).points[0].branches[0].points[0].branches[0]
    _apply(conv, target.steps)
    assert _texts(conv) == ["one", "answer to one", "two", "answer to two"]
    m = branch_map(conv.messages, None, PRICES)
    assert (m.messages, m.leaves) == (4, 3)
    edit, answers = m.points
    assert [(b.k, b.shown, b.messages) for b in edit.branches] == [(1, True, 4), (2, False, 2)]
    assert [(b.k, b.shown, b.messages) for b in answers.branches] == [(1, True, 1), (2, False, 3)]
    assert (answers.index, answers.carrier_id) == (3, conv.messages[2].id)
    _apply(conv, answers.branches[1].steps)
    assert _texts(conv) == ["one", "answer to one", "two", "", "ok", "second answer to two"]
    _apply(conv, edit.branches[1].steps)
    assert _texts(conv)[1] == "answer to ONE"


def test_an_edit_and_a_regenerate_on_one_message_are_two_points_edit_first() -> None:
    conv = create_conversation()
    append_message(conv, "user", "q")
    regenerate(conv, _answer(conv, "a1", 1).id)
    _answer(conv, "a2", 2)
    edit_user_message(conv, conv.messages[0].id, "q2")
    switch_fork(conv, conv.messages[0].id, "edit", 1)  # back to "q" and its two answers
    m = branch_map(conv.messages, None, PRICES)
    assert [(p.kind, p.index, len(p.branches), p.versions) for p in m.points] == [
        ("edit", 0, 2, 2), ("answer", 1, 2, 2)]
    assert m.leaves == 3
    assert [b.preview for b in m.points[1].branches] == ["a1", "a2"]


def test_forks_link_from_the_message_they_copied_in_the_shown_path_and_in_stored_branches() -> None:
    conv = _edited_and_regenerated()
    shown_answer = conv.messages[1]
    fork_a = fork_prefix(conv, shown_answer.id)
    old_steps = branch_map(conv.messages, None, PRICES).points[0].branches[0].steps
    _apply(conv, old_steps)
    two = conv.messages[2]
    fork_b = fork_prefix(conv, two.id)
    switch_fork(conv, conv.messages[0].id, "edit", 2)  # back to the edited version
    fork_b_of_b = fork_prefix(Conversation(id="c", messages=fork_b), fork_b[-1].id)
    peers = [Peer("node-a", "Fork A", fork_a), Peer("node-b", "Fork B", fork_b),
             Peer("node-c", "Fork of B", fork_b_of_b), Peer("node-d", "Plain", conv.messages[:0])]
    m = branch_map(conv.messages, None, PRICES, peers)
    assert [(f.node_id, f.title, f.message_id, f.index, f.preview) for f in m.forks] == [
        ("node-a", "Fork A", shown_answer.id, 1, "answer to ONE")]
    old = m.points[0].branches[0]
    assert [(f.node_id, f.message_id, f.index, f.preview) for f in old.forks] == [
        ("node-b", two.id, 2, "two"), ("node-c", two.id, 2, "two")]


def test_fork_origin_and_a_forks_own_cost() -> None:
    conv = _edited_and_regenerated()
    copied = fork_prefix(conv, conv.messages[1].id)
    assert fork_origin(copied) == conv.messages[1].id
    assert fork_origin(conv.messages) is None and fork_origin([]) is None
    fork = Conversation(id="f", messages=copied)
    append_message(fork, "user", "more")
    _answer(fork, "fresh", 7)
    assert fork_origin(fork.messages) == conv.messages[1].id  # only the leading copies count
    m = branch_map(fork.messages, None, PRICES)
    assert m.messages == 4 and m.cost.usd == pytest.approx(_usd(7))  # the copies were paid upstream


def test_preview_cuts_at_words_and_skips_empty_messages() -> None:
    msgs = [ChatMessage(id="a", role="assistant", content="  ", ts=0),
            ChatMessage(id="b", role="tool", content="one  two\nthree four", ts=0)]
    assert preview(msgs) == "one two three four"
    assert preview(msgs, words=2) == "one two…"
    assert preview([]) == ""


def test_unpriced_models_report_estimated_costs() -> None:
    conv = _edited_and_regenerated()
    m = branch_map(conv.messages, None, {})
    assert m.cost.unpriced == 1 and m.points[0].branches[0].cost.unpriced == 3


def test_an_unreadable_stored_version_is_left_out_and_the_count_stays_the_records() -> None:
    conv = create_conversation()
    append_message(conv, "user", "q")
    regenerate(conv, _answer(conv, "a1", 1).id)
    regenerate(conv, _answer(conv, "a2", 2).id)
    _answer(conv, "a3", 3)
    carrier = conv.messages[0]
    table = carrier.extra[TAILS_KEY]
    first_ref = carrier.extra[ANSWERS_KEY]["others"][0]
    carrier.extra = {**carrier.extra, TAILS_KEY: {**table, first_ref: [{"role": 5}]}}
    [point] = branch_map(conv.messages, None, PRICES).points
    assert point.versions == 3
    assert [(b.k, b.preview, b.shown) for b in point.branches] == [(2, "a2", False), (3, "a3", True)]
