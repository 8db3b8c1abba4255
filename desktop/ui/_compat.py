"""Guards against defects of the Qt binding that would otherwise crash the interpreter.

PySide6 6.12.0 on CPython 3.11 drops one reference too many on every Python slot call: to ``None``
(the slot's return value) for many built-in signals and to ``True`` (the result of ``Signal.emit``)
for custom signals. After enough signals (a streaming reply emits thousands) the interpreter
"deallocates" a singleton and aborts (``Fatal Python error: none_dealloc``/``bool_dealloc``), at the
latest at exit. CPython 3.12+ makes these singletons immortal, which hides the defect; 6.11.3 does
not have it.

:func:`guard_singleton_refcounts` detects the defect with a tiny probe (a few emissions, no
QApplication needed) and, only when it is present, gives ``None``, ``True`` and ``False`` the same
kind of huge reference count CPython 3.12 uses for immortal objects, so they can never reach zero.
"""

from __future__ import annotations

import logging
import sys

log = logging.getLogger(__name__)

__all__ = ["guard_singleton_refcounts", "binding_drops_references"]

_IMMORTAL_BOOST = 1 << 40
_applied = False


def binding_drops_references(rounds: int = 8) -> bool:
    """True when emitting a signal to a Python slot loses references to ``None`` or ``True``."""
    from PySide6.QtCore import QObject, Signal

    class _Probe(QObject):
        ping = Signal()

    def _slot() -> None:
        return None

    probe = _Probe()
    probe.ping.connect(_slot)
    probe.ping.emit()  # warm-up: first-call caches
    none_before, true_before = sys.getrefcount(None), sys.getrefcount(True)
    for _ in range(rounds):
        probe.ping.emit()
    lost = (none_before - sys.getrefcount(None)) + (true_before - sys.getrefcount(True))
    probe.ping.disconnect(_slot)
    return lost >= rounds


def guard_singleton_refcounts() -> bool:
    """Protect ``None``/``True``/``False`` when the binding is affected; returns whether it acted."""
    global _applied
    if _applied:
        return True
    if sys.version_info >= (3, 12) or sys.implementation.name != "cpython":
        return False  # immortal singletons: nothing can happen
    try:
        affected = binding_drops_references()
    except Exception:  # the probe must never stop the app
        log.debug("reference probe failed", exc_info=True)
        return False
    if not affected:
        return False
    import ctypes

    for obj in (None, True, False):
        # ob_refcnt is the first field of every object in a release build of CPython 3.11.
        count = ctypes.c_ssize_t.from_address(id(obj))
        if count.value <= 0:  # pragma: no cover - not the layout we expect: leave it alone
            return False
        count.value += _IMMORTAL_BOOST
    _applied = True
    import PySide6

    log.warning(
        "PySide6 %s loses references on signal delivery (a known defect on Python %d.%d); "
        "None/True/False are protected. Use PySide6 6.11 or Python 3.12+ to avoid the workaround.",
        PySide6.__version__, *sys.version_info[:2],
    )
    return True
