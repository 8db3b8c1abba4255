"""The body of an assistant message: its rendered segments, stacked as widgets.

A body is a stack of *segments* (``desktop.ui.markdown.stream`` makes them from the message's text):
rich text (``MarkdownView``: consecutive blocks, code blocks included; each code block gets a Copy
button) and plain text (``TextFlowView``: a long paragraph without inline markup, and the line being
streamed). :class:`MessageBody` places what the pipe returns, changing only the segments that changed.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QSizePolicy, QVBoxLayout, QWidget

from desktop.ui.markdown.segments import Segment
from desktop.ui.markdown.textflow import TextFlowView
from desktop.ui.markdown.theme import MarkdownTheme
from desktop.ui.markdown.view import MarkdownView

__all__ = ["MessageBody"]

_SegmentWidget = MarkdownView | TextFlowView
_KINDS: dict[str, type[_SegmentWidget]] = {"html": MarkdownView, "plain": TextFlowView}


class _Costs:
    """What changing a segment costs, learned as segments are shown (seconds; moving averages).

    A deadline stops an update before a change that would not fit in what is left of it, rather
    than after one that overran it: a new rich-text segment costs ~1 ms to create and its HTML
    ~1-3 ms to lay out, which decided how far a frame's tick ran past its budget.
    """

    def __init__(self) -> None:
        self.per_char = {"html": 0.7e-6, "plain": 0.15e-6}
        self.create = {"html": 0.8e-3, "plain": 0.3e-3}

    def estimate(self, spec: Segment, creating: bool) -> float:
        """The expected cost of showing ``spec`` (in a new widget when ``creating``)."""
        cost = self.per_char[spec.kind] * len(spec.payload)
        return cost + self.create[spec.kind] if creating else cost

    def learn(self, spec: Segment, created: float | None, filled: float) -> None:
        """Fold in one measured change: widget creation (None: none) and filling it."""
        kind = spec.kind
        if created is not None:
            self.create[kind] += 0.2 * (created - self.create[kind])
        if len(spec.payload) >= _LEARN_CHARS:
            self.per_char[kind] += 0.2 * (filled / len(spec.payload) - self.per_char[kind])


_LEARN_CHARS = 200
"""Shorter payloads say more about fixed costs than about the cost per character: not learned from."""
_costs = _Costs()


class _Stack:
    """Segment widgets in one layout, updated in place from segment specs."""

    def __init__(self, owner: MessageBody, layout: QVBoxLayout) -> None:
        self.owner = owner
        self.layout = layout
        self.donor: _Stack | None = None  # where a new widget may be taken from (the tail's stack)
        self.widgets: list[_SegmentWidget] = []
        self.specs: list[tuple[Segment, MarkdownTheme]] = []

    def show(
        self,
        specs: list[Segment],
        theme: MarkdownTheme,
        deadline: float | None = None,
        first_free: bool = True,
    ) -> bool:
        """Show ``specs``; a widget already showing the same spec is left alone.

        Args:
            specs: what to show, top to bottom.
            theme: the theme they were rendered with.
            deadline: ``time.perf_counter()`` by which the changes must be done: a segment is only
                changed when its expected cost (``_Costs``) fits before it; None: all of them.
                With a deadline, new segment widgets are added hidden (``MessageBody.held``): a
                half-done update costs no layout of the message and no paint; they are shown
                together once everything is there.
            first_free: the first change is made even when it does not fit (so every call makes
                progress); False when the caller made progress otherwise in this update.

        Returns:
            True when everything is shown; False when the deadline stopped it (call again: the
            segments already shown are left alone).
        """
        owner = self.owner
        changed = False
        for i, spec in enumerate(specs):
            seg = self.widgets[i] if i < len(self.widgets) else None
            if seg is not None and i < len(self.specs):
                old, old_theme = self.specs[i]
                if (old is spec or old == spec) and old_theme == theme:
                    continue
            want = _KINDS[spec.kind]
            giver = self._giver(seg, want)
            if deadline is not None and (changed or not first_free):
                creating = type(seg) is not want and giver is None
                if time.perf_counter() + _costs.estimate(spec, creating) >= deadline:
                    return False
            changed = True
            began = time.perf_counter()
            created: float | None = None
            if type(seg) is not want:
                if giver is not None:
                    # The tail's widget showed what is now this closed segment: move it over, so a
                    # long paragraph shown as it streamed is not laid out again.
                    new = giver.widgets.pop(0)
                    giver.specs.pop(0)
                    giver.layout.removeWidget(new)
                else:
                    new = want(owner)
                    if owner.isVisible() or owner.testAttribute(Qt.WidgetAttribute.WA_Resized):
                        new.resize(owner.width(), new.height())  # the width it will have: laid out once
                    new.copy_message = owner.copy_message
                    new.setAccessibleName(owner.accessibleName())
                    created = time.perf_counter() - began
                if seg is None:
                    if deadline is not None:  # shown with the rest once all of it is there
                        new.hide()
                        owner.held.append(new)
                    self.widgets.append(new)
                    self.layout.addWidget(new)
                else:
                    self.layout.replaceWidget(seg, new)
                    seg.hide()
                    seg.deleteLater()
                    self.widgets[i] = new
                seg = new
            # What a fill costs is learned from new widgets and from segments whose text changed (a
            # widget taken over from the tail, or a spec changed only in its gap, is filled for ~0).
            grew = created is None and i < len(self.specs) and self.specs[i][0].payload != spec.payload
            filling = time.perf_counter()
            if isinstance(seg, MarkdownView):
                seg.set_edge_to_edge(spec.joined or bool(spec.copies))  # a long code block's pieces
                seg.set_html(spec.payload, theme, spec.tables, spec.langs, spec.copies)
            else:
                seg.set_color(theme.text)
                seg.set_text(spec.payload)
            if created is not None or grew:
                _costs.learn(spec, created, time.perf_counter() - filling)
            seg.set_top_gap(spec.gap)
            if i < len(self.specs):
                self.specs[i] = (spec, theme)
            else:
                self.specs.append((spec, theme))
        for seg in self.widgets[len(specs) :]:
            self.layout.removeWidget(seg)
            seg.hide()
            seg.deleteLater()
        del self.widgets[len(specs) :]
        del self.specs[len(specs) :]
        return True

    def _giver(self, seg: _SegmentWidget | None, want: type[_SegmentWidget]) -> _Stack | None:
        """The stack whose first widget a new closed segment takes over (the tail's, when it showed
        the segment's text in a widget of the kind it needs), else None."""
        donor = self.donor
        if seg is None and donor is not None and donor.widgets and type(donor.widgets[0]) is want:
            return donor
        return None

    def take(self) -> list[_SegmentWidget]:
        """Take every widget out of the stack (hidden, out of the layout) and hand them over."""
        taken, self.widgets = self.widgets, []
        for seg in taken:
            self.layout.removeWidget(seg)
            seg.hide()
        self.specs.clear()
        return taken

    def release(self) -> None:
        """Empty every widget's text (and layout), keeping the widgets for ``show`` to fill again."""
        for seg in self.widgets:
            seg.release()
        self.specs.clear()


class MessageBody(QWidget):
    """The body of an assistant message: rich-text and plain-text segments, stacked.

    Its object name is ``messageBodyStack``; each rich-text segment is a ``MarkdownView``
    (``messageBody``, with a ``copyCodeButton`` on each code block), and a long paragraph without
    markup, and the line being streamed, a ``TextFlowView``. The segments of a streamed answer's
    open tail are kept apart from the closed ones, so neither disturbs the other's widgets.

    Attributes:
        copy_message: handed to each segment for its "Copy message" context-menu entry.
        pending: True when the last ``show_segments`` stopped at its deadline (call it again).
    """

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("messageBodyStack")
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.setSpacing(0)
        stacks = []
        for _ in range(2):
            box = QVBoxLayout()
            box.setContentsMargins(0, 0, 0, 0)
            box.setSpacing(0)
            lay.addLayout(box)
            stacks.append(_Stack(self, box))
        self._closed, self._tail = stacks
        self._closed.donor = self._tail
        self.copy_message: Callable[[], None] | None = None
        self.pending = False
        self.held: list[_SegmentWidget] = []  # new segments kept hidden until an update is complete

    @property
    def segments(self) -> list[_SegmentWidget]:
        """The segment widgets shown, top to bottom."""
        return [*self._closed.widgets, *self._tail.widgets]

    def setAccessibleName(self, name: str) -> None:  # noqa: N802 - Qt naming
        """Name the body and each of its segments (screen readers)."""
        super().setAccessibleName(name)
        for seg in self.segments:
            seg.setAccessibleName(name)

    def show_segments(
        self,
        specs: list[Segment],
        theme: MarkdownTheme,
        tail: list[Segment] | None = None,
        *,
        deadline: float | None = None,
        first_free: bool = True,
    ) -> bool:
        """Show ``specs``, then ``tail`` (a streamed answer's open part); unchanged segments stay.

        Args:
            specs: the closed segments.
            theme: the theme they were rendered with.
            tail: the open tail's segments.
            deadline: ``time.perf_counter()`` by which the closed segments' changes must be done
                (a change is only started when its expected cost fits); the tail follows only
                once the closed segments are all shown (it continues their text). None:
                everything now.
            first_free: the first change is made even when it does not fit (progress); False
                when the caller already made progress in this update (parsed or rendered).

        Returns:
            True when everything is shown (``pending`` is the opposite).
        """
        done = self._closed.show(specs, theme, deadline, first_free)
        if done:
            self._tail.show(tail or [], theme)
            held, self.held = self.held, []
            for seg in held:
                if seg in self._closed.widgets or seg in self._tail.widgets:
                    seg.show()
        self.pending = not done
        return done

    def take_segments(self) -> list[QWidget]:
        """Take every segment widget out of the body (hidden, out of its layout) for the caller to
        delete: the body is then empty (the message left the transcript; ``reaper.dispose``)."""
        taken: list[QWidget] = [*self._closed.take(), *self._tail.take()]
        taken += [seg for seg in self.held if seg not in taken]
        self.held.clear()
        self.pending = False
        return taken

    def release(self) -> None:
        """Drop the segments' texts and laid-out documents, keeping their widgets (the view is
        hidden, far outside the viewport): ``show_segments`` of the same segments fills them again
        without building, polishing or deleting a widget."""
        self._closed.release()
        self._tail.release()
        self.held.clear()
        self.pending = False

    def clear(self) -> None:
        """Show nothing."""
        self.show_segments([], MarkdownTheme())

    def toPlainText(self) -> str:  # noqa: N802 - Qt naming
        """The text of the segments, one segment per line (a long code block's pieces as one)."""
        out: list[str] = []
        for stack in (self._closed, self._tail):
            for seg, (spec, _theme) in zip(stack.widgets, stack.specs, strict=False):
                text = seg.toPlainText()
                if spec.joined and out:
                    # A table's document has an empty line before and after it: drop the two
                    # between pieces, so the code reads as it is.
                    prev = out[-1]
                    out[-1] = (prev[:-1] if prev.endswith("\n") else prev) + "\n" + text.removeprefix("\n")
                    continue
                out.append(text)
        return "\n".join(out)
