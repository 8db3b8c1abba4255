"""``chat.locate``: every message of every version is found with the steps that show it, and
``activate_message`` switches a live conversation to it through ``versions.switch_fork``."""

from __future__ import annotations

import copy
import random

from hypothesis import given, settings
from hypothesis import strategies as st

from desktop.core.chat.conversation import Conversation, append_message, create_conversation
from desktop.core.chat.locate import VersionStep, activate_message, version_path, walk_versions
from desktop.core.chat.versions import (
    VERSIONS_KEY,
    edit_user_message,
    regenerate,
    stored_versions,
    switch_fork,
)


def _chat() -> Conversation:
    """Two exchanges; the first answer regenerated twice, the second question edited once, and an
    answer regenerated inside the edited version (a version stored inside a version)."""
    conv = create_conversation()
    append_message(conv, "user", "first question")
    a1 = append_message(conv, "assistant", "answer one")
    regenerate(conv, a1.id)
    a2 = append_message(conv, "assistant", "answer two")
    regenerate(conv, a2.id)
    append_message(conv, "assistant", "answer three")
    q2 = append_message(conv, "user", "second question")
    b1 = append_message(conv, "assistant", "second answer, first try")
    regenerate(conv, b1.id)
    append_message(conv, "assistant", "second answer, second try")
    edit_user_message(conv, q2.id, "second question, edited")
    append_message(conv, "assistant", "answer to the edit")
    return conv


def _ids(conv: Conversation) -> list[str]:
    return [m.id for m in conv.messages]


def test_every_message_of_every_version_is_walked_once_with_its_steps() -> None:
    conv = _chat()
    walked = list(walk_versions(conv.messages))
    texts = [m.content for m, _ in walked]
    assert sorted(texts) == sorted([
        "first question", "answer one", "answer two", "answer three", "second question",
        "second answer, first try", "second answer, second try", "second question, edited",
        "answer to the edit",
    ])
    assert len({m.id for m, _ in walked}) == len(walked)
    on_path = [m.id for m, steps in walked if not steps]
    assert on_path == _ids(conv)
    # the same messages as versions.stored_versions (its public view of the stored versions)
    stored = {m.id for _, tail in stored_versions(conv.messages) for m in tail}
    assert {m.id for m, steps in walked if steps} == stored


def test_activating_each_message_puts_it_on_the_active_path_and_keeps_every_version() -> None:
    conv = _chat()
    everything = {m.id for m, _ in walk_versions(conv.messages)}
    for msg, steps in list(walk_versions(conv.messages)):
        live = copy.deepcopy(conv)
        assert activate_message(live, msg.id)
        assert msg.id in _ids(live)
        assert {m.id for m, _ in walk_versions(live.messages)} == everything  # nothing lost
        replay = copy.deepcopy(conv)
        for step in steps:
            switch_fork(replay, step.carrier_id, step.kind, step.k)
        assert msg.id in _ids(replay)


def test_a_version_inside_a_version_needs_two_steps() -> None:
    conv = _chat()
    by_text = {m.content: (m, steps) for m, steps in walk_versions(conv.messages)}
    _, steps = by_text["second answer, first try"]
    assert [s.kind for s in steps] == ["edit", "answer"]
    assert steps[0].k == 1 and steps[1].k == 1
    _, outer = by_text["answer one"]
    assert outer == (VersionStep(conv.messages[0].id, "answer", 1),)


def test_unknown_ids_and_malformed_records_are_not_errors() -> None:
    conv = _chat()
    assert version_path(conv.messages, "nope") is None
    assert not activate_message(conv, "nope")
    conv.messages[-2].extra = {VERSIONS_KEY: {"active": 7, "others": "garbage"}}
    walked = [m.content for m, _ in walk_versions(conv.messages)]
    assert "second question" not in walked  # the malformed record is skipped, not raised
    assert version_path(conv.messages, conv.messages[-1].id) == ()


@settings(max_examples=40, deadline=None)
@given(st.lists(st.sampled_from(["say", "regen", "edit", "switch"]), min_size=1, max_size=14), st.randoms())
def test_any_history_of_edits_and_regenerations_can_be_reached(ops: list[str], r: random.Random) -> None:
    conv = create_conversation()
    append_message(conv, "user", "q0")
    append_message(conv, "assistant", "a0")
    for n, op in enumerate(ops):
        users = [m for m in conv.messages if m.role == "user"]
        answers = [m for m in conv.messages if m.role == "assistant"]
        if op == "say":
            append_message(conv, "user", f"q{n}")
            append_message(conv, "assistant", f"a{n}")
        elif op == "regen" and answers:
            regenerate(conv, r.choice(answers).id)
            append_message(conv, "assistant", f"r{n}")
        elif op == "edit" and users:
            edit_user_message(conv, r.choice(users).id, f"e{n}")
            append_message(conv, "assistant", f"ea{n}")
        elif op == "switch":
            for m, steps in walk_versions(conv.messages):
                if steps:
                    activate_message(conv, m.id)
                    break
    everything = {m.id for m, _ in walk_versions(conv.messages)}
    for target in sorted(everything):
        live = copy.deepcopy(conv)
        assert activate_message(live, target), target
        assert {m.id for m, _ in walk_versions(live.messages)} == everything
