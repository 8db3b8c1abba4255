"""What each slash command does, as data: the node applies a ``CommandEffect``, it decides nothing.

``detect_slash_command`` (in ``conversation``) finds the command in the typed text;
``run_command`` turns it and a snapshot of the node (``CommandContext``) into the effect. The
``/clear`` effect asks the node to archive, then empty, the conversation; when archiving fails the
node shows ``archive_failed_note(reason)`` and keeps everything.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from .conversation import SlashCommand
from .cost import ConversationCost, Price
from .summary import cost_breakdown
from .types import ChatMessage

__all__ = [
    "COMMAND_HELP",
    "HELP_TEXT",
    "CommandContext",
    "CommandEffect",
    "archive_failed_note",
    "run_command",
]

#: Each command with its one-line description, in the order ``/help`` lists them.
COMMAND_HELP: tuple[tuple[str, str], ...] = (
    ("/clear", "empty the conversation (kept in the history archive)"),
    ("/model", "show or set the model: /model <id>"),
    ("/system", "show or set the system prompt: /system <text>"),
    ("/cost", "tokens and cost of this conversation"),
    ("/help", "list the commands"),
)

HELP_TEXT = (
    "Commands:\n"
    + "\n".join(f"{name} — {text}" for name, text in COMMAND_HELP)
    + "\n/system clear — remove the system prompt"
)


@dataclass(frozen=True, slots=True)
class CommandContext:
    """What a command may read of the node.

    Attributes:
        messages: The conversation's messages.
        model: The model picked in the node (None: the provider's default).
        default_model: The model a send would use when ``model`` is None (None: no provider).
        system: The node's system prompt.
        busy: True while a run of the node is in progress.
        overrides: The user's price overrides.
        cost: The conversation's cost when the node has it cached (``/cost`` computes it otherwise).
    """

    messages: Sequence[ChatMessage]
    model: str | None = None
    default_model: str | None = None
    system: str | None = None
    busy: bool = False
    overrides: Mapping[str, Price] = field(default_factory=dict)
    cost: ConversationCost | None = None


@dataclass(frozen=True, slots=True)
class CommandEffect:
    """What the node does for a command, in this order: model, system prompt, clear, notes.

    Attributes:
        new_model: Pick this model (None: leave the model as it is).
        new_system: Set this system prompt (None: leave it, unless ``remove_system``).
        remove_system: Remove the system prompt.
        clear: Archive the conversation's messages, then empty it (the notes follow only when
            archiving worked; on failure the node notes ``archive_failed_note``).
        notes: Notes to append to the conversation, in order.
    """

    new_model: str | None = None
    new_system: str | None = None
    remove_system: bool = False
    clear: bool = False
    notes: tuple[str, ...] = ()


def archive_failed_note(reason: str) -> str:
    """The note shown when ``/clear`` could not archive the messages (nothing was cleared)."""
    return f"Not cleared: the history archive could not be written ({reason})."


def run_command(command: SlashCommand, ctx: CommandContext) -> CommandEffect:
    """Decide what ``command`` does to a node in the state ``ctx``.

    Args:
        command: The detected command (``detect_slash_command``).
        ctx: The node's state.

    Returns:
        The effect to apply; an unknown command name has no effect.
    """
    name, arg = command.name, command.arg
    if name == "clear":
        if ctx.busy:
            return CommandEffect(notes=("Stop the running response before /clear.",))
        return CommandEffect(clear=True)
    if name == "model":
        if arg:
            return CommandEffect(new_model=arg, notes=(f"Model set to {arg}.",))
        current = ctx.model or ctx.default_model or "(none)"
        suffix = "" if ctx.model else " (provider default)"
        return CommandEffect(notes=(f"Usage: /model <id> — current model: {current}{suffix}",))
    if name == "system":
        return _system(arg, ctx.system)
    if name == "cost":
        pricing_model = ctx.model or ctx.default_model
        text = cost_breakdown(ctx.messages, pricing_model, ctx.overrides, cost=ctx.cost)
        return CommandEffect(notes=(text,))
    if name == "help":
        return CommandEffect(notes=(HELP_TEXT,))
    return CommandEffect()


def _system(arg: str, current: str | None) -> CommandEffect:
    if not arg:
        if current:
            return CommandEffect(
                notes=(f"System prompt:\n{current}\n(/system <text> to change, /system clear to remove)",)
            )
        return CommandEffect(notes=("No system prompt. Usage: /system <text>",))
    if arg.lower() == "clear":
        return CommandEffect(remove_system=True, notes=("System prompt removed.",))
    return CommandEffect(
        new_system=arg,
        notes=(f"System prompt set ({len(arg):,} characters); it is sent with every request.",),
    )
