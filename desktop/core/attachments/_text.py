"""Text and code files: recognising UTF-8 text, and the fenced block a model gets.

A file is text when its first ``TEXT_SEND_BYTES`` (cut on a character boundary) decode as UTF-8
(a leading BOM allowed) and hold no NUL byte. The model gets at most ``TEXT_SEND_BYTES`` of it, as a
fenced block headed with the file name, the fence longer than any backtick run inside; a longer file
is cut there with a note saying how much was left out.
"""

from __future__ import annotations

import re

from desktop.core.chat.attachment_ref import format_size

__all__ = ["TEXT_SEND_BYTES", "decode_text", "fence_for", "fenced_file", "language_for"]

#: At most this many bytes of a text file are sent (the first MiB); the rest is named in a note.
TEXT_SEND_BYTES = 1024 * 1024

_BOM = b"\xef\xbb\xbf"
_BACKTICKS = re.compile("`{3,}")
_LANGUAGES = {
    "py": "python", "pyi": "python", "js": "javascript", "mjs": "javascript", "cjs": "javascript",
    "ts": "typescript", "tsx": "tsx", "jsx": "jsx", "json": "json", "jsonl": "json", "md": "markdown",
    "markdown": "markdown", "rs": "rust", "go": "go", "java": "java", "kt": "kotlin", "c": "c",
    "h": "c", "cc": "cpp", "cpp": "cpp", "hpp": "cpp", "cs": "csharp", "rb": "ruby", "php": "php",
    "sh": "bash", "bash": "bash", "zsh": "bash", "ps1": "powershell", "sql": "sql", "html": "html",
    "htm": "html", "css": "css", "scss": "scss", "xml": "xml", "yaml": "yaml", "yml": "yaml",
    "toml": "toml", "ini": "ini", "cfg": "ini", "swift": "swift", "lua": "lua", "r": "r",
    "csv": "csv", "diff": "diff", "patch": "diff", "log": "log", "txt": "text",
}


def decode_text(data: bytes, limit: int = TEXT_SEND_BYTES) -> tuple[str, bool] | None:
    """``(text, cut)``: at most ``limit`` bytes of ``data`` decoded as UTF-8, or None when not text.

    ``cut`` is True when ``data`` is longer than ``limit`` (the text then ends on the last whole
    character before it). A leading BOM is dropped; a NUL byte or invalid UTF-8 means not text.
    """
    body = data[len(_BOM):] if data.startswith(_BOM) else data
    cut = len(body) > limit
    head = body[:limit]
    if b"\x00" in head:
        return None
    try:
        return head.decode("utf-8"), cut
    except UnicodeDecodeError as exc:
        # A character split by the cut is fine; anything else is not text.
        if cut and exc.start >= len(head) - 3 and exc.reason == "unexpected end of data":
            return head[: exc.start].decode("utf-8"), cut
        return None


def fence_for(text: str) -> str:
    """A backtick fence longer than any run of three or more backticks in ``text`` (at least 3)."""
    longest = max((len(run) for run in _BACKTICKS.findall(text)), default=2)
    return "`" * (longest + 1)


def language_for(name: str) -> str:
    """The fence's language hint for a file name (``python`` for ``x.py``), else ``""``."""
    stem, dot, ext = name.rpartition(".")
    return _LANGUAGES.get(ext.lower(), "") if dot and stem else ""


def fenced_file(name: str, text: str, *, total_size: int, cut: bool) -> str:
    """The text a model gets for a text file: a heading line with the name, the fenced content and,
    when ``cut``, a note of how much was left out."""
    fence = fence_for(text)
    body = text if text.endswith("\n") or not text else text + "\n"
    lines = [f"Attached file: {name}", f"{fence}{language_for(name)}", f"{body}{fence}"]
    if cut:
        lines.append(
            f"(only the first {format_size(TEXT_SEND_BYTES)} of {format_size(total_size)} is included; "
            "the rest of the file was not sent)"
        )
    return "\n".join(lines)
