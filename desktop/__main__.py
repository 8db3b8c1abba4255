"""``python -m desktop [PROJECT_DIR] [--demo] [--config-dir DIR] [--smoke-test]``."""

import time

_STARTED = time.perf_counter()  # before the heavy imports: --smoke-test reports time to first paint from here

from desktop.app import run  # noqa: E402

if __name__ == "__main__":
    run(started_at=_STARTED)
