"""``python -m desktop.screenshots OUT_DIR`` (``make screenshots``)."""

import sys

from desktop.screenshots import main

sys.exit(main())
