"""Only the messages near the viewport are built: placeholders for the others (issue 11).

A transcript holds one *slot* per message widget, oldest first. A slot shows the message's view or,
once the view is far outside the viewport (``RELEASE_SCREENS`` viewport heights away), a
*placeholder*: an empty widget of the view's height, so nothing moves and the scroll bar does not
jump. The released view leaves the layout, hidden, and drops its body's segments with their
laid-out documents (``MessageView.release_body``); what they showed (the rendered HTML) is kept,
so showing it again costs the documents' layout only, no Markdown rendering and no new widgets.

``MessageWindow.run`` keeps the window right, a time budget (``WINDOW_BUDGET``) per pass: it builds
again the released messages that come within ``BUILD_SCREENS`` of the viewport (those in the
viewport first, whatever the budget, then outwards, in the direction of scrolling first), releases
the far ones, and builds older messages ahead of need while the viewport is within
``PREFETCH_SCREENS`` of the top, so scrolling up rarely reaches an unbuilt top (an older answer's
view is made segment by segment, the pass's budget at a time, and placed once complete: a long
answer never costs one step more than a budget plus one segment). Once the user has
scrolled away from the bottom, a pass runs after every scroll step (queued, so the step's own
events come first) and again, ``CONTINUE_MS`` later (at once at the very top, where no scroll step
would ask), while work is left: idle time builds ahead too.

Whatever a pass builds or releases, the content under the user's eye stays in place: the slot at
the top of the viewport is the anchor, and the scroll position is moved by however much the
content above it grew or shrank. The slots, the release rule and the cost model are in ``slots.py``.
"""

from __future__ import annotations

import bisect
import logging
import time
from collections.abc import Callable, Collection
from dataclasses import dataclass

from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QScrollArea, QWidget

from desktop.core.chat.types import ChatMessage
from desktop.ui.frames import settle
from desktop.ui.transcript.answer import AssistantMessageView, RenderedBody
from desktop.ui.transcript.reaper import dispose
from desktop.ui.transcript.slots import CostModel, Slot, unfilled
from desktop.ui.transcript.views import MessageView

log = logging.getLogger(__name__)

__all__ = [
    "WindowHooks",
    "MessageWindow",
    "RELEASE_SCREENS",
    "BUILD_SCREENS",
    "PREFETCH_SCREENS",
    "WINDOW_BUDGET",
    "CONTINUE_MS",
]

RELEASE_SCREENS = 3.0
"""A view farther than this many viewport heights from the viewport is released (placeholder)."""
BUILD_SCREENS = 2.0
"""A released message closer than this many viewport heights to the viewport is built again."""
PREFETCH_SCREENS = 2.0
"""Older messages are built ahead of need while the viewport is this close to the top."""
WINDOW_BUDGET = 0.006
"""Seconds one pass may spend building (the messages in the viewport are built whatever it costs)."""
CONTINUE_MS = 4
"""Delay of the next pass while work is left (the event loop runs in between)."""

PLACEHOLDER_NAME = "messagePlaceholder"


@dataclass
class WindowHooks:
    """What the window needs from its transcript.

    Attributes:
        releasable: whether a view may be released now (not streaming, no open editor, ...).
        older: the next older message not built yet (None: all are).
        render: renders a message's body ahead of building it (None: nothing to render).
        make_older: makes the view of the next older message (given), not placed yet, with its
            rendered body if any, the body filled until the deadline (``time.perf_counter()``);
            None when the message has no view of its own.
        place_older: the next older message is built: places its view (if any) at the top (the
            transcript adds its slot).
        older_built: a pass built older messages (the transcript updates what it says about them).
        following: True while the transcript follows the bottom (then nothing is anchored).
    """

    releasable: Callable[[MessageView], bool]
    older: Callable[[], ChatMessage | None]
    render: Callable[[ChatMessage], RenderedBody | None]
    make_older: Callable[[ChatMessage, RenderedBody | None, float], MessageView | None]
    place_older: Callable[[MessageView | None], None]
    older_built: Callable[[], None]
    following: Callable[[], bool]


