"""Entry script of the PyInstaller bundle: runs ``desktop.app:main`` (``chatnodes import`` / ``export``:
``desktop.cli``, as ``python -m desktop`` does).

Diagnostics for ``packaging/check.sh`` (they exit without starting the app):

With ``CHATNODES_BUNDLE_DIAG=qt`` it prints the bundled Qt's platform, image formats and whether the app icon
(SVG) renders: proof that trimming the Qt plugins kept what the app draws with.

With ``CHATNODES_BUNDLE_DIAG=keyring`` in the environment it prints what the bundle's keyring sees (the
``keyring.backends`` entry points, the backend classes that loaded and the backend keyring would use) and
exits without starting Qt. ``packaging/check.sh`` uses it to prove that keyring's metadata and backends made
it into the frozen app: without them keyring silently falls back to its "no keyring" backend.

With ``CHATNODES_BUNDLE_DIAG=ijson`` it prints the JSON streaming backend (the C one is expected).

With ``CHATNODES_BUNDLE_DIAG=keyring-roundtrip`` it stores, reads back and deletes a random throw-away secret.

``chatnodes --mcp-probe COMMAND [ARGS...]`` (hidden) starts ``COMMAND ARGS...`` as a stdio MCP server
with the bundled SDK through ``desktop.core.mcp``, lists its tools, calls ``echo`` when it has one,
prints the facts and exits 0 when the server was ready with at least one tool (1 otherwise): proof
that the frozen SDK works.
"""

from __future__ import annotations

import time

_STARTED = time.perf_counter()  # before the heavy imports: --smoke-test reports time to first paint from here

import os  # noqa: E402
import sys  # noqa: E402


def _diagnose_keyring() -> int:
    """Print the keyring facts of this (frozen) interpreter, one ``key: value`` line each.

    For every backend class that loaded it prints its priority, or why it is not usable here (on a machine
    without a D-Bus session, SecretService says so; a bundle that lost ``secretstorage`` says "SecretStorage
    required" instead, which is the failure this diagnostic exists to catch).

    Returns:
        0 when keyring's Secret Service backend was found through its entry point together with the
        ``secretstorage`` library it needs, 1 otherwise.
    """
    from importlib.metadata import entry_points, version

    import keyring
    import keyring.backend

    chosen = keyring.get_keyring()  # loads the entry-point plugins as a side effect
    names = sorted(ep.name for ep in entry_points(group="keyring.backends"))
    print(f"keyring-version: {version('keyring')}")
    print(f"keyring-entry-points: {','.join(names) or '-'}")
    secret_service_ok = False
    for cls in sorted(keyring.backend.KeyringBackend._classes, key=lambda c: (c.__module__, c.__name__)):
        name = f"{cls.__module__}.{cls.__name__}"
        try:
            state = f"priority {cls.priority}"
        except Exception as exc:  # noqa: BLE001 - the reason is the diagnostic
            state = f"unavailable ({exc})"
        print(f"keyring-backend-class: {name}: {state}")
        if cls.__module__ == "keyring.backends.SecretService":
            secret_service_ok = "SecretStorage" not in state
    print(f"keyring-backend: {type(chosen).__module__}.{type(chosen).__name__}")
    return 0 if "SecretService" in names and secret_service_ok else 1


def _diagnose_keyring_roundtrip() -> int:
    """Store, read back and delete a random throw-away secret through the keyring the bundle picks.

    ``packaging/check.sh`` runs it inside a private D-Bus session with an unlocked gnome-keyring, which is
    what proves the frozen Secret Service stack (keyring, secretstorage, jeepney, cryptography) really works.

    Returns:
        0 when the secret round-tripped and is gone afterwards, 1 otherwise.
    """
    import secrets

    import keyring
    import keyring.errors

    service, user = "chatnodes-bundle-check", "probe"
    value = secrets.token_hex(16)
    backend = keyring.get_keyring()
    print(f"keyring-backend: {type(backend).__module__}.{type(backend).__name__}")
    try:
        keyring.set_password(service, user, value)
        read_back = keyring.get_password(service, user)
        keyring.delete_password(service, user)
        after_delete = keyring.get_password(service, user)
    except keyring.errors.KeyringError as exc:
        print(f"keyring-roundtrip: failed ({type(exc).__name__}: {exc})")
        return 1
    ok = read_back == value and after_delete is None
    print(f"keyring-roundtrip: {'ok' if ok else 'wrong value read back'}")
    return 0 if ok else 1


