"""Before ``make run`` / ``make demo`` on Linux: are the system libraries of Qt's xcb plugin installed?

PySide6's wheels ship Qt itself but not the X11/xcb system libraries its ``xcb`` platform plugin
loads (PySide6 ≥ 6.5 needs ``libxcb-cursor0``; a machine without a desktop also lacks
``libxcb-icccm4``, ``libxkbcommon-x11-0``, ``libxcb-keysyms1`` …). Without them Qt aborts with "could
not load the Qt platform plugin "xcb"" and a core dump message. This script runs ``ldd`` on the
installed ``PySide6/Qt/plugins/platforms/libqxcb.so`` and its ``libQt6XcbQpa`` dependency, maps
every soname ``ldd`` reports as "not found" to its Debian/Ubuntu package, and prints the one
``sudo apt-get install …`` command naming only the missing ones (exit status 1, so ``make`` stops
before Qt aborts). Everything else exits 0 and launches as before:

* not Linux; ``CHATNODES_SKIP_QT_CHECK=1``;
* ``QT_QPA_PLATFORM`` names no ``xcb`` (``offscreen``, ``wayland`` …), or it puts ``wayland`` first
  and Wayland is usable;
* ``QT_QPA_PLATFORM`` unset, ``WAYLAND_DISPLAY`` set and the Wayland plugin's libraries all present
  (Qt uses Wayland there);
* PySide6 or the plugin cannot be found, or ``ldd`` cannot run (the check never blocks on itself;
  without ``ldd`` it asks the dynamic linker's cache through ``ctypes.util.find_library``).

Standard library only: it runs with the project's venv interpreter before anything is imported.
Usage: ``python packaging/check_qt_libs.py [--plugins-dir DIR] [--quiet]``.
"""

from __future__ import annotations

import argparse
import ctypes.util
import importlib.util
import os
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

__all__ = ["SONAME_PACKAGES", "Verdict", "parse_ldd", "packages_for", "install_command", "decide",
           "find_plugins_dir", "missing_sonames", "main"]

SKIP_ENV = "CHATNODES_SKIP_QT_CHECK"

#: soname → Debian/Ubuntu package (the names apt accepts on Debian 12, Ubuntu 22.04 and 24.04).
SONAME_PACKAGES: dict[str, str] = {
    "libxcb-cursor.so.0": "libxcb-cursor0",
    "libxcb-icccm.so.4": "libxcb-icccm4",
    "libxcb-image.so.0": "libxcb-image0",
    "libxcb-keysyms.so.1": "libxcb-keysyms1",
    "libxcb-randr.so.0": "libxcb-randr0",
    "libxcb-render-util.so.0": "libxcb-render-util0",
    "libxcb-render.so.0": "libxcb-render0",
    "libxcb-shape.so.0": "libxcb-shape0",
    "libxcb-shm.so.0": "libxcb-shm0",
    "libxcb-sync.so.1": "libxcb-sync1",
    "libxcb-util.so.1": "libxcb-util1",
    "libxcb-xfixes.so.0": "libxcb-xfixes0",
    "libxcb-xinerama.so.0": "libxcb-xinerama0",
    "libxcb-xinput.so.0": "libxcb-xinput0",
    "libxcb-xkb.so.1": "libxcb-xkb1",
    "libxcb-glx.so.0": "libxcb-glx0",
    "libxcb.so.1": "libxcb1",
    "libX11-xcb.so.1": "libx11-xcb1",
    "libX11.so.6": "libx11-6",
    "libXau.so.6": "libxau6",
    "libXdmcp.so.6": "libxdmcp6",
    "libSM.so.6": "libsm6",
    "libICE.so.6": "libice6",
    "libxkbcommon.so.0": "libxkbcommon0",
    "libxkbcommon-x11.so.0": "libxkbcommon-x11-0",
    "libGL.so.1": "libgl1",
    "libEGL.so.1": "libegl1",
    "libGLX.so.0": "libglx0",
    "libGLdispatch.so.0": "libglvnd0",
    "libOpenGL.so.0": "libopengl0",
    "libfontconfig.so.1": "libfontconfig1",
    "libfreetype.so.6": "libfreetype6",
    "libdbus-1.so.3": "libdbus-1-3",
    "libglib-2.0.so.0": "libglib2.0-0",
    "libgthread-2.0.so.0": "libglib2.0-0",
    "libz.so.1": "zlib1g",
    "libzstd.so.1": "libzstd1",
    "libpng16.so.16": "libpng16-16",
    "libexpat.so.1": "libexpat1",
    "libbrotlidec.so.1": "libbrotli1",
    "libbrotlicommon.so.1": "libbrotli1",
    "libpcre2-8.so.0": "libpcre2-8-0",
    "libsystemd.so.0": "libsystemd0",
    "libbsd.so.0": "libbsd0",
    "libmd.so.0": "libmd0",
    "libcap.so.2": "libcap2",
    "libgcrypt.so.20": "libgcrypt20",
    "libgpg-error.so.0": "libgpg-error0",
    "liblzma.so.5": "liblzma5",
    "liblz4.so.1": "liblz4-1",
    "libstdc++.so.6": "libstdc++6",
    "libgcc_s.so.1": "libgcc-s1",
    "libwayland-client.so.0": "libwayland-client0",
    "libwayland-cursor.so.0": "libwayland-cursor0",
    "libwayland-egl.so.1": "libwayland-egl1",
}

