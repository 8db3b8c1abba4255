"""Fixtures for the project tool tests: a real temp project folder and its tools by name."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

from desktop.core.chat.types import ChatToolDef
from desktop.core.tools import project_tools

RunTool = Callable[..., Awaitable[str]]


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    root.mkdir()
    return root


@pytest.fixture
def tools(project: Path) -> dict[str, ChatToolDef]:
    return {t.name: t for t in project_tools(project)}


@pytest.fixture
def run(tools: dict[str, ChatToolDef]) -> RunTool:
    """``await run("read_file", path="x")``: call a tool the way the chat loop does and return its text.

    Tests that use it are ``@pytest.mark.anyio`` async tests, so the tool runs on the test's event loop.
    """

    async def call(name: str, **args: Any) -> str:
        return await tools[name].run(args)

    return call
