"""Budget: the history cap of a 10,000-message conversation is linear and takes ≤ 50 ms.

Ours is ``split_for_cap`` (each message measured once). The baseline is the straightforward
implementation the seed describes: serialise the whole remaining array, and while it is too big drop
the oldest unit and serialise again. Both must keep exactly the same messages (checked).

The cap is set so that the oldest 1 % of the exchanges must go, the steady state of a growing
conversation (each save trims a little); the naive version's cost grows with the number of drops
times the size, so a bigger trim would only widen the gap (and take minutes to measure).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence

from benchmarks._data import make_messages
from benchmarks._harness import Budget, Row, Settings, timed
from desktop.core.chat.conversation import message_to_dict, split_for_cap
from desktop.core.chat.types import ChatMessage

log = logging.getLogger(__name__)

__all__ = ["run", "naive_cap", "json_size", "cap_for"]

TRIM_FRACTION = 0.01


def json_size(messages: Sequence[ChatMessage]) -> int:
    """UTF-8 bytes of the compact JSON array of ``messages`` (the cap's measure), by serialising."""
    text = json.dumps([message_to_dict(m) for m in messages], ensure_ascii=False, separators=(",", ":"))
    return len(text.encode("utf-8", "surrogatepass"))


def naive_cap(messages: Sequence[ChatMessage], max_bytes: int) -> list[ChatMessage]:
    """The cap done the obvious way: re-serialise after every dropped unit (quadratic).

    Same rules as ``split_for_cap``: non-system messages before the first user message go first, then
    whole exchanges oldest first; leading system messages and the newest exchange always stay.
    """
    msgs = list(messages)
    while json_size(msgs) > max_bytes:
        users = [i for i, m in enumerate(msgs) if m.role == "user"]
        if not users:
            break
        first = users[0]
        preamble = [i for i in range(first) if msgs[i].role != "system"]
        if preamble:
            msgs = [m for i, m in enumerate(msgs) if i not in set(preamble)]
            continue
        if len(users) < 2:
            break
        msgs = msgs[:first] + msgs[users[1]:]
    return msgs


def cap_for(messages: Sequence[ChatMessage], trim: float = TRIM_FRACTION) -> int:
    """A cap that forces dropping about ``trim`` of the conversation."""
    return int(json_size(messages) * (1.0 - trim))


def _ours_ms(messages: list[ChatMessage], max_bytes: int) -> float:
    return timed(lambda: split_for_cap(messages, max_bytes))


def run(settings: Settings) -> list[Row]:
    """The cap of ``cap_messages`` vs the naive cap; the 2× size vs 1× size ratio of ours."""
    n = settings.cap_messages
    messages = make_messages(n)
    max_bytes = cap_for(messages)
    kept, dropped = split_for_cap(messages, max_bytes)
    reference = naive_cap(messages, max_bytes)
    if [m.id for m in kept] != [m.id for m in reference]:
        raise RuntimeError("split_for_cap and the naive cap disagree on what to keep")
    double = make_messages(2 * n)
    double_cap = cap_for(double)

    for _ in range(settings.warmup):
        _ours_ms(messages, max_bytes)
    ours: list[float] = []
    naive: list[float] = []
    ours_double: list[float] = []
    for _ in range(settings.runs):
        ours.append(_ours_ms(messages, max_bytes))
        ours_double.append(_ours_ms(double, double_cap))
        naive.append(timed(lambda: naive_cap(messages, max_bytes)))
    size_mb = json_size(messages) / 1e6
    return [
        Row("cap.10k",
            f"history cap, {n:,} messages ({size_mb:.1f} MB, {len(dropped):,} dropped): split_for_cap",
            "ms", ours, "naive re-serialise per drop", naive, Budget.at_most(50, "ms")),
        Row("cap.linear", f"history cap, {2 * n:,} vs {n:,} messages (linear ⇒ ≈ 2×)", "ms", ours_double,
            f"split_for_cap, {n:,} messages", ours, Budget.ratio(2.5)),
    ]
