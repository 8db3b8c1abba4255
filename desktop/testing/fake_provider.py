"""The loopback fake provider; it lives in ``desktop.demo`` (re-exported here for the tests).

Example::

    with FakeProvider() as fp:
        fp.script(Turn(text="Hello!", usage={"input": 10, "output": 3, "cache_read": 5}))
        httpx.post(fp.openai_base_url + "/chat/completions", json={..., "stream": True})
"""

from desktop.demo._server import DEFAULT_MODELS, FakeProvider, LoopbackProvider
from desktop.demo._spec import Responder, last_user_text

__all__ = ["FakeProvider", "LoopbackProvider", "Responder", "last_user_text", "DEFAULT_MODELS"]
