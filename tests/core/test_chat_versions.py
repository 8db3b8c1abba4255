"""Versions of a conversation: edit, regenerate, switch, fork, persistence, the cap and cost."""

from __future__ import annotations

import collections
import json
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

from desktop.core.chat.conversation import (
    Conversation,
    append_message,
    conversation_to_json,
    create_conversation,
    deserialize_conversation,
    message_from_dict,
    message_to_dict,
    new_id,
    serialize_conversation,
    split_for_cap,
)
from desktop.core.chat.cost import Price, conversation_cost
from desktop.core.chat.export import conversation_markdown
from desktop.core.chat.types import ChatMessage, ToolCall, Usage
from desktop.core.chat.versions import (
    ANSWERS_KEY,
    FORKED_FROM_KEY,
    TAILS_KEY,
    VERSIONS_KEY,
    VersionControl,
    all_responses,
    cost_split,
    cost_split_text,
    edit_user_message,
    flatten_versions,
    fork_prefix,
    other_versions,
    regenerate,
    responses_in,
    stored_versions,
    switch_fork,
    switch_version,
    version_controls,
    versions_at,
)
from desktop.core.store import HistoryArchive, apply_trim, plan_trim

PRICES = {"m": Price(input=1.0, output=2.0)}
ROOT = Path(__file__).resolve().parents[2]


def _answer(conv: Conversation, text: str, tokens: int = 10, *, tool: bool = False) -> ChatMessage:
    """A simulated model answer: optionally a tool call, its result and a final text."""
    if tool:
        call = ToolCall(f"call-{new_id()}", "read_file", "{}", "ok", False, "done")
        first = append_message(conv, "assistant", "")
        first.tool_calls, first.usage, first.model = [call], Usage(tokens, 1), "m"
        append_message(conv, "tool", "ok").tool_calls = [call.copy()]
    msg = append_message(conv, "assistant", text)
    msg.usage, msg.model = Usage(tokens, 2), "m"
    return msg


def _chat(*exchanges: str) -> Conversation:
    conv = create_conversation()
    for i, text in enumerate(exchanges):
        append_message(conv, "user", text)
        _answer(conv, f"answer to {text}", 10 + i)
    return conv


def _texts(conv: Conversation) -> list[str]:
    return [m.content for m in conv.messages]


def assert_valid_path(messages: list[ChatMessage]) -> None:
    """The active path is a conversation a provider accepts: turns alternate, results follow calls."""
    expect_user = True
    open_calls: set[str] = set()
    for m in messages:
        if m.role in ("note", "system"):
            continue
        if m.role == "user":
            assert not open_calls, "a user message before the tool results of the previous calls"
            expect_user = False
            continue
        assert not expect_user, f"{m.role} message before any user message"
        if m.role == "assistant":
            assert not open_calls, "an assistant message before the tool results"
            open_calls = {c.id for c in m.tool_calls or []}
        elif m.role == "tool":
            assert m.tool_calls and m.tool_calls[0].id in open_calls, "a tool result without its call"
            open_calls.discard(m.tool_calls[0].id)
    assert not open_calls


# ---------------------------------------------------------------------------------------------
# Operations


def test_edit_keeps_the_old_tail_as_a_version_and_switching_restores_it() -> None:
    conv = _chat("one", "two", "three")
    second = conv.messages[2]
    new = edit_user_message(conv, second.id, "TWO")
    assert _texts(conv) == ["one", "answer to one", "TWO"]
    assert conv.messages[-1] is new and new.role == "user" and new.id != second.id
    assert versions_at(conv, new.id) == (2, 2)
    _answer(conv, "answer to TWO")
    switch_version(conv, new.id, 1)
    assert _texts(conv) == ["one", "answer to one", "two", "answer to two", "three", "answer to three"]
    assert versions_at(conv, conv.messages[2].id) == (1, 2)
    ref = conv.messages[2].extra[VERSIONS_KEY]["others"][0]
    stored = conv.messages[2].extra[TAILS_KEY][ref]  # the tail, in the table of its owner
    assert stored[0]["content"] == "TWO" and VERSIONS_KEY not in stored[0]  # the record moved
    switch_version(conv, conv.messages[2].id, 2)
    assert _texts(conv) == ["one", "answer to one", "TWO", "answer to TWO"]
    assert_valid_path(conv.messages)


