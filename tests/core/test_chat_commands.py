"""Slash-command effects decided by the core (no Qt): what each command asks the node to do."""

from __future__ import annotations

from typing import Any

from desktop.core.chat import (
    COMMAND_HELP,
    HELP_TEXT,
    ChatMessage,
    CommandContext,
    CommandEffect,
    ConversationCost,
    Price,
    Usage,
    archive_failed_note,
    detect_slash_command,
    run_command,
)
from desktop.core.chat.conversation import SLASH_COMMANDS


def effect(text: str, **ctx: Any) -> CommandEffect:
    command = detect_slash_command(text)
    assert command is not None, text
    return run_command(command, CommandContext(**ctx))


def test_help_lists_every_command() -> None:
    assert {name.lstrip("/") for name, _ in COMMAND_HELP} == set(SLASH_COMMANDS)
    e = effect("/help", messages=[])
    assert e == CommandEffect(notes=(HELP_TEXT,))
    assert HELP_TEXT.startswith("Commands:\n/clear — empty the conversation")
    assert HELP_TEXT.endswith("\n/system clear — remove the system prompt")


def test_clear_asks_for_archive_then_empty_unless_busy() -> None:
    assert effect("/clear", messages=[]) == CommandEffect(clear=True)
    busy = effect("/clear", messages=[], busy=True)
    assert busy == CommandEffect(notes=("Stop the running response before /clear.",))
    assert archive_failed_note("disk full") == (
        "Not cleared: the history archive could not be written (disk full)."
    )


def test_model_sets_or_shows() -> None:
    set_model = effect("/model gpt-9", messages=[])
    assert set_model == CommandEffect(new_model="gpt-9", notes=("Model set to gpt-9.",))
    shown = effect("/model", messages=[], model=None, default_model="gpt-4o-mini")
    assert shown.notes == ("Usage: /model <id> — current model: gpt-4o-mini (provider default)",)
    assert shown.new_model is None
    picked = effect("/model", messages=[], model="mine", default_model="gpt-4o-mini")
    assert picked.notes == ("Usage: /model <id> — current model: mine",)
    nothing = effect("/model", messages=[])
    assert nothing.notes == ("Usage: /model <id> — current model: (none) (provider default)",)


def test_system_sets_shows_and_removes() -> None:
    assert effect("/system", messages=[]).notes == ("No system prompt. Usage: /system <text>",)
    shown = effect("/system", messages=[], system="Be brief.")
    assert shown.notes == ("System prompt:\nBe brief.\n(/system <text> to change, /system clear to remove)",)
    assert shown.new_system is None and not shown.remove_system
    set_ = effect("/system Answer in French.", messages=[])
    assert set_.new_system == "Answer in French." and not set_.remove_system
    assert set_.notes == ("System prompt set (17 characters); it is sent with every request.",)
    removed = effect("/system CLEAR", messages=[], system="x")
    assert removed == CommandEffect(remove_system=True, notes=("System prompt removed.",))


def test_cost_prices_with_the_node_model_and_overrides() -> None:
    messages = [ChatMessage(id="a", role="assistant", content="x", ts=0, usage=Usage(1000, 1000))]
    prices = {"node-model": Price(2.0, 8.0)}
    e = effect("/cost", messages=messages, default_model="node-model", overrides=prices)
    assert len(e.notes) == 1
    lines = e.notes[0].split("\n")
    assert lines[0] == "Cost: $0.0100 over 1 response(s)"
    assert "  node-model: 1 response(s), $0.0100" in lines
    # The picked model beats the default; a cached cost is used as given.
    e2 = effect("/cost", messages=messages, model="unpriced-xyz", default_model="node-model",
                overrides=prices, cost=ConversationCost(0.0, True, 1))
    assert e2.notes[0].split("\n")[0] == "Cost: n/a over 1 response(s)"
    assert "  unpriced-xyz: 1 response(s), no price known" in e2.notes[0].split("\n")
