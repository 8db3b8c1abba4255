"""``python -m desktop [PROJECT_DIR] [--demo] [--config-dir DIR] [--smoke-test]``, and the Qt-free
subcommands ``python -m desktop import FILE [--project DIR]`` / ``export OUT`` (``desktop.cli``)."""

import time

_STARTED = time.perf_counter()  # before the heavy imports: --smoke-test reports time to first paint from here

import sys  # noqa: E402

if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] in ("import", "export"):  # desktop.cli.SUBCOMMANDS, without Qt
        from desktop.cli import main as cli_main

        sys.exit(cli_main(sys.argv[1:]))
    from desktop.app import run

    run(started_at=_STARTED)
