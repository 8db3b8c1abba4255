"""The scripted conversation behind ``--demo``; it lives in ``desktop.demo`` (re-exported here)."""

from desktop.demo._script import (
    DEMO_FIRST_PROMPT,
    DEMO_MODEL,
    DEMO_MODELS,
    DEMO_NOTE_CONTENT,
    DEMO_NOTE_PATH,
    DEMO_PROVIDER_ID,
    demo_responder,
    start_demo_provider,
)

__all__ = [
    "DEMO_FIRST_PROMPT",
    "DEMO_MODEL",
    "DEMO_MODELS",
    "DEMO_NOTE_PATH",
    "DEMO_NOTE_CONTENT",
    "DEMO_PROVIDER_ID",
    "demo_responder",
    "start_demo_provider",
]
