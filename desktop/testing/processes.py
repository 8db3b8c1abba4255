"""Process checks for tests that start servers: is a PID still alive, wait until it is gone."""

from __future__ import annotations

import os
import time
from pathlib import Path

__all__ = ["pid_alive", "wait_gone"]


def pid_alive(pid: int) -> bool:
    """True while ``pid`` exists and is not a zombie."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return True
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def wait_gone(pid: int, timeout: float = 30.0) -> bool:
    """Poll until ``pid`` is gone; True when it is.

    ``timeout`` is a hang guard, not a budget: it returns as soon as the process is gone, so a
    generous default only makes a real failure (a process that stays) slower to report.
    """
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not pid_alive(pid):
            return True
        time.sleep(0.02)
    return not pid_alive(pid)