#: What the xcb plugin needs when ``ldd`` is unavailable (checked with ``ctypes.util.find_library``).
XCB_FALLBACK_LIBS = ("xcb-cursor", "xcb-icccm", "xcb-image", "xcb-keysyms", "xcb-randr", "xcb-render-util",
                     "xcb-shape", "xcb-xkb", "xkbcommon-x11", "xkbcommon", "X11-xcb", "EGL", "fontconfig",
                     "dbus-1")

#: The Qt library each platform plugin is a thin wrapper around (``Qt/lib``), checked along with it.
_COMPANIONS = {"libqxcb.so": "libQt6XcbQpa.so.6", "libqwayland.so": "libQt6WaylandClient.so.6"}

RunLdd = Callable[[Path], str | None]


@dataclass(frozen=True)
class Verdict:
    """Whether to check the xcb libraries, and why.

    Attributes:
        check: True when Qt would use (or fall back to) the xcb plugin.
        reason: One line for ``--verbose`` and the tests.
    """

    check: bool
    reason: str


def parse_ldd(output: str) -> list[str]:
    """The sonames ``ldd`` reports as ``not found`` (each once, in order of appearance)."""
    missing: list[str] = []
    for line in output.splitlines():
        name, sep, target = line.strip().partition("=>")
        if sep and target.strip() == "not found":
            soname = name.strip()
            if soname and soname not in missing:
                missing.append(soname)
    return missing


def packages_for(sonames: Iterable[str]) -> tuple[list[str], list[str]]:
    """(Debian/Ubuntu packages to install, sonames without a known package), each sorted, no duplicates."""
    packages: set[str] = set()
    unknown: set[str] = set()
    for soname in sonames:
        package = SONAME_PACKAGES.get(soname)
        if package is None:
            unknown.add(soname)
        else:
            packages.add(package)
    return sorted(packages), sorted(unknown)


def install_command(packages: Sequence[str], *, root: bool = False) -> str:
    """The one apt command installing ``packages`` (without ``sudo`` when already root)."""
    return ("" if root else "sudo ") + "apt-get install " + " ".join(packages)


def _platforms(value: str) -> list[str]:
    """Plugin names of a ``QT_QPA_PLATFORM`` value (``"wayland;xcb"``, ``"xcb:display=:1"``)."""
    return [part.split(":", 1)[0].strip().lower() for part in value.split(";") if part.strip()]


def decide(environ: Mapping[str, str], *, platform: str, wayland_usable: Callable[[], bool]) -> Verdict:
    """Whether Qt would load the xcb plugin here (only then are its libraries checked)."""
    if not platform.startswith("linux"):
        return Verdict(False, f"not Linux ({platform})")
    if environ.get(SKIP_ENV, "").strip() not in ("", "0"):
        return Verdict(False, f"{SKIP_ENV} is set")
    requested = _platforms(environ.get("QT_QPA_PLATFORM", ""))
    if requested:
        if "xcb" not in requested:
            return Verdict(False, f"QT_QPA_PLATFORM={environ['QT_QPA_PLATFORM']} does not use xcb")
        if requested[0] == "wayland" and environ.get("WAYLAND_DISPLAY") and wayland_usable():
            return Verdict(False, "QT_QPA_PLATFORM puts a usable Wayland first")
        return Verdict(True, "QT_QPA_PLATFORM names xcb")
    if environ.get("WAYLAND_DISPLAY") and wayland_usable():
        return Verdict(False, "a Wayland session with a usable Wayland plugin")
    return Verdict(True, "Qt's default platform here is xcb")


def find_plugins_dir() -> Path | None:
    """``PySide6/Qt/plugins/platforms`` of the running interpreter's PySide6 (not imported), or None."""
    spec = importlib.util.find_spec("PySide6")
    if spec is None or not spec.submodule_search_locations:
        return None
    for location in spec.submodule_search_locations:
        folder = Path(location) / "Qt" / "plugins" / "platforms"
        if folder.is_dir():
            return folder
    return None


