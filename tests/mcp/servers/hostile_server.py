"""Hostile MCP "servers" in one script; the first argument picks the behaviour.

* ``garbage``: writes a line that is not JSON-RPC to stdout, then waits forever.
* ``silent``: reads stdin and never answers (ignores SIGTERM too; only SIGKILL ends it).
* ``die``: writes a reason to stderr and exits with status 3 at once.
"""

from __future__ import annotations

import signal
import sys
import time

mode = sys.argv[1]
if mode == "garbage":
    sys.stdout.write("Server listening on port 3000 (this is not JSON-RPC)\n")
    sys.stdout.flush()
    sys.stdin.read()
    time.sleep(600)
elif mode == "silent":
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    print("silent server up, will never answer", file=sys.stderr, flush=True)
    for _line in sys.stdin:
        pass
    time.sleep(600)
elif mode == "die":
    print("fatal: MY_SERVICE_TOKEN is not set", file=sys.stderr, flush=True)
    sys.exit(3)
else:
    raise SystemExit(f"unknown mode {mode}")
