"""The cold-start baseline: a bare PySide6 window that quits after its first paint.

Run as a script (``python benchmarks/bare_window.py``), not imported: it must pay exactly what
any PySide6 program pays (interpreter, Qt import, QApplication, one QMainWindow shown and painted).
It prints ``bare: first paint after X ms`` on stderr like ``python -m desktop --smoke-test`` does.
"""

from __future__ import annotations

import sys
import time

_STARTED = time.perf_counter()

from PySide6.QtCore import QEvent, QObject, QTimer  # noqa: E402
from PySide6.QtWidgets import QApplication, QMainWindow  # noqa: E402


class _QuitOnFirstPaint(QObject):
    def __init__(self, window: QMainWindow) -> None:
        super().__init__(window)
        self._window = window
        self._done = False

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802 - Qt API
        if not self._done and event.type() == QEvent.Type.Paint:
            self._done = True
            ms = (time.perf_counter() - _STARTED) * 1000.0
            print(f"bare: first paint after {ms:.1f} ms", file=sys.stderr, flush=True)
            QTimer.singleShot(0, QApplication.quit)
        return False


def main() -> int:
    app = QApplication(sys.argv[:1])
    window = QMainWindow()
    window.setWindowTitle("bare")
    window.resize(1200, 800)
    window.installEventFilter(_QuitOnFirstPaint(window))
    QTimer.singleShot(30_000, QApplication.quit)  # watchdog
    window.show()
    return app.exec()


if __name__ == "__main__":
    raise SystemExit(main())
