"""Script objects of the loopback provider; they live in ``desktop.demo._spec`` (re-exported here)."""

from desktop.demo._spec import (
    Fault,
    FaultKind,
    RecordedRequest,
    Responder,
    ToolCallSpec,
    Turn,
    huge_text,
    last_user_text,
)

__all__ = [
    "Fault",
    "FaultKind",
    "RecordedRequest",
    "Responder",
    "ToolCallSpec",
    "Turn",
    "huge_text",
    "last_user_text",
]
