"""Fixtures for the project tool tests: a real temp project folder and its tools by name."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from desktop.core.chat.types import ChatToolDef
from desktop.core.tools import project_tools

RunTool = Callable[..., str]


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
    """``run("read_file", path="x")``: call a tool the way the chat loop does and return its text."""

    def call(name: str, **args: Any) -> str:
        return asyncio.run(tools[name].run(args))

    return call
