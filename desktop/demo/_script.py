"""The scripted conversation behind the app's offline ``--demo`` mode.

``start_demo_provider()`` starts a ``LoopbackProvider`` on loopback whose responder plays a short,
stateless script on the Anthropic protocol (model ``claude-sonnet-4-5``):

1. The first user message gets thinking, a streamed Markdown answer (heading, list, code block,
   table), a ``write_file`` call for ``notes/hello.md`` (which needs approval) and usage with cache
   tokens, so the token and cost chips show real numbers.
2. The tool result gets a short confirmation (or an acknowledgement when the call was denied).
3. Any later message gets a friendly Markdown reply that quotes it.

Everything drips at ``tokens_per_second`` so streaming is visible. The responder looks only at the
request it answers, so several nodes can run the demo at once.
"""

from __future__ import annotations

import logging
from typing import Any

from desktop.demo._clock import Clock
from desktop.demo._constants import (
    DEMO_FIRST_PROMPT,
    DEMO_MODEL,
    DEMO_MODELS,
    DEMO_NOTE_CONTENT,
    DEMO_NOTE_PATH,
    DEMO_PROVIDER_ID,
)
from desktop.demo._server import LoopbackProvider
from desktop.demo._spec import RecordedRequest, Responder, ToolCallSpec, Turn, last_user_text

log = logging.getLogger(__name__)

__all__ = [
    "DEMO_FIRST_PROMPT",
    "DEMO_MODEL",
    "DEMO_MODELS",
    "DEMO_PROVIDER_ID",
    "DEMO_NOTE_PATH",
    "DEMO_NOTE_CONTENT",
    "demo_responder",
    "start_demo_provider",
]

_THINKING = (
    "The user is trying the offline demo. I should show what the client renders: a heading, a list, "
    "a code block and a table. Then I can offer to save a short note in the project with write_file, "
    "which will ask for approval first."
)

_SHOWCASE = """# Welcome to Chat Nodes

This reply is streamed by the **built-in demo provider** on loopback, so no API key is needed.
Here is what a chat node can show:

- *Streaming* Markdown, rendered as it arrives
- Collapsible **thinking** (open the block above this answer)
- Tool calls with inline **approval** cards
- Token and cost accounting, cache tokens included

```python
def greet(name: str) -> str:
    return f"Hello, {name}!"

print(greet("Chat Nodes"))
```

| Feature | Where to look |
|---|---|
| Tokens | the chip in the node header |
| Cost | the `$` chip, priced per model |
| History | saved in the project folder |

Next I'd like to save a short note in your project as `notes/hello.md`.
Approve the card below to let me write it.
"""

_SHOWCASE_USAGE = {"input": 1250, "output": 480, "cache_read": 3072, "cache_write": 512, "reasoning": 64}


def _last_user_blocks(request: RecordedRequest) -> list[dict[str, Any]]:
    body = request.json if isinstance(request.json, dict) else {}
    messages = body.get("messages")
    if not isinstance(messages, list):
        return []
    for message in reversed(messages):
        if isinstance(message, dict) and message.get("role") == "user":
            content = message.get("content")
            if isinstance(content, list):
                return [b for b in content if isinstance(b, dict)]
            return [{"type": "text", "text": content if isinstance(content, str) else ""}]
    return []


def _user_text_turns(request: RecordedRequest) -> int:
    """How many user messages carry the user's own text (not only tool results)."""
    body = request.json if isinstance(request.json, dict) else {}
    count = 0
    for message in body.get("messages") or []:
        if not isinstance(message, dict) or message.get("role") != "user":
            continue
        content = message.get("content")
        if isinstance(content, str) or (
            isinstance(content, list)
            and any(isinstance(b, dict) and b.get("type") == "text" for b in content)
        ):
            count += 1
    return count


def _offers_tool(request: RecordedRequest, name: str) -> bool:
    body = request.json if isinstance(request.json, dict) else {}
    tools = body.get("tools") or []
    return any(
        isinstance(t, dict) and (t.get("name") == name or (t.get("function") or {}).get("name") == name)
        for t in tools
    )


def _quote(text: str) -> str:
    lines = text.strip().splitlines() or [""]
    return "\n".join("> " + line if line else ">" for line in lines)


def demo_responder(tokens_per_second: float | None = 60.0) -> Responder:
    """Build the demo's responder (``RecordedRequest -> Turn``).

    Args:
        tokens_per_second: Drip rate for text and thinking deltas; None streams at full speed
            (tests use that).
    """

    def respond(request: RecordedRequest) -> Turn:
        blocks = _last_user_blocks(request)
        results = [b for b in blocks if b.get("type") == "tool_result"]
        if results:
            result_text = last_user_text(request)
            if any(b.get("is_error") for b in results) or result_text.lower().startswith("denied"):
                text = (
                    "No problem, I left your project untouched. You can ask me anything else; "
                    "every reply here is streamed by the demo provider."
                )
            else:
                text = (
                    f"Done! I saved the note as `{DEMO_NOTE_PATH}` in your project folder. "
                    "Open it from your file manager, or send another message to keep chatting."
                )
            return Turn(
                text=text,
                chunk_chars=4,
                tokens_per_second=tokens_per_second,
                usage={"input": 180, "output": 40, "cache_read": 4096, "cache_write": 0},
            )
        if _user_text_turns(request) <= 1:
            calls = []
            if _offers_tool(request, "write_file"):
                calls = [ToolCallSpec("write_file", {"path": DEMO_NOTE_PATH, "content": DEMO_NOTE_CONTENT})]
            return Turn(
                text=_SHOWCASE,
                thinking=_THINKING,
                tool_calls=calls,
                chunk_chars=4,
                tokens_per_second=tokens_per_second,
                usage=dict(_SHOWCASE_USAGE),
            )
        said = last_user_text(request)
        text = (
            "## You said\n\n"
            f"{_quote(said)}\n\n"
            "Thanks for trying the **Chat Nodes** demo! I'm a scripted model running on loopback, "
            "so I can't really answer, but here is what I noticed:\n\n"
            f"- your message has **{len(said.split())}** words and **{len(said)}** characters\n"
            "- replies stream with Markdown, just like a real provider\n\n"
            "Add a real provider under *Settings → Providers* to chat with a live model."
        )
        words = max(1, len(said) // 4)
        return Turn(
            text=text,
            chunk_chars=4,
            tokens_per_second=tokens_per_second,
            usage={"input": 60 + words, "output": len(text) // 4, "cache_read": 4608, "cache_write": 0},
        )

    return respond


def start_demo_provider(
    *, tokens_per_second: float | None = 60.0, clock: Clock | None = None
) -> LoopbackProvider:
    """Start the demo's fake Anthropic provider on loopback and return it (call ``stop()`` at exit).

    Args:
        tokens_per_second: Drip rate of the answers (None: full speed).
        clock: What the drip waits on (default: the real clock; see ``LoopbackProvider``).
    """
    provider = LoopbackProvider(responder=demo_responder(tokens_per_second), models=list(DEMO_MODELS),
                                clock=clock)
    provider.start()
    log.info("demo provider listening on %s", provider.base_url)
    return provider
