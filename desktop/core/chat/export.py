"""A conversation as a Markdown document, and its token totals.

Both are pure functions of the messages: the chat node calls them for its export and its chips,
and they are tested without Qt.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from .attachment_ref import AttachmentRef, attachment_entries
from .types import ChatMessage
from .versions import stored_versions

AttachmentLink = Callable[[AttachmentRef], str | None]

__all__ = [
    "AttachmentLink",
    "TokenTotals",
    "code_fence",
    "conversation_markdown",
    "default_attachment_link",
    "token_totals",
]

_HEADINGS = {"user": "You", "assistant": "Assistant", "system": "System"}


@dataclass(frozen=True, slots=True)
class TokenTotals:
    """Usage summed over a conversation's assistant messages.

    Attributes:
        input: Uncached input tokens.
        cache_read: Input tokens read from the provider's prompt cache.
        cache_write: Input tokens written to the provider's prompt cache.
        output: Output tokens (reasoning included).
        reasoning: The part of ``output`` spent on reasoning.
        responses: How many assistant messages carried usage.
    """

    input: int = 0
    cache_read: int = 0
    cache_write: int = 0
    output: int = 0
    reasoning: int = 0
    responses: int = 0

    @property
    def total_input(self) -> int:
        """Every input token: uncached plus cache reads and writes."""
        return self.input + self.cache_read + self.cache_write


def token_totals(messages: Sequence[ChatMessage]) -> TokenTotals:
    """Sum the usage of the assistant messages (other roles and messages without usage are skipped).

    Args:
        messages: The conversation's messages.

    Returns:
        The totals; all zero when no assistant message has usage.
    """
    inp = cache_read = cache_write = output = reasoning = responses = 0
    for m in messages:
        u = m.usage
        if u is None or m.role != "assistant":
            continue
        inp += u.input_tokens
        cache_read += u.cache_read_tokens
        cache_write += u.cache_write_tokens
        output += u.output_tokens
        reasoning += u.reasoning_tokens
        responses += 1
    return TokenTotals(inp, cache_read, cache_write, output, reasoning, responses)


def code_fence(text: str) -> str:
    """A backtick fence longer than any backtick run in ``text`` (at least three backticks).

    Args:
        text: The text the fence encloses.

    Returns:
        The fence, e.g. ``"```"`` or ``"````"`` when ``text`` contains three backticks in a row.
    """
    longest = 2
    run = 0
    for ch in text:
        run = run + 1 if ch == "`" else 0
        longest = max(longest, run)
    return "`" * (longest + 1)


def default_attachment_link(ref: AttachmentRef) -> str:
    """Where an attachment's file is, relative to the project folder (an export saved there)."""
    return f".chatnodes/attachments/{ref.file_name}"


def conversation_markdown(
    title: str,
    messages: Sequence[ChatMessage],
    *,
    archived: int = 0,
    include_versions: bool = False,
    attachment_link: AttachmentLink | None = None,
) -> str:
    """Render ``messages`` as a Markdown document (the node's export).

    Tool results are written under the call that produced them, notes as quotes, thinking in a
    collapsed ``<details>`` block, a user message's attachments as a list of links to their files
    (images as embedded images). The document shows the active path; with ``include_versions``
    the other versions kept at each fork point (``desktop.core.chat.versions``) follow, each under
    a heading that says where it branches off, nested versions after their parent.

    Args:
        title: The document heading.
        messages: The messages, oldest first (archived history first).
        archived: How many leading messages came from the history archive (a rule marks the end).
        include_versions: Append the versions that are not on the active path.
        attachment_link: The link target of an attachment's file (relative to where the document
            is saved: ``AttachmentStore.link``), or None when the file is missing (the entry then
            says so). Default: ``default_attachment_link``, unchecked.

    Returns:
        The document, ending with one newline.
    """
    link = attachment_link or default_attachment_link
    out = [f"# {title}", ""]
    for i, m in enumerate(messages):
        if archived and i == archived:
            out += ["---", "", "*(earlier messages above were moved to the history archive)*", ""]
        _render_message(out, m, "##", link)
    if include_versions:
        sections = list(stored_versions(messages))
        if sections:
            out += ["---", "", "## Other versions", ""]
        for label, tail in sections:
            out += [f"### {label}", ""]
            if not tail:
                out += ["*(empty)*", ""]
            for m in tail:
                _render_message(out, m, "####", link)
    return "\n".join(out).rstrip() + "\n"


_LINK_TEXT = re.compile(r"([\\`*_\[\]<>!|])")


def _render_attachments(out: list[str], m: ChatMessage, link: AttachmentLink) -> None:
    refs, bad = attachment_entries(m)
    if not refs and not bad:
        return
    out += ["Attachments:", ""]
    for ref in refs:
        text = _LINK_TEXT.sub(r"\\\1", ref.name)
        details = _LINK_TEXT.sub(r"\\\1", ref.describe()[len(ref.name):].strip())
        try:
            target = link(ref)
        except Exception:  # a link that cannot be made is reported, never a failed export
            target = None
        if target is not None:
            target = target.replace("<", "%3C").replace(">", "%3E").replace("\n", "").replace("\r", "")
        if target is None:
            out.append(f"- {text} {details} *(file missing)*")
        elif ref.kind == "image":
            out.append(f"- ![{text}](<{target}>) {details}")
        else:
            out.append(f"- [{text}](<{target}>) {details}")
    if bad:
        out.append(f"- *({bad} damaged attachment reference{'s' if bad != 1 else ''})*")
    out.append("")


def _render_message(out: list[str], m: ChatMessage, level: str, link: AttachmentLink) -> None:
    if m.role == "tool":
        return  # results are exported with the call that produced them
    if m.role == "note":
        note_lines = m.content.split("\n")
        out += [f"> *Note:* {line}" if j == 0 else f"> {line}" for j, line in enumerate(note_lines)]
        out.append("")
        return
    heading = _HEADINGS.get(m.role, m.role)
    if m.role == "assistant" and m.model:
        heading += f" ({m.model})"
    out += [f"{level} {heading}", ""]
    if m.thinking:
        out += ["<details><summary>Thinking</summary>", "", m.thinking, "", "</details>", ""]
    if m.content:
        out += [m.content, ""]
    if m.role == "user":
        _render_attachments(out, m, link)
    for call in m.tool_calls or []:
        args = call.args_json or "{}"
        fence = code_fence(args)
        out += [f"**Tool call** `{call.name}` — {call.status}", "", f"{fence}json", args, fence, ""]
        if call.result is not None:
            fence = code_fence(call.result)
            out += ["Result:", "", fence, call.result, fence, ""]
    if m.stopped:
        out += ["*(stopped)*", ""]