def test_edit_twice_counts_three_versions_in_creation_order() -> None:
    conv = _chat("q")
    a = edit_user_message(conv, conv.messages[0].id, "q2")
    _answer(conv, "a2")
    b = edit_user_message(conv, a.id, "q3")
    assert versions_at(conv, b.id) == (3, 3)
    switch_version(conv, b.id, 2)
    assert _texts(conv) == ["q2", "a2"]
    switch_version(conv, conv.messages[0].id, 1)
    assert _texts(conv) == ["q", "answer to q"]
    assert versions_at(conv, conv.messages[0].id) == (1, 3)


def test_regenerate_ends_the_path_at_the_user_message_and_keeps_the_answer() -> None:
    conv = create_conversation()
    user = append_message(conv, "user", "q")
    final = _answer(conv, "first", tool=True)
    carrier = regenerate(conv, final.id)
    assert carrier is user and conv.messages == [user]
    assert version_controls(conv) == {user.id: VersionControl(user.id, "answer", 2, 2)}
    again = _answer(conv, "second", 20)
    assert versions_at(conv, again.id) == (2, 2)
    assert version_controls(conv)[again.id] == VersionControl(user.id, "answer", 2, 2)
    switch_version(conv, again.id, 1)
    assert [m.role for m in conv.messages] == ["user", "assistant", "tool", "assistant"]
    assert conv.messages[-1].content == "first"
    assert_valid_path(conv.messages)


def test_regenerate_of_an_empty_answer_adds_no_version_and_switching_drops_it() -> None:
    conv = _chat("q")
    regenerate(conv, conv.messages[1].id)
    assert versions_at(conv, conv.messages[0].id) == (1, 1)  # the user message has no edits
    switch_fork(conv, conv.messages[0].id, "answer", 1)
    assert _texts(conv) == ["q", "answer to q"]
    assert ANSWERS_KEY not in conv.messages[0].extra  # the empty answer held nothing
    assert versions_at(conv, conv.messages[1].id) == (1, 1)


def test_bad_arguments_raise() -> None:
    conv = _chat("q")
    with pytest.raises(ValueError):
        edit_user_message(conv, conv.messages[1].id, "x")
    with pytest.raises(ValueError):
        regenerate(conv, conv.messages[0].id)
    with pytest.raises(KeyError):
        versions_at(conv, "nope")
    with pytest.raises(ValueError):
        switch_version(conv, conv.messages[0].id, 2)


def test_a_malformed_record_is_ignored_and_kept() -> None:
    conv = _chat("q")
    conv.messages[0].extra[ANSWERS_KEY] = {"active": 5, "others": "x"}
    assert versions_at(conv, conv.messages[1].id) == (1, 1)
    assert version_controls(conv) == {}
    assert len(all_responses(conv)) == 1
    again = deserialize_conversation(conversation_to_json(conv))
    assert again.messages[0].extra[ANSWERS_KEY] == {"active": 5, "others": "x"}
    regenerate(again, again.messages[1].id)  # a new record takes its place; the bad one is kept
    assert again.messages[0].extra[ANSWERS_KEY + "Unreadable"] == {"active": 5, "others": "x"}
    assert versions_at(again, again.messages[0].id) == (1, 1)
    assert len(all_responses(again)) == 1


def test_fork_prefix_copies_the_path_with_fresh_ids_and_no_versions() -> None:
    conv = _chat("one", "two")
    edit_user_message(conv, conv.messages[2].id, "TWO")
    _answer(conv, "answer to TWO")
    copies = fork_prefix(conv, conv.messages[3].id)
    assert [m.content for m in copies] == _texts(conv)[:4]
    assert not {m.id for m in copies} & {m.id for m in conv.messages}
    assert all(not {VERSIONS_KEY, ANSWERS_KEY, TAILS_KEY} & m.extra.keys() for m in copies)
    assert [m.extra[FORKED_FROM_KEY] for m in copies] == [m.id for m in conv.messages[:4]]
    copies[0].content = "changed"
    assert conv.messages[0].content == "one"  # deep copies
    forked = Conversation(id="c-f", messages=copies)
    assert all_responses(forked) == []  # paid by the original node


