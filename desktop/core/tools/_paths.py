"""Path confinement for the project tools: every path must stay inside the project folder."""

from __future__ import annotations

import logging
import os
from pathlib import Path, PurePosixPath, PureWindowsPath

log = logging.getLogger(__name__)

__all__ = ["ToolError", "ToolCancelled", "ProjectRoot"]


class ToolError(ValueError):
    """A tool refused or failed; the message is shown to the model (``tool error: ...``)."""


class ToolCancelled(ToolError):
    """A tool stopped because its run was cancelled (its cancel flag was set)."""


class ProjectRoot:
    """The sandbox root of the project tools.

    Paths given by the model are relative to the root. Absolute paths, ``..`` escapes and symlinks
    (the file itself or any parent folder) that resolve outside the root are refused. Symlinks that
    stay inside are followed.

    Args:
        root: The project folder; it must exist.
    """

    def __init__(self, root: Path) -> None:
        self.path = Path(root).resolve(strict=True)
        if not self.path.is_dir():
            raise ToolError(f"project folder is not a directory: {root}")

    def __repr__(self) -> str:
        return f"ProjectRoot({str(self.path)!r})"

    def contains(self, resolved: Path) -> bool:
        """True when an already resolved path is the root or inside it."""
        return resolved == self.path or self.path in resolved.parents

    def resolve(self, path: str, *, allow_root: bool = True) -> Path:
        """Resolve a model-given relative path to a real path inside the root.

        Args:
            path: Relative path (``/`` separators; ``.`` is the root).
            allow_root: Whether the root itself is an acceptable answer.

        Raises:
            ToolError: The path is empty, absolute, or resolves outside the project folder.
        """
        if not isinstance(path, str):
            raise ToolError("path must be a string")
        text = path.strip()
        if not text:
            raise ToolError("path must not be empty")
        if "\x00" in text:
            raise ToolError("path must not contain NUL characters")
        home = text == "~" or text.startswith(("~/", "~\\"))
        if (
            PurePosixPath(text).is_absolute()
            or PureWindowsPath(text).is_absolute()
            or text.startswith("\\")
            or home
        ):
            raise ToolError(f"path escapes the project folder: {path!r} (use a path relative to the project)")
        if PureWindowsPath(text).drive:
            raise ToolError(f"path escapes the project folder: {path!r} (drive letters are not allowed)")
        # realpath follows every symlink on the way, dangling ones included, and applies ``..``
        # after resolving the link before it, which is what the OS does when opening the path.
        resolved = Path(os.path.realpath(self.path / text))
        if not self.contains(resolved):
            raise ToolError(f"path escapes the project folder: {path!r}")
        if resolved == self.path and not allow_root:
            raise ToolError(f"path is the project folder itself: {path!r}")
        return resolved

    def relative(self, resolved: Path) -> str:
        """The root-relative POSIX form of a resolved path (``.`` for the root)."""
        rel = resolved.relative_to(self.path).as_posix()
        return rel or "."
