"""The offline demo provider: a loopback HTTP server speaking the OpenAI and Anthropic protocols from scripts.

It powers the app's ``--demo`` mode (``start_demo_provider``, the ``DEMO_*`` constants) and, through
``desktop.testing``, the tests and the benchmarks (``LoopbackProvider`` scripted with ``Turn`` and
``Fault``). It needs no key and no network, and imports nothing from ``desktop.app``, ``desktop.ui``,
``desktop.core`` or ``desktop.testing``.

The ``DEMO_*`` constants cost nothing to import; every other name loads the server modules on first
use, so the app can read the constants before its first paint.

Modules: ``_constants`` (the demo's names and texts), ``_server`` (the server thread, scripting and
routing), ``_wire`` (HTTP/1.1 parsing and writing), ``_respond`` (chat answers, drip pacing, faults),
``_clock`` (what pacing, stalls and delays wait on; tests pass their own), ``_render`` (the bytes of
both protocols), ``_spec`` (turns, faults, recorded requests) and ``_script`` (the demo conversation).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from desktop.demo._constants import (
    DEMO_FIRST_PROMPT,
    DEMO_MODEL,
    DEMO_MODELS,
    DEMO_NOTE_CONTENT,
    DEMO_NOTE_PATH,
    DEMO_PROVIDER_ID,
)

if TYPE_CHECKING:
    from desktop.demo._clock import Clock, LoopClock
    from desktop.demo._script import demo_responder, start_demo_provider
    from desktop.demo._server import DEFAULT_MODELS, FakeProvider, LoopbackProvider
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
    "Clock",
    "DEFAULT_MODELS",
    "DEMO_FIRST_PROMPT",
    "DEMO_MODEL",
    "DEMO_MODELS",
    "DEMO_NOTE_CONTENT",
    "DEMO_NOTE_PATH",
    "DEMO_PROVIDER_ID",
    "FakeProvider",
    "Fault",
    "FaultKind",
    "LoopClock",
    "LoopbackProvider",
    "RecordedRequest",
    "Responder",
    "ToolCallSpec",
    "Turn",
    "demo_responder",
    "huge_text",
    "last_user_text",
    "start_demo_provider",
]

_LAZY = {
    "Clock": "_clock",
    "LoopClock": "_clock",
    "demo_responder": "_script",
    "start_demo_provider": "_script",
    "DEFAULT_MODELS": "_server",
    "FakeProvider": "_server",
    "LoopbackProvider": "_server",
    "Fault": "_spec",
    "FaultKind": "_spec",
    "RecordedRequest": "_spec",
    "Responder": "_spec",
    "ToolCallSpec": "_spec",
    "Turn": "_spec",
    "huge_text": "_spec",
    "last_user_text": "_spec",
}


def __getattr__(name: str) -> Any:
    """Load a server name on first use (PEP 562) and keep it as a module attribute."""
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