# ---------------------------------------------------------------------------------------------
# Storage: one flat table per message of the active path


def _depth(value: object) -> int:
    deepest, stack = 0, [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, (dict, list)):
            deepest = max(deepest, depth)
            stack.extend((c, depth + 1) for c in (item.values() if isinstance(item, dict) else item))
    return deepest


def _reachable(extra: dict[str, object], table: dict[str, list[dict[str, object]]]) -> set[str]:
    """The refs the records of ``extra`` reach through ``table``."""
    found: set[str] = set()
    stack = [extra]
    while stack:
        holder = stack.pop()
        for key in (VERSIONS_KEY, ANSWERS_KEY):
            record = holder.get(key)
            for ref in record["others"] if isinstance(record, dict) else []:
                if ref not in found:
                    found.add(ref)
                    stack.extend(table[ref])
    return found


def assert_owned(conv: Conversation) -> None:
    """Each path message's table holds exactly the tails its own records reach; stored messages
    never hold a table."""
    for m in conv.messages:
        table = m.extra.get(TAILS_KEY, {})
        assert set(table) == _reachable(m.extra, table), m.content
        assert all(TAILS_KEY not in d for tail in table.values() for d in tail)


def test_switching_back_to_a_version_with_fork_points_gives_them_their_tails() -> None:
    conv = _chat("q0", "q1", "q2")
    regenerate(conv, conv.messages[5].id)
    _answer(conv, "b2")
    regenerate(conv, conv.messages[3].id)  # the stored answer holds q2's fork point
    _answer(conv, "b1")
    assert_owned(conv)
    assert TAILS_KEY not in conv.messages[0].extra
    switch_version(conv, conv.messages[3].id, 1)
    assert _texts(conv) == ["q0", "answer to q0", "q1", "answer to q1", "q2", "b2"]
    assert versions_at(conv, conv.messages[5].id) == (2, 2)  # q2's versions came back with it
    assert_owned(conv)
    assert len(all_responses(conv)) == 5
    switch_version(conv, conv.messages[5].id, 1)
    assert _texts(conv)[-1] == "answer to q2"
    edit_user_message(conv, conv.messages[2].id, "Q1")  # q1 and q2 with their versions go under Q1
    assert_owned(conv)
    assert len(all_responses(conv)) == 5 and len(conv.messages[2].extra[TAILS_KEY]) == 3


def test_the_json_depth_does_not_grow_with_versions() -> None:
    depths = []
    for answers in (2, 300):  # 300 nested versions: the older form nested 1,200 levels deep
        conv = _chat(*(f"q{i}" for i in range(answers)))
        for i in reversed(range(answers)):
            regenerate(conv, conv.messages[2 * i + 1].id)
            _answer(conv, f"b{i}")
        depths.append(_depth(json.loads(conversation_to_json(conv))))
        again = deserialize_conversation(conversation_to_json(conv))
        assert len(all_responses(again)) == 2 * answers
        switch_version(again, again.messages[1].id, 1)  # back to the first answer of q0
        assert _texts(again) == ["q0", "answer to q0", "q1", "b1"]
        assert_owned(again)
        assert len(list(stored_versions(again.messages))) == answers
    assert depths[0] == depths[1]


def _nested(exchanges: int) -> Conversation:
    """A conversation with versions in the older nested form (each tail inside its record), as
    the app wrote them before: every answer regenerated once, from the last to the first."""
    conv = _chat(*(f"q{i}" for i in range(exchanges)))
    ts = conv.messages[0].ts
    later: list[dict[str, object]] = []
    for i in reversed(range(exchanges)):
        q, a = conv.messages[2 * i], conv.messages[2 * i + 1]
        tail = [message_to_dict(a), *later]
        q.extra = {ANSWERS_KEY: {"active": 1, "others": [tail]}}
        later = [message_to_dict(q), {"id": f"b{i}", "role": "assistant", "content": f"b{i}", "ts": ts}]
    conv.messages[1:] = [message_from_dict(later[1])]
    return conv


