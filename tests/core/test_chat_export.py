"""The Markdown export and the token totals, on plain messages (no Qt)."""

from __future__ import annotations

from typing import Any

from desktop.core.chat import (
    ChatMessage,
    TokenTotals,
    ToolCall,
    Usage,
    code_fence,
    conversation_markdown,
    token_totals,
)
from desktop.core.chat.types import Role


def msg(role: Role, content: str = "", **kw: Any) -> ChatMessage:
    return ChatMessage(id=f"m-{role}-{content[:8]}", role=role, content=content, ts=0, **kw)


def test_token_totals_sum_only_assistant_usage() -> None:
    messages = [
        msg("user", "hi", usage=Usage(999, 999)),  # a user message's usage is never counted
        msg("assistant", "a", usage=Usage(100, 20, cache_read_tokens=300, cache_write_tokens=40,
                                          reasoning_tokens=5)),
        msg("assistant", "b"),  # no usage: not a response that counts
        msg("assistant", "c", usage=Usage(7, 3)),
        msg("note", "n"),
    ]
    t = token_totals(messages)
    assert t == TokenTotals(input=107, cache_read=300, cache_write=40, output=23, reasoning=5, responses=2)
    assert t.total_input == 447
    assert token_totals([]) == TokenTotals()


def test_code_fence_outgrows_the_backtick_runs_of_the_text() -> None:
    assert code_fence("plain") == "```"
    assert code_fence("a ``` b") == "````"
    assert code_fence("`````") == "``````"
    assert code_fence("`` x ``") == "```"


def test_conversation_markdown_layout() -> None:
    call = ToolCall(id="c1", name="read_file", args_json='{"path": "a.md"}', result="text with ```",
                    status="done")
    messages = [
        msg("user", "Old question"),
        msg("system", "Be brief."),
        msg("user", "Read a.md"),
        msg("assistant", "Reading.", model="gpt-x", thinking="I should read it.", tool_calls=[call]),
        msg("tool", "text with ```", tool_calls=[call]),
        msg("note", "first line\nsecond line"),
        msg("assistant", "Partial", stopped=True),
    ]
    text = conversation_markdown("My node", messages, archived=1)
    assert text == "\n".join([
        "# My node", "",
        "## You", "", "Old question", "",
        "---", "", "*(earlier messages above were moved to the history archive)*", "",
        "## System", "", "Be brief.", "",
        "## You", "", "Read a.md", "",
        "## Assistant (gpt-x)", "",
        "<details><summary>Thinking</summary>", "", "I should read it.", "", "</details>", "",
        "Reading.", "",
        "**Tool call** `read_file` — done", "", "```json", '{"path": "a.md"}', "```", "",
        "Result:", "", "````", "text with ```", "````", "",
        "> *Note:* first line", "> second line", "",
        "## Assistant", "", "Partial", "",
        "*(stopped)*",
    ]) + "\n"


def test_conversation_markdown_without_archive_has_no_rule_and_empty_args_become_braces() -> None:
    call = ToolCall(id="c2", name="list_dir", args_json="", status="denied")
    text = conversation_markdown("T", [msg("assistant", "", tool_calls=[call])])
    assert "---" not in text and "history archive" not in text
    assert "**Tool call** `list_dir` — denied\n\n```json\n{}\n```\n" in text
    assert "Result:" not in text
    assert conversation_markdown("Empty", []) == "# Empty\n"