class MessageWindow:
    """The slots of a transcript and the pass that builds and releases their views.

    Attributes:
        slots: one per message widget, oldest first.
        released: views released so far; rebuilt: views built again (counters).
    """

    def __init__(self, area: QScrollArea, content: QWidget, hooks: WindowHooks) -> None:
        self.slots: list[Slot] = []
        self.released = 0
        self.rebuilt = 0
        self._area = area
        self._content = content
        self._hooks = hooks
        self._built: dict[int, Slot] = {}  # id(slot) -> slot, for the slots showing their view
        self._ahead: dict[str, RenderedBody | None] = {}  # older messages rendered ahead of building
        self._making: tuple[ChatMessage, MessageView | None] | None = None  # made, not placed yet
        self.costs = CostModel()
        self._last_top = 0
        self._restoring = False
        self._timer = QTimer(area)
        self._timer.setSingleShot(True)
        self._timer.timeout.connect(self.run)

    # -- the slots

    def append(self, view: MessageView) -> Slot:
        """A slot for a view placed under the others."""
        slot = Slot(view)
        self.slots.append(slot)
        self._built[id(slot)] = slot
        return slot

    def prepend(self, view: MessageView) -> Slot:
        """A slot for a view placed above the others."""
        slot = Slot(view)
        self.slots.insert(0, slot)
        self._built[id(slot)] = slot
        return slot

    def views(self) -> list[MessageView]:
        """The built views, oldest first."""
        return [s.view for s in self.slots if s.holder is None]

    def widgets(self) -> list[QWidget]:
        """Every widget of the slots: views, placeholders in the layout and spare ones."""
        return [w for s in self.slots for w in (s.view, s.holder, s.spare) if w is not None]

    def find(self, message_id: str) -> Slot | None:
        """The slot of a message (newest first: recent messages are asked for most)."""
        for slot in reversed(self.slots):
            if slot.message_id == message_id:
                return slot
        return None

    def drop(self, message_ids: Collection[str]) -> list[str]:
        """Delete the widgets of these messages and forget their slots (the messages left the
        conversation); returns the ids of the slots dropped."""
        gone = [s for s in self.slots if s.message_id in message_ids]
        for slot in gone:
            for widget in (slot.view, slot.holder, slot.spare):
                if widget is not None:  # hidden at once (out of the layout's sums), deleted in slices
                    dispose(widget, widget.take_parts() if isinstance(widget, MessageView) else ())
            self._built.pop(id(slot), None)
            self._ahead.pop(slot.message_id, None)
        dropped = {id(s) for s in gone}
        self.slots = [s for s in self.slots if id(s) not in dropped]
        return [s.message_id for s in gone]

    def clear(self) -> None:
        """Forget every slot (the transcript deletes their widgets)."""
        self._timer.stop()
        self.slots.clear()
        self._ahead.clear()
        self._built.clear()
        self._drop_making()

    def request(self, delay_ms: int = 0) -> None:
        """Run a pass after ``delay_ms`` (an earlier pending one is kept)."""
        if self._restoring:
            return
        if not self._timer.isActive() or self._timer.remainingTime() > delay_ms:
            self._timer.start(delay_ms)

    # -- positions

    def _y(self, widget: QWidget) -> int:
        parent = widget.parentWidget()
        if parent is None or parent is self._content:
            return widget.y()
        return parent.y() + widget.y()

    def _bottom(self, slot: Slot) -> int:
        widget = slot.widget()
        return self._y(widget) + widget.height()

    def _index_at(self, y: int) -> int:
        """Index of the first slot whose bottom is below ``y``."""
        return bisect.bisect_right(self.slots, y, key=self._bottom)

    # -- building and releasing

    def release(self, slot: Slot) -> bool:
        """Replace a slot's view by a placeholder of its height; False when it may not be released."""
        view = slot.view
        parent = view.parentWidget()
        layout = parent.layout() if parent is not None else None
        if slot.holder is not None or layout is None or not self._hooks.releasable(view):
            return False
        holder = slot.spare  # built and polished once per slot, not once per release
        if holder is None or holder.parentWidget() is not parent:
            holder = QWidget(parent)
            holder.setObjectName(PLACEHOLDER_NAME)
        slot.spare = None
        holder.setFixedHeight(view.height())
        layout.replaceWidget(view, holder)
        holder.show()
        view.hide()
        view.release_body()
        slot.holder = holder
        self._built.pop(id(slot), None)
        self.released += 1
        return True

    def build(self, slot: Slot) -> MessageView:
        """Show a released slot's view again, in its placeholder's place."""
        holder = slot.holder
        view = slot.view
        if holder is None:
            return view
        parent = holder.parentWidget()
        layout = parent.layout() if parent is not None else None
        if layout is None:
            return view
        start = time.perf_counter()
        view.restore_body()
        layout.replaceWidget(holder, view)
        view.show()
        holder.hide()
        slot.spare = holder
        slot.holder = None
        self._built[id(slot)] = slot
        self.rebuilt += 1
        self.costs.record("build", view.body_chars(), time.perf_counter() - start)
        return view

    def show_visible(self) -> None:
        """Build the released slots inside the viewport now (a scroll step calls it before Qt paints
        the step): the user never sees a placeholder's empty strip. The rest waits for ``run``."""
        area = self._area
        if self._restoring or len(self._built) == len(self.slots) or not area.isVisible():
            return  # nothing released (streaming at the bottom of a short chat: the usual case)
        top = area.verticalScrollBar().value()
        bottom = top + max(1, area.viewport().height())
        first = self._index_at(top)
        todo = [s for s in self.slots[first : self._index_at(bottom) + 1] if s.holder is not None]
        if not todo:
            return
        anchor = None if self._hooks.following() else self._anchor(top)
        for slot in todo:
            self.build(slot)
        settle()
        if anchor is not None:
            self._restore(anchor)

    def run(self) -> None:
        """One pass: build what comes near the viewport, release what is far, build older ahead."""
        self._timer.stop()
        area = self._area
        if not self.slots or not area.isVisible():
            return
        settle()  # positions are only right once the layouts have run
        bar = area.verticalScrollBar()
        height = max(1, area.viewport().height())
        top = bar.value()
        bottom = top + height
        upwards = top < self._last_top
        self._last_top = top
        anchor = None if self._hooks.following() else self._anchor(top)
        deadline = time.perf_counter() + WINDOW_BUDGET
        changed, more = self._build_near(top, bottom, height, upwards, deadline)
        changed = self._release_far(top, bottom, height) or changed
        if top < PREFETCH_SCREENS * height and self._hooks.older() is not None:
            changed = self._build_older(deadline, fresh=not changed) or changed
            more = more or self._hooks.older() is not None
        if changed:
            settle()
            if anchor is not None:
                self._restore(anchor)
        if more:  # at the very top no scroll step will ask for the next pass: it follows at once
            self.request(0 if bar.value() == 0 else CONTINUE_MS)

    def _build_near(
        self, top: int, bottom: int, height: int, upwards: bool, deadline: float
    ) -> tuple[bool, bool]:
        """Build the released slots near the viewport; (anything built, anything left)."""
        slots = self.slots
        reach = int(BUILD_SCREENS * height)
        first = self._index_at(top - reach)
        last = min(len(slots), self._index_at(bottom + reach) + 1)
        shown_from = self._index_at(top)
        shown_to = min(len(slots), self._index_at(bottom) + 1)
        below = list(range(shown_to, last))
        above = list(range(shown_from - 1, first - 1, -1))
        order = list(range(shown_from, shown_to)) + (above + below if upwards else below + above)
        changed = False
        for n, index in enumerate(order):
            slot = slots[index]
            if slot.holder is None:
                continue
            in_view = n < shown_to - shown_from
            chars = slot.view.body_chars()
            if not in_view and time.perf_counter() + self.costs.estimate("build", chars) > deadline:
                return changed, True
            self.build(slot)
            changed = True
        return changed, False

    def _build_older(self, deadline: float, *, fresh: bool) -> bool:
        """Render or build older messages while the budget lasts; True when a slot was added.

        A message's body is rendered in one step and its view made in others: the view is filled
        segment by segment until the deadline and placed (polished, laid out) once complete, at
        the earliest in the next pass when the placing would not fit before the deadline. Each
        step (a render, a slice of the view, the placing, a whole user message) is only started
        when its predicted cost (``CostModel``) fits what is left of the budget (the first step
        of a pass whatever it costs, or a huge message would never be rendered).
        """
        hooks = self._hooks
        costs = self.costs
        built = False
        while (msg := hooks.older()) is not None:
            making = self._making
            if making is not None and making[0] is not msg:
                self._drop_making()  # the transcript built that message itself (``finish_making``)
                making = None
            sliced = making is not None or msg.id in self._ahead  # an answer's view, a slice at a time
            kind = "build" if sliced or msg.role != "assistant" else "render"
            now = time.perf_counter()
            if sliced:
                cost = costs.step("slice" if making is None or unfilled(making[1]) else "place")
            else:
                cost = costs.estimate(kind, len(msg.content))
            if not fresh and now + cost > deadline:
                break
            fresh = False
            if kind == "render":
                self._ahead[msg.id] = hooks.render(msg)
                costs.record(kind, len(msg.content), time.perf_counter() - now)
                continue
            if making is None:
                view = hooks.make_older(msg, self._ahead.pop(msg.id, None), deadline)
                worked = True
            else:
                view = making[1]
                worked = unfilled(view)
                if worked and isinstance(view, AssistantMessageView):
                    view.sync(msg, live=False, deadline=deadline)
            if sliced and worked:
                costs.record_step("slice", time.perf_counter() - now)
            placing = time.perf_counter()
            if unfilled(view) or (worked and view is not None and placing + costs.step("place") > deadline):
                self._making = (msg, view)  # the rest, or the placing, in the next pass
                break
            self._making = None
            hooks.place_older(view)
            built = True
            if sliced and view is not None:
                costs.record_step("place", time.perf_counter() - placing)
            if making is None:  # made and placed in one go: a measure of what building costs
                costs.record(kind, len(msg.content), time.perf_counter() - now)
        if built:
            hooks.older_built()
        return built

    def finish_making(self) -> None:
        """Complete and place the older view being made (the transcript builds older messages
        itself next: ``Transcript.load_older``)."""
        making, self._making = self._making, None
        if making is None or self._hooks.older() is not making[0]:
            self._drop_view(making)
            return
        msg, view = making
        if isinstance(view, AssistantMessageView) and view.body.pending:
            view.sync(msg, live=False)
        self._hooks.place_older(view)
        self._hooks.older_built()

    def _drop_making(self) -> None:
        making, self._making = self._making, None
        self._drop_view(making)

    @staticmethod
    def _drop_view(making: tuple[ChatMessage, MessageView | None] | None) -> None:
        if making is not None and making[1] is not None:
            making[1].hide()
            making[1].deleteLater()

    def _release_far(self, top: int, bottom: int, height: int) -> bool:
        reach = int(RELEASE_SCREENS * height)
        far = [
            slot for slot in self._built.values()
            if self._bottom(slot) < top - reach or self._y(slot.widget()) > bottom + reach
        ]
        released = False
        for slot in far:
            released = self.release(slot) or released
        return released

    # -- keeping the content under the user's eye in place

    def _anchor(self, top: int) -> tuple[Slot, int] | None:
        index = self._index_at(top)
        if index >= len(self.slots):
            return None
        slot = self.slots[index]
        return slot, self._y(slot.widget()) - top

    def _restore(self, anchor: tuple[Slot, int]) -> None:
        slot, offset = anchor
        if slot not in self.slots:
            return
        bar = self._area.verticalScrollBar()
        value = self._y(slot.widget()) - offset
        if value != bar.value():
            self._restoring = True
            try:
                bar.setValue(value)
            finally:
                self._restoring = False
            self._last_top = bar.value()