def test_nested_records_of_the_older_form_are_read_and_flattened() -> None:
    conv = _nested(40)
    assert _depth(json.loads(conversation_to_json(conv))) > 128
    assert versions_at(conv, "b0") == (2, 2) and len(all_responses(conv)) == 80
    labels = [label for label, _ in stored_versions(conv.messages)]
    assert len(labels) == 40 and labels[0] == 'Answer 1 of 2 to "q0"'
    before = (_texts(conv), sorted(m.id for m in all_responses(conv)), labels)
    assert flatten_versions(conv.messages) == 40
    assert (_texts(conv), sorted(m.id for m in all_responses(conv)),
            [label for label, _ in stored_versions(conv.messages)]) == before
    assert _depth(json.loads(conversation_to_json(conv))) < 20
    assert_owned(conv)
    assert flatten_versions(conv.messages) == 0


def test_operations_flatten_nested_records_first() -> None:
    conv = _nested(5)
    switch_version(conv, "b0", 1)
    assert _texts(conv) == ["q0", "answer to q0", "q1", "b1"]
    assert_owned(conv)
    assert len(all_responses(conv)) == 10


# ---------------------------------------------------------------------------------------------
# Persistence and compatibility


def test_versions_survive_save_and_load_with_the_chosen_version() -> None:
    conv = _chat("one", "two")
    new = edit_user_message(conv, conv.messages[0].id, "ONE")
    _answer(conv, "answer to ONE")
    regenerate(conv, conv.messages[1].id)
    _answer(conv, "again")
    switch_version(conv, conv.messages[1].id, 1)
    again = deserialize_conversation(serialize_conversation(conv))
    assert _texts(again) == _texts(conv) == ["ONE", "answer to ONE"]
    assert versions_at(again, again.messages[0].id) == (2, 2)
    assert versions_at(again, again.messages[1].id) == (1, 2)
    switch_version(again, new.id, 1)
    assert _texts(again) == ["one", "answer to one", "two", "answer to two"]


def test_an_old_file_loads_unchanged() -> None:
    old = json.dumps(
        {
            "v": 2,
            "id": "c-1",
            "createdAt": 1,
            "messages": [
                {"id": "u", "role": "user", "content": "q", "ts": 1},
                {"id": "a", "role": "assistant", "content": "r", "ts": 2},
            ],
        }
    )
    conv = deserialize_conversation(old)
    assert versions_at(conv, "a") == (1, 1) and version_controls(conv) == {}
    assert json.loads(conversation_to_json(conv))["messages"][0] == {
        "id": "u",
        "role": "user",
        "content": "q",
        "ts": 1,
        "stopped": False,
    }


def test_todays_loader_reads_the_active_path_of_a_new_file(tmp_path: Path) -> None:
    """A loader without versions support reads a new file's active path and writes the versions back."""
    conv = _chat("one", "two")
    edit_user_message(conv, conv.messages[2].id, "TWO")
    _answer(conv, "answer to TWO")
    text = conversation_to_json(conv)
    # Versions live in message ``extra``: the codec was not changed for them, so today's codec
    # (copied below with only the modules it needs, no ``versions``) is the loader that predates them.
    old_codec = (ROOT / "desktop/core/chat/_codec.py").read_text(encoding="utf-8")
    pkg = tmp_path / "oldpkg"
    pkg.mkdir()
    here = ROOT / "desktop/core/chat"
    for name in ("_appliers.py", "_quoted.py", "types.py"):
        (pkg / name).write_text((here / name).read_text())
    (pkg / "_codec.py").write_text(old_codec)
    (pkg / "__init__.py").write_text("")
    (tmp_path / "conv.json").write_text(text, encoding="utf-8")
    script = (
        "import json, sys; from oldpkg._codec import deserialize_conversation, _encode_conversation\n"
        "c = deserialize_conversation(open(sys.argv[1], encoding='utf-8').read())\n"
        "print(json.dumps([m.content for m in c.messages]))\n"
        "open(sys.argv[2], 'w', encoding='utf-8').write(_encode_conversation(c, c.messages))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", script, str(tmp_path / "conv.json"), str(tmp_path / "back.json")],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=True,
    )
    assert json.loads(out.stdout) == ["one", "answer to one", "TWO", "answer to TWO"]
    back = deserialize_conversation((tmp_path / "back.json").read_text(encoding="utf-8"))
    assert versions_at(back, back.messages[2].id) == (2, 2)  # the old loader kept the versions


