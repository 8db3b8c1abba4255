"""The demo's names and texts, importable without loading the server (the app reads them at startup)."""

from __future__ import annotations

__all__ = [
    "DEMO_FIRST_PROMPT",
    "DEMO_MODEL",
    "DEMO_MODELS",
    "DEMO_NOTE_CONTENT",
    "DEMO_NOTE_PATH",
    "DEMO_PROVIDER_ID",
]

DEMO_PROVIDER_ID = "demo"
"""The id of the in-memory provider entry that ``--demo`` adds to the settings (never saved)."""
DEMO_MODEL = "claude-sonnet-4-5"
"""The demo's default model (priced, so the cost chip shows real numbers)."""
DEMO_FIRST_PROMPT = "Hi! Show me what a chat node can do."
"""The message the demo tour types into the first node."""
DEMO_MODELS = [DEMO_MODEL, "claude-haiku-4-5", "claude-opus-4-1"]
"""What the demo provider lists on ``GET /v1/models``."""
DEMO_NOTE_PATH = "notes/hello.md"
"""The project file the demo's ``write_file`` call asks to write."""
DEMO_NOTE_CONTENT = (
    "# Hello from Chat Nodes\n\n"
    "This note was written by the demo model through the `write_file` tool,\n"
    "after you approved the call.\n\n"
    "- Every tool that changes something asks first.\n"
    "- Files stay inside the project folder.\n"
)
"""The text of that note."""
