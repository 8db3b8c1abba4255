"""packaging/check_qt_libs.py: the xcb library check that `make run` / `make demo` run first on Linux.

The ``ldd`` outputs are fakes shaped like the real one (a fresh Ubuntu without a desktop); the end-to-end
tests run the script as `make` does, with a fake ``ldd`` executable first on PATH and a fake PySide6
plugin folder, so nothing depends on what this machine has installed.
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "packaging" / "check_qt_libs.py"

LDD_XCB_MISSING = """\
\tlinux-vdso.so.1 (0x00007ffd5b3f1000)
\tlibQt6XcbQpa.so.6 => /venv/PySide6/Qt/plugins/platforms/../../lib/libQt6XcbQpa.so.6 (0x00007f1)
\tlibQt6Gui.so.6 => /venv/PySide6/Qt/lib/libQt6Gui.so.6 (0x00007f2)
\tlibxkbcommon.so.0 => /lib/x86_64-linux-gnu/libxkbcommon.so.0 (0x00007f3)
\tlibxkbcommon-x11.so.0 => not found
\tlibxcb-cursor.so.0 => not found
\tlibxcb-icccm.so.4 => not found
\tlibxcb-util.so.1 => /lib/x86_64-linux-gnu/libxcb-util.so.1 (0x00007f4)
\tlibxcb-keysyms.so.1 => not found
\tlibxcb-icccm.so.4 => not found
\tlibEGL.so.1 => not found
\tlibfontconfig.so.1 => /lib/x86_64-linux-gnu/libfontconfig.so.1 (0x00007f5)
\tlibweird-vendor.so.3 => not found
\tlibc.so.6 => /lib/x86_64-linux-gnu/libc.so.6 (0x00007f6)
\t/lib64/ld-linux-x86-64.so.2 (0x00007f7)
"""

LDD_XCBQPA_MISSING = """\
\tlibxcb-render-util.so.0 => not found
\tlibxcb-cursor.so.0 => not found
\tlibdbus-1.so.3 => /lib/x86_64-linux-gnu/libdbus-1.so.3 (0x00007f8)
"""

LDD_ALL_FOUND = """\
\tlinux-vdso.so.1 (0x00007ffd5b3f1000)
\tlibxcb-cursor.so.0 => /lib/x86_64-linux-gnu/libxcb-cursor.so.0 (0x00007f1)
\tlibc.so.6 => /lib/x86_64-linux-gnu/libc.so.6 (0x00007f6)
"""


def _load() -> ModuleType:
    spec = importlib.util.spec_from_file_location("chatnodes_check_qt_libs", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


check = _load()


def _plugins(tmp_path: Path, *, wayland: bool = True) -> Path:
    """A fake ``PySide6/Qt`` tree: plugins/platforms/libqxcb.so (+ libqwayland.so) and lib/libQt6XcbQpa."""
    platforms = tmp_path / "PySide6" / "Qt" / "plugins" / "platforms"
    platforms.mkdir(parents=True)
    (platforms / "libqxcb.so").write_bytes(b"\x7fELF")
    if wayland:
        (platforms / "libqwayland.so").write_bytes(b"\x7fELF")
    lib = tmp_path / "PySide6" / "Qt" / "lib"
    lib.mkdir()
    (lib / "libQt6XcbQpa.so.6").write_bytes(b"\x7fELF")
    (lib / "libQt6WaylandClient.so.6").write_bytes(b"\x7fELF")
    return platforms


def test_parse_ldd_lists_each_missing_soname_once_in_order() -> None:
    assert check.parse_ldd(LDD_XCB_MISSING) == [
        "libxkbcommon-x11.so.0", "libxcb-cursor.so.0", "libxcb-icccm.so.4", "libxcb-keysyms.so.1",
        "libEGL.so.1", "libweird-vendor.so.3",
    ]
    assert check.parse_ldd(LDD_ALL_FOUND) == []
    assert check.parse_ldd("") == []


def test_packages_map_sonames_to_debian_names_and_keep_the_unknown() -> None:
    packages, unknown = check.packages_for(check.parse_ldd(LDD_XCB_MISSING))
    assert packages == ["libegl1", "libxcb-cursor0", "libxcb-icccm4", "libxcb-keysyms1", "libxkbcommon-x11-0"]
    assert unknown == ["libweird-vendor.so.3"]
    assert check.install_command(packages) == (
        "sudo apt-get install libegl1 libxcb-cursor0 libxcb-icccm4 libxcb-keysyms1 libxkbcommon-x11-0")
    assert check.install_command(["libxcb-cursor0"], root=True) == "apt-get install libxcb-cursor0"


def test_the_brief_s_libraries_all_have_a_package() -> None:
    needed = {"libxcb-cursor0", "libxcb-icccm4", "libxkbcommon-x11-0", "libxcb-keysyms1",
              "libxcb-render-util0", "libxcb-image0", "libxcb-shape0", "libxcb-randr0", "libxcb-xinerama0",
              "libxcb-xkb1", "libegl1", "libfontconfig1", "libdbus-1-3"}
    assert needed <= set(check.SONAME_PACKAGES.values())


@pytest.mark.parametrize(
    ("environ", "platform", "wayland_ok", "expected"),
    [
        ({}, "linux", False, True),
        ({}, "darwin", False, False),
        ({}, "win32", False, False),
        ({"QT_QPA_PLATFORM": "offscreen"}, "linux", False, False),
        ({"QT_QPA_PLATFORM": "wayland"}, "linux", False, False),
        ({"QT_QPA_PLATFORM": "xcb"}, "linux", True, True),
        ({"QT_QPA_PLATFORM": "xcb:display=:1"}, "linux", False, True),
        ({"QT_QPA_PLATFORM": "wayland;xcb", "WAYLAND_DISPLAY": "wayland-0"}, "linux", True, False),
        ({"QT_QPA_PLATFORM": "wayland;xcb", "WAYLAND_DISPLAY": "wayland-0"}, "linux", False, True),
        ({"WAYLAND_DISPLAY": "wayland-0"}, "linux", True, False),
        ({"WAYLAND_DISPLAY": "wayland-0"}, "linux", False, True),
        ({"CHATNODES_SKIP_QT_CHECK": "1"}, "linux", False, False),
        ({"CHATNODES_SKIP_QT_CHECK": "0"}, "linux", False, True),
    ],
)
def test_decide_checks_only_when_qt_would_load_xcb(
    environ: dict[str, str], platform: str, wayland_ok: bool, expected: bool
) -> None:
    asked: list[bool] = []

    def wayland_usable() -> bool:
        asked.append(True)
        return wayland_ok

    verdict = check.decide(environ, platform=platform, wayland_usable=wayland_usable)
    assert verdict.check is expected, verdict.reason
    if "WAYLAND_DISPLAY" not in environ:
        assert asked == []  # the Wayland plugin is only inspected in a Wayland session


def test_main_prints_one_install_command_for_the_plugin_and_its_qpa_library(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    platforms = _plugins(tmp_path)
    seen: list[str] = []

    def fake_ldd(path: Path) -> str:
        seen.append(path.name)
        return LDD_XCBQPA_MISSING if path.name == "libQt6XcbQpa.so.6" else LDD_XCB_MISSING

    code = check.main(["--plugins-dir", str(platforms)], environ={}, platform="linux", run_ldd=fake_ldd)
    err = capsys.readouterr().err
    assert code == 1
    assert seen == ["libqxcb.so", "libQt6XcbQpa.so.6"]
    commands = [ln.strip() for ln in err.splitlines() if "apt-get install" in ln]
    assert len(commands) == 1
    packages = commands[0].split("apt-get install ", 1)[1].split()
    assert packages == ["libegl1", "libxcb-cursor0", "libxcb-icccm4", "libxcb-keysyms1",
                        "libxcb-render-util0", "libxkbcommon-x11-0"]
    assert "libweird-vendor.so.3" in err and "CHATNODES_SKIP_QT_CHECK" in err


def test_main_is_silent_and_zero_when_nothing_is_missing_or_nothing_is_checked(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    platforms = _plugins(tmp_path)
    argv = ["--plugins-dir", str(platforms)]
    x11 = {"DISPLAY": ":0"}
    assert check.main(argv, environ=x11, platform="linux", run_ldd=lambda _p: LDD_ALL_FOUND) == 0

    def broken(_path: Path) -> str:
        raise AssertionError("ldd must not run when the check is skipped")

    assert check.main(argv, environ={"QT_QPA_PLATFORM": "offscreen"}, platform="linux", run_ldd=broken) == 0
    assert check.main(argv, environ={}, platform="darwin", run_ldd=broken) == 0
    # Wayland session, Wayland plugin complete: xcb is not needed even if its libraries are missing.
    calls: list[str] = []

    def wayland_fine(path: Path) -> str:
        calls.append(path.name)
        return LDD_ALL_FOUND if "ayland" in path.name else LDD_XCB_MISSING

    wayland = {"WAYLAND_DISPLAY": "wayland-0"}
    assert check.main(argv, environ=wayland, platform="linux", run_ldd=wayland_fine) == 0
    assert calls == ["libqwayland.so", "libQt6WaylandClient.so.6"]
    # Wayland session, Wayland plugin incomplete: Qt falls back to xcb, so xcb is checked.
    assert check.main(argv, environ={"WAYLAND_DISPLAY": "wayland-0"}, platform="linux",
                      run_ldd=lambda p: LDD_XCB_MISSING) == 1
    assert capsys.readouterr().out == ""


def test_main_says_how_to_run_without_a_display(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["--plugins-dir", str(_plugins(tmp_path))]
    assert check.main(argv, environ={}, platform="linux", run_ldd=lambda _p: LDD_ALL_FOUND) == 1
    err = capsys.readouterr().err
    assert "neither DISPLAY nor WAYLAND_DISPLAY" in err and "xvfb-run make demo" in err


def test_main_never_blocks_without_pyside6_s_plugin(tmp_path: Path) -> None:
    empty = tmp_path / "platforms"
    empty.mkdir()
    assert check.main(["--plugins-dir", str(empty)], environ={}, platform="linux",
                      run_ldd=lambda _p: LDD_XCB_MISSING) == 0


def _fake_ldd_bin(tmp_path: Path, output: str) -> Path:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    ldd = bin_dir / "ldd"
    ldd.write_text("#!/bin/sh\ncat <<'EOF'\n" + output + "EOF\n", encoding="utf-8")
    ldd.chmod(0o755)
    return bin_dir


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the check runs on Linux only")
def test_script_end_to_end_with_a_fake_ldd_on_path(tmp_path: Path) -> None:
    platforms = _plugins(tmp_path, wayland=False)
    bin_dir = _fake_ldd_bin(tmp_path, LDD_XCB_MISSING)
    env = {k: v for k, v in os.environ.items() if k not in ("QT_QPA_PLATFORM", "WAYLAND_DISPLAY",
                                                            "CHATNODES_SKIP_QT_CHECK")}
    env["PATH"] = f"{bin_dir}{os.pathsep}{env.get('PATH', '')}"
    argv = [sys.executable, str(SCRIPT), "--plugins-dir", str(platforms)]
    proc = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=60, check=False)
    assert proc.returncode == 1, proc.stderr
    assert "apt-get install libegl1 libxcb-cursor0 libxcb-icccm4 libxcb-keysyms1 libxkbcommon-x11-0" \
        in proc.stderr
    ok = subprocess.run(argv, env=dict(env, QT_QPA_PLATFORM="offscreen"), capture_output=True, text=True,
                        timeout=60, check=False)
    assert ok.returncode == 0 and ok.stderr == ""
    skipped = subprocess.run(argv, env=dict(env, CHATNODES_SKIP_QT_CHECK="1"), capture_output=True, text=True,
                             timeout=60, check=False)
    assert skipped.returncode == 0 and skipped.stderr == ""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the check runs on Linux only")
def test_finds_this_venv_s_pyside6_plugin() -> None:
    folder = check.find_plugins_dir()
    assert folder is not None and (folder / "libqxcb.so").exists()