# ---------------------------------------------------------------------------------------------
# The cap and the archive


def test_the_cap_counts_versions_and_archives_them_with_their_exchange(tmp_path: Path) -> None:
    conv = _chat("one", "two", "three")
    regenerate(conv, conv.messages[1].id)
    _answer(conv, "x" * 3000)
    switch_version(conv, conv.messages[1].id, 1)  # the big answer is now a stored version
    size_without = len(serialize_conversation(_chat("one", "two", "three")).encode())
    kept, dropped = split_for_cap(conv.messages, size_without + 200)
    assert dropped, "the stored version's bytes count towards the cap"
    assert dropped[0].id == conv.messages[0].id and ANSWERS_KEY in dropped[0].extra
    plan = plan_trim("n1", conv.messages, size_without + 200)
    assert plan is not None
    kept, to_archive, info = plan
    archive = HistoryArchive(tmp_path)
    archive.append("n1", to_archive)
    read = archive.read("n1").messages
    assert any(m.content == "x" * 3000 for m in responses_in(read))
    live = deserialize_conversation(conversation_to_json(conv))
    assert apply_trim(live, info)
    before = {m.id for m in all_responses(conv)}
    assert before == {m.id for m in all_responses(live)} | {m.id for m in responses_in(read)}
    # a cap that keeps the fork point keeps its versions
    kept2, dropped2 = split_for_cap(conv.messages, 10**6)
    assert not dropped2 and ANSWERS_KEY in kept2[0].extra


# ---------------------------------------------------------------------------------------------
# Export and cost


def test_markdown_export_writes_the_path_and_optionally_the_other_versions() -> None:
    conv = _chat("q")
    regenerate(conv, conv.messages[1].id)
    _answer(conv, "second answer")
    plain = conversation_markdown("T", conv.messages)
    assert "second answer" in plain and "answer to q" not in plain and "Other versions" not in plain
    full = conversation_markdown("T", conv.messages, include_versions=True)
    assert full.index("second answer") < full.index("## Other versions") < full.index("answer to q")
    assert 'Answer 1 of 2 to "q"' in full


def test_cost_counts_every_version_and_splits_this_path_from_the_others() -> None:
    conv = _chat("q")
    regenerate(conv, conv.messages[1].id)
    _answer(conv, "second", 1000)
    split = cost_split(conv, "m", PRICES)
    assert [m.content for m in other_versions(conv)] == ["answer to q"]
    assert split.total.usd == pytest.approx(split.this_path.usd + split.other.usd)
    assert split.this_path.usd == pytest.approx(conversation_cost(conv.messages, "m", PRICES).usd)
    assert split.other.usd == pytest.approx((10 * 1 + 2 * 2) / 1e6)
    assert cost_split_text(split) == "This path: $0.0010 · other versions: $0.0000"
    assert cost_split_text(cost_split(_chat("q"), "m", PRICES)) == ""


# ---------------------------------------------------------------------------------------------
# The stateful model