def _run_ldd(path: Path) -> str | None:
    """``ldd path``'s output, or None when ``ldd`` is missing or fails."""
    ldd = shutil.which("ldd")
    if ldd is None:
        return None
    try:
        proc = subprocess.run([ldd, str(path)], capture_output=True, text=True, timeout=30, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    return proc.stdout if proc.returncode == 0 or "not found" in proc.stdout else None


def missing_sonames(plugin: Path, run_ldd: RunLdd = _run_ldd) -> list[str] | None:
    """Sonames missing for ``plugin`` and the ``libQt6XcbQpa``/``libQt6WaylandClient`` library next to
    it (``Qt/lib``); None when ``ldd`` could not tell."""
    targets = [plugin]
    companion = _COMPANIONS.get(plugin.name)
    if companion is not None:
        lib = plugin.parent.parent.parent / "lib" / companion
        if lib.exists():
            targets.append(lib)
    missing: list[str] = []
    for target in targets:
        output = run_ldd(target)
        if output is None:
            return None
        missing += [s for s in parse_ldd(output) if s not in missing]
    return missing


def _fallback_missing() -> list[str]:
    """Without ``ldd``: the xcb plugin's libraries the dynamic linker's cache does not know."""
    missing: list[str] = []
    for name in XCB_FALLBACK_LIBS:
        if ctypes.util.find_library(name) is None:
            soname = next((s for s in SONAME_PACKAGES if s.startswith(f"lib{name}.so")), f"lib{name}.so")
            missing.append(soname)
    return missing


def _message(missing: Sequence[str], *, root: bool, has_apt: bool) -> str:
    packages, unknown = packages_for(missing)
    lines = ["Chat Nodes cannot start yet: Qt's xcb platform plugin needs system libraries that are "
             "not installed:", "    " + ", ".join(missing), ""]
    if packages:
        intro = ("Install them with:" if has_apt else "On Debian/Ubuntu the packages are (install the "
                 "equivalents with your package manager):")
        lines += [intro, "", "    " + install_command(packages, root=root), ""]
    if unknown:
        lines += ["No package is known here for: " + ", ".join(unknown)
                  + " (`apt-file search NAME` finds the package that ships it).", ""]
    lines.append(f"Then run the command again. To launch without this check, set {SKIP_ENV}=1.")
    return "\n".join(lines)


def main(
    argv: Sequence[str] | None = None,
    *,
    environ: Mapping[str, str] | None = None,
    platform: str | None = None,
    run_ldd: RunLdd = _run_ldd,
) -> int:
    """Check; print the install command and return 1 when libraries are missing, else return 0."""
    parser = argparse.ArgumentParser(prog="check_qt_libs.py", description=__doc__.split("\n\n")[0])
    parser.add_argument("--plugins-dir", type=Path, help="PySide6's Qt/plugins/platforms (default: found)")
    parser.add_argument("-v", "--verbose", action="store_true", help="say why the check runs or not")
    args = parser.parse_args(argv)
    env = os.environ if environ is None else environ
    plat = sys.platform if platform is None else platform
    folder = args.plugins_dir if args.plugins_dir is not None else find_plugins_dir()

    def wayland_usable() -> bool:
        plugin = folder / "libqwayland.so" if folder is not None else None
        if plugin is None or not plugin.exists():
            return False
        missing = missing_sonames(plugin, run_ldd)
        return missing == []

    verdict = decide(env, platform=plat, wayland_usable=wayland_usable)
    if args.verbose:
        state = "checking" if verdict.check else "skipped"
        print(f"check_qt_libs: {state}: {verdict.reason}", file=sys.stderr)
    if not verdict.check:
        return 0
    xcb = folder / "libqxcb.so" if folder is not None else None
    if xcb is None or not xcb.exists():
        if args.verbose:
            print("check_qt_libs: PySide6's xcb plugin not found; nothing to check", file=sys.stderr)
        return 0
    missing = missing_sonames(xcb, run_ldd)
    if missing is None:
        missing = _fallback_missing() if shutil.which("ldconfig") or Path("/sbin/ldconfig").exists() else []
    if missing:
        root = hasattr(os, "geteuid") and os.geteuid() == 0
        print(_message(missing, root=root, has_apt=shutil.which("apt-get") is not None), file=sys.stderr)
        return 1
    if not env.get("DISPLAY") and not env.get("WAYLAND_DISPLAY"):
        print(NO_DISPLAY, file=sys.stderr)
        return 1
    return 0


NO_DISPLAY = (
    "Chat Nodes needs a desktop session: neither DISPLAY nor WAYLAND_DISPLAY is set, so Qt would abort\n"
    "with \"could not connect to display\". Run it from your desktop, or on a machine without one:\n"
    "    xvfb-run make demo          (a virtual screen; apt-get install xvfb)\n"
    "    QT_QPA_PLATFORM=offscreen make run ARGS=--smoke-test   (a headless start-up check)"
)


if __name__ == "__main__":
    raise SystemExit(main())