def _diagnose_qt() -> int:
    """Print what the bundled Qt can do: platform plugin, image formats, and whether the app icon renders.

    Run with ``QT_QPA_PLATFORM=offscreen`` on a machine without a display.

    Returns:
        0 when SVG is a supported image format and the bundled ``resources/icons/chatnodes.svg`` renders.
    """
    from pathlib import Path

    from PySide6.QtCore import QLibraryInfo
    from PySide6.QtGui import QGuiApplication, QIcon, QImageReader

    app = QGuiApplication(sys.argv[:1])
    formats = sorted(bytes(fmt.data()).decode() for fmt in QImageReader.supportedImageFormats())
    root = Path(getattr(sys, "_MEIPASS", Path(__file__).resolve().parent.parent))
    svg = root / "resources" / "icons" / "chatnodes.svg"
    pixmap = QIcon(str(svg)).pixmap(64, 64)
    print(f"qt-version: {QLibraryInfo.version().toString()}")
    print(f"qt-platform: {app.platformName()}")
    print(f"qt-plugins: {QLibraryInfo.path(QLibraryInfo.LibraryPath.PluginsPath)}")
    print(f"qt-image-formats: {','.join(formats)}")
    print(f"qt-icon: {svg} -> {'null' if pixmap.isNull() else f'{pixmap.width()}x{pixmap.height()}'}")
    return 0 if "svg" in formats and not pixmap.isNull() else 1


def _mcp_probe(command: list[str]) -> int:
    """Connect to the stdio MCP server ``command`` with the bundled SDK and list its tools.

    Returns:
        0 when the server became ready with at least one tool (and ``echo``, if offered, answered), else 1.
    """
    import asyncio

    from desktop.core.mcp import McpManager, McpToolError, parse_mcp_server

    if not command:
        print("usage: chatnodes --mcp-probe COMMAND [ARGS...]", file=sys.stderr)
        return 2

    async def probe() -> int:
        config = parse_mcp_server("probe", {"command": command[0], "args": command[1:]})
        manager = McpManager({"probe": config}, init_timeout=30.0)
        started = time.perf_counter()
        try:
            manager.start()
            status = (await manager.wait_ready(timeout=40.0))["probe"]
            print(f"mcp-probe: {status.summary()} after {time.perf_counter() - started:.2f} s")
            tools = manager.tools()
            for tool in tools:
                print(f"mcp-tool: {tool.name}")
            ok = status.state == "ready" and bool(tools)
            if not ok:
                for line in status.stderr_tail:
                    print(f"mcp-stderr: {line}")
            if ok and "mcp__probe__echo" in {t.name for t in tools}:
                try:
                    answer = await manager.run("mcp__probe__echo", {"text": "bundle"})
                except McpToolError as err:
                    print(f"mcp-call: failed ({err})")
                    return 1
                print(f"mcp-call: echo -> {answer!r}")
                ok = answer == "bundle"
            return 0 if ok else 1
        finally:
            await manager.aclose()

    return asyncio.run(probe())


def _diagnose_ijson() -> int:
    """Print which ijson backend the bundle uses; 0 when it is the C one (``yajl2_c``), 1 otherwise.

    ijson picks its backend with ``importlib`` (invisible to PyInstaller's scan): a bundle that lost the C
    extension would still import, 20 times slower on a big export.
    """
    import ijson

    print(f"ijson-backend: {ijson.backend}")
    return 0 if ijson.backend == "yajl2_c" else 1


_DIAGNOSTICS = {
    "ijson": _diagnose_ijson,
    "keyring": _diagnose_keyring,
    "keyring-roundtrip": _diagnose_keyring_roundtrip,
    "qt": _diagnose_qt,
}


def run() -> int:
    """Run the app (which exits the process itself), or the diagnostic named by ``CHATNODES_BUNDLE_DIAG``.

    Returns:
        The process exit code of a diagnostic.
    """
    if len(sys.argv) > 1 and sys.argv[1] == "--mcp-probe":
        return _mcp_probe(sys.argv[2:])
    if len(sys.argv) > 1 and sys.argv[1] in ("import", "export"):  # like python -m desktop: no Qt loaded
        from desktop.cli import main as cli_main

        return cli_main(sys.argv[1:])
    diag = os.environ.get("CHATNODES_BUNDLE_DIAG", "")
    if diag:
        if diag not in _DIAGNOSTICS:
            known = ", ".join(sorted(_DIAGNOSTICS))
            print(f"unknown CHATNODES_BUNDLE_DIAG value {diag!r} (known: {known})", file=sys.stderr)
            return 2
        return _DIAGNOSTICS[diag]()
    from desktop.app import run as run_app

    run_app(started_at=_STARTED)  # exits the process (at once after a --smoke-test that closed cleanly)


if __name__ == "__main__":
    raise SystemExit(run())