class VersionsMachine(RuleBasedStateMachine):
    """Random edit / regenerate / switch / save+load / cap sequences keep the invariants."""

    def __init__(self) -> None:
        super().__init__()
        self.conv = _chat("hello")
        self.archive: list[ChatMessage] = []
        self.seen: collections.Counter[str] = collections.Counter(m.id for m in all_responses(self.conv))
        self.counter = 0

    def _responses(self) -> list[ChatMessage]:
        return all_responses(self.conv) + responses_in(self.archive)

    def _users(self) -> list[ChatMessage]:
        return [m for m in self.conv.messages if m.role == "user"]

    @precondition(lambda self: bool(self._users()))
    @rule(data=st.data(), tool=st.booleans())
    def edit(self, data: st.DataObject, tool: bool) -> None:
        target = data.draw(st.sampled_from(self._users()))
        self.counter += 1
        new = edit_user_message(self.conv, target.id, f"edit {self.counter}")
        assert self.conv.messages[-1] is new
        _answer(self.conv, f"a{self.counter}", self.counter, tool=tool)

    @precondition(lambda self: any(m.role == "assistant" for m in self.conv.messages))
    @rule(data=st.data(), tool=st.booleans(), answer=st.booleans())
    def regenerate(self, data: st.DataObject, tool: bool, answer: bool) -> None:
        target = data.draw(st.sampled_from([m for m in self.conv.messages if m.role == "assistant"]))
        carrier = regenerate(self.conv, target.id)
        assert self.conv.messages[-1] is carrier
        self.counter += 1
        if answer:  # else the send failed before any answer
            _answer(self.conv, f"r{self.counter}", self.counter, tool=tool)

    @precondition(lambda self: bool(version_controls(self.conv)))
    @rule(data=st.data())
    def switch(self, data: st.DataObject) -> None:
        controls = version_controls(self.conv)
        mid = data.draw(st.sampled_from(list(controls)))  # path order: ids are random
        control = controls[mid]
        k = data.draw(st.integers(1, control.n))
        position = [m.id for m in self.conv.messages].index(control.carrier_id)
        switch_fork(self.conv, control.carrier_id, control.kind, k)
        if control.kind == "edit":
            assert versions_at(self.conv, self.conv.messages[position].id) == (k, control.n)

    @rule()
    def send_new(self) -> None:
        if self.conv.messages and self.conv.messages[-1].role == "user":
            return
        self.counter += 1
        append_message(self.conv, "user", f"q{self.counter}")
        _answer(self.conv, f"n{self.counter}", self.counter)

    @rule()
    def save_and_load(self) -> None:
        before = sorted(m.id for m in all_responses(self.conv))
        path = _texts(self.conv)
        self.conv = deserialize_conversation(conversation_to_json(self.conv))
        assert sorted(m.id for m in all_responses(self.conv)) == before
        assert _texts(self.conv) == path

    @rule(cap=st.integers(200, 3000))
    def cap(self, cap: int) -> None:
        plan = plan_trim("n", self.conv.messages, cap)
        if plan is None:
            return
        _kept, to_archive, info = plan
        self.archive.extend(to_archive)
        apply_trim(self.conv, info)

    @invariant()
    def path_is_valid(self) -> None:
        assert_valid_path(self.conv.messages)

    @invariant()
    def no_response_is_lost(self) -> None:
        now = collections.Counter(m.id for m in self._responses())
        assert all(now[k] >= v for k, v in self.seen.items()), "a response was lost"
        assert all(v == 1 for v in now.values()), "a response is counted twice"
        self.seen = now

    @invariant()
    def cost_counts_every_version(self) -> None:
        responses = self._responses()
        expected = sum(2.0 * m.usage.output_tokens + m.usage.input_tokens for m in responses if m.usage) / 1e6
        total = conversation_cost(responses, "m", PRICES).usd
        assert total == pytest.approx(expected)
        split = cost_split(self.conv, "m", PRICES)
        assert split.total.usd == pytest.approx(split.this_path.usd + split.other.usd)
        assert split.total.usd == pytest.approx(conversation_cost(all_responses(self.conv), "m", PRICES).usd)


VersionsMachine.TestCase.settings = settings(
    max_examples=60, stateful_step_count=25, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
TestVersionsMachine = VersionsMachine.TestCase
