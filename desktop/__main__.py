"""``python -m desktop [PROJECT_DIR] [--demo] [--config-dir DIR] [--smoke-test]``."""

import time

_STARTED = time.perf_counter()  # before the heavy imports: --smoke-test reports time to first paint from here

import sys  # noqa: E402

from desktop.app import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main(started_at=_STARTED))
