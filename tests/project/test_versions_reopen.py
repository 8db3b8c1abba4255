"""Property: any sequence of edits, regenerations and switches, saved by the app after each step,
reopens identically (and every saved file stays as shallow as a project without versions)."""

from __future__ import annotations

import collections
import json
import shutil
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule
from versions_helpers import FLAT_DEPTH, json_depth, state

from desktop.core.chat.conversation import Conversation, append_message, conversation_to_json, new_id
from desktop.core.chat.types import ChatMessage, ToolCall, Usage
from desktop.core.chat.versions import (
    all_responses,
    edit_user_message,
    regenerate,
    responses_in,
    switch_fork,
    version_controls,
)
from desktop.core.store import Project, ProjectStore, apply_trim, new_node_state


def _answer(conv: Conversation, text: str, *, tool: bool) -> None:
    if tool:
        call = ToolCall(f"call-{new_id()}", "read_file", "{}", "ok", False, "done")
        first = append_message(conv, "assistant", "")
        first.tool_calls, first.usage = [call], Usage(4, 1)
        append_message(conv, "tool", "ok").tool_calls = [call.copy()]
    append_message(conv, "assistant", text).usage = Usage(5, 2)


class ReopenMachine(RuleBasedStateMachine):
    """The app's loop: change the node, save through ``ProjectStore``, sometimes reopen the folder."""

    def __init__(self) -> None:
        super().__init__()
        self.folder = Path(tempfile.mkdtemp(prefix="versions-reopen-"))
        self.store = ProjectStore(self.folder)
        self.node = new_node_state(node_id="n-prop")
        self.counter = 0
        self.seen: collections.Counter[str] = collections.Counter()

    @property
    def conv(self) -> Conversation:
        return self.node.conversation

    @initialize(cap=st.sampled_from([200 * 1024, 6 * 1024, 2 * 1024]))
    def start(self, cap: int) -> None:
        self.store.history_cap_bytes = cap  # small caps move versions to the archive as well
        append_message(self.conv, "user", "hello")
        _answer(self.conv, "hi", tool=False)
        self._save()

    def teardown(self) -> None:
        self.store.release()
        shutil.rmtree(self.folder, ignore_errors=True)

    def _save(self) -> None:
        result = self.store.save(Project(nodes=[self.node]))
        for info in result.trimmed.values():
            apply_trim(self.conv, info)
        assert json_depth(json.loads((self.folder / "project.json").read_bytes())) <= FLAT_DEPTH

    def _users(self) -> list[ChatMessage]:
        return [m for m in self.conv.messages if m.role == "user"]

    @precondition(lambda self: bool(self._users()))
    @rule(data=st.data(), tool=st.booleans())
    def edit(self, data: st.DataObject, tool: bool) -> None:
        target = data.draw(st.sampled_from(self._users()))
        self.counter += 1
        edit_user_message(self.conv, target.id, f"edit {self.counter}")
        _answer(self.conv, f"e{self.counter} " + "x" * 200, tool=tool)
        self._save()

    @precondition(lambda self: any(m.role == "assistant" for m in self.conv.messages))
    @rule(data=st.data(), tool=st.booleans(), answered=st.booleans())
    def regenerate(self, data: st.DataObject, tool: bool, answered: bool) -> None:
        target = data.draw(st.sampled_from([m for m in self.conv.messages if m.role == "assistant"]))
        regenerate(self.conv, target.id)
        self.counter += 1
        if answered:  # else the send failed before any answer
            _answer(self.conv, f"r{self.counter} " + "y" * 200, tool=tool)
        self._save()

    @precondition(lambda self: bool(version_controls(self.conv)))
    @rule(data=st.data())
    def switch(self, data: st.DataObject) -> None:
        controls = version_controls(self.conv)
        control = controls[data.draw(st.sampled_from(list(controls)))]  # path order: ids are random
        others = [k for k in range(1, control.n + 1) if k != control.k]
        switch_fork(self.conv, control.carrier_id, control.kind, data.draw(st.sampled_from(others)))
        self._save()

    @rule()
    def ask(self) -> None:
        if self.conv.messages and self.conv.messages[-1].role == "user":
            return
        self.counter += 1
        append_message(self.conv, "user", f"q{self.counter}")
        _answer(self.conv, f"n{self.counter}", tool=False)
        self._save()

    @rule()
    def reopen(self) -> None:
        """Close the project and open it again; the app goes on with what it loaded."""
        before_state = state(self.conv)
        before_json = json.loads(conversation_to_json(self.conv))
        cap = self.store.history_cap_bytes
        self.store.release()
        self.store = ProjectStore(self.folder, history_cap_bytes=cap)
        result = self.store.open()
        assert result.error is None and not result.notices
        (self.node,) = result.value.nodes
        assert state(self.conv) == before_state
        assert json.loads(conversation_to_json(self.conv)) == before_json  # every field, every version

    @invariant()
    def no_response_is_lost_or_doubled(self) -> None:
        if not self.conv.messages:
            return  # before ``start``
        archived = responses_in(self.store.read_archive(self.node.id))
        now = collections.Counter(m.id for m in [*all_responses(self.conv), *archived])
        assert all(v == 1 for v in now.values()), "a response is counted twice"
        assert all(now[k] >= 1 for k in self.seen), "a response was lost"
        self.seen = now


ReopenMachine.TestCase.settings = settings(
    max_examples=30, stateful_step_count=20, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
TestReopenMachine = ReopenMachine.TestCase
