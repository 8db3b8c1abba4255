"""Callbacks that live no longer than the widget they act on.

A Qt connection made with ``signal.connect(lambda: widget.refresh())`` (or a ``functools.partial``,
or ``QTimer.singleShot(ms, widget.method)``) is not tied to ``widget``: when a long-lived sender (the
MCP hub's signals, the runtime bridge, the application, a timer) fires after the widget was deleted,
the callback runs on a dead C++ object and raises "Internal C++ object … already deleted", which the
error reporter turns into a banner. Only ``signal.connect(receiver.method)`` with ``receiver`` a
``QObject`` is disconnected by PySide when the receiver goes.

This module gives the other forms a receiver:

* :func:`connect_for` connects ``slot`` through a small relay object owned by the receiver, so the
  connection ends when the receiver is destroyed;
* :func:`call_later` is ``QTimer.singleShot(ms, receiver, slot)``: dropped when the receiver goes;
* :func:`run_in_thread` runs a blocking job on a worker thread and hands its outcome to ``done`` on
  the GUI thread, only while the receiver exists (nothing Qt is touched or released off the GUI thread).

``tests/ui/test_signal_lifetimes.py`` scans ``desktop/ui`` for the unsafe forms.
"""

from __future__ import annotations

import functools
import logging
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Generic, TypeVar

import shiboken6
from PySide6.QtCore import QCoreApplication, QObject, QTimer

if TYPE_CHECKING:
    from PySide6.QtCore import SignalInstance

log = logging.getLogger(__name__)

__all__ = ["Outcome", "call_later", "connect_for", "run_in_thread"]

T = TypeVar("T")


class _Relay(QObject):
    """Calls ``slot`` on behalf of its parent, the receiver; destroyed with it (PySide then drops the
    connections made to :meth:`fire`, a method of a ``QObject``)."""

    def __init__(self, receiver: QObject, slot: Callable[..., object], *, once: bool = False) -> None:
        super().__init__(receiver)
        self._slot = slot
        self._once = once

    def fire(self, *args: object) -> None:
        self._slot(*args)
        if self._once:
            self._slot = _nothing
            self.deleteLater()


def _nothing(*_args: object) -> None:
    return None


def _deliver(relay: _Relay, outcome: Outcome[T]) -> None:
    """On the GUI thread: hand ``outcome`` to the relay, unless its receiver was deleted meanwhile."""
    if shiboken6.isValid(relay):
        relay.fire(outcome)
    else:
        log.debug("a worker finished after its receiver was deleted")


def connect_for(receiver: QObject, signal: SignalInstance, slot: Callable[..., object]) -> None:
    """Call ``slot(*args)`` on every emission of ``signal`` for as long as ``receiver`` exists.

    Use it whenever the sender may outlive the receiver and ``slot`` is not a method of the receiver
    itself (a lambda, a ``functools.partial``, a method of a plain Python object).

    Args:
        receiver: The object ``slot`` acts on; the connection ends when it is destroyed.
        signal: The signal (of any object, e.g. ``hub.signals.status_changed``).
        slot: Called with every argument of the signal.
    """
    signal.connect(_Relay(receiver, slot).fire)


def call_later(receiver: QObject, ms: int, slot: Callable[[], object]) -> None:
    """Call ``slot()`` on the GUI thread after ``ms`` milliseconds, unless ``receiver`` is gone by then."""
    QTimer.singleShot(ms, receiver, slot)


class Outcome(Generic[T]):
    """What a job run by :func:`run_in_thread` gave: its value, or the exception it raised.

    Attributes:
        value: The job's return value (None when it raised).
        error: The exception it raised, or None.
    """

    __slots__ = ("value", "error")

    def __init__(self, value: T | None = None, error: BaseException | None = None) -> None:
        self.value = value
        self.error = error


def run_in_thread(receiver: QObject, job: Callable[[], T], done: Callable[[Outcome[T]], object], *,
                  name: str = "chatnodes-worker") -> threading.Thread:
    """Run ``job()`` on a daemon thread; call ``done(outcome)`` on the GUI thread if ``receiver`` still
    exists when it ends (else nothing happens).

    The worker holds only a relay object the receiver owns (never the receiver, nor ``done``), so no Qt
    object is released on the worker thread.

    Args:
        receiver: The object ``done`` acts on (created on the GUI thread).
        job: What to run; must not touch Qt objects.
        done: Gets the :class:`Outcome` (value or exception) on the GUI thread.
        name: The thread's name.

    Returns:
        The started thread.
    """
    relay = _Relay(receiver, done, once=True)

    def work() -> None:
        try:
            outcome: Outcome[T] = Outcome(value=job())
        except BaseException as exc:  # noqa: BLE001 - handed to ``done``, never raised on the worker
            outcome = Outcome(error=exc)
        app = QCoreApplication.instance()
        if app is not None:  # posted to the application (it outlives the relay); checked on the GUI thread
            QTimer.singleShot(0, app, functools.partial(_deliver, relay, outcome))

    thread = threading.Thread(target=work, name=name, daemon=True)
    thread.start()
    return thread
