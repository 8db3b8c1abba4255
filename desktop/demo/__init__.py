"""The offline demo provider: a loopback HTTP server speaking the OpenAI and Anthropic protocols from scripts.

It powers the app's ``--demo`` mode (``start_demo_provider``, the ``DEMO_*`` constants) and, through
``desktop.testing``, the tests and the benchmarks (``LoopbackProvider`` scripted with ``Turn`` and
``Fault``). It needs no key and no network, and imports nothing from ``desktop.app``, ``desktop.ui``
or ``desktop.testing``.

Modules: ``_server`` (the server thread, scripting and routing), ``_wire`` (HTTP/1.1 parsing and
writing), ``_respond`` (chat answers, drip pacing, faults), ``_render`` (the bytes of both protocols),
``_spec`` (turns, faults, recorded requests) and ``_script`` (the demo conversation).
"""

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
