"""Test support: the loopback fake provider (from ``desktop.demo``) and test-only helpers.

The server itself is product code in ``desktop.demo`` (it also powers the app's ``--demo`` mode);
this package re-exports it under the names the tests and benchmarks use, and adds what only tests
need (``MemoryKeyring`` in ``desktop.testing.keyring``). Production code never imports this package.
"""

from desktop.demo import (
    DEFAULT_MODELS,
    DEMO_FIRST_PROMPT,
    DEMO_MODEL,
    DEMO_MODELS,
    DEMO_PROVIDER_ID,
    FakeProvider,
    Fault,
    LoopbackProvider,
    RecordedRequest,
    Responder,
    ToolCallSpec,
    Turn,
    demo_responder,
    huge_text,
    last_user_text,
    start_demo_provider,
)
from desktop.testing.keyring import MemoryKeyring

__all__ = [
    "DEFAULT_MODELS",
    "DEMO_FIRST_PROMPT",
    "DEMO_MODEL",
    "DEMO_MODELS",
    "DEMO_PROVIDER_ID",
    "FakeProvider",
    "Fault",
    "LoopbackProvider",
    "MemoryKeyring",
    "RecordedRequest",
    "Responder",
    "ToolCallSpec",
    "Turn",
    "demo_responder",
    "huge_text",
    "last_user_text",
    "start_demo_provider",
]
