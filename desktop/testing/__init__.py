"""The loopback fake provider: a real HTTP server speaking the OpenAI and Anthropic protocols from scripts.

It powers the tests, the benchmarks and the app's offline ``--demo`` mode.
"""

from desktop.testing._spec import Fault, RecordedRequest, ToolCallSpec, Turn, huge_text
from desktop.testing.demo import DEMO_MODEL, demo_responder, start_demo_provider
from desktop.testing.fake_provider import DEFAULT_MODELS, FakeProvider, Responder, last_user_text

__all__ = [
    "DEMO_MODEL",
    "DEFAULT_MODELS",
    "FakeProvider",
    "Fault",
    "RecordedRequest",
    "Responder",
    "ToolCallSpec",
    "demo_responder",
    "start_demo_provider",
    "Turn",
    "huge_text",
    "last_user_text",
]
