"""Fast checks of the bundle recipe (packaging/); the real PyInstaller build is `make bundle-check`."""

from __future__ import annotations

import ast
import importlib.util
import json
import os
import shutil
import struct
import subprocess
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGING = ROOT / "packaging"
SPEC = PACKAGING / "chatnodes.spec"


def _load_trim() -> ModuleType:
    spec = importlib.util.spec_from_file_location("chatnodes_packaging_trim", PACKAGING / "_trim.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


trim = _load_trim()


# --- the spec, run against stand-ins for PyInstaller's API -------------------------------------------------

STANDINS = Path(__file__).resolve().parent / "standins"


def _installed_copy(tmp_path: Path) -> Path:
    """A site folder holding a copy of the package, as ``pip install .`` would (the spec refuses the tree)."""
    site = tmp_path / "site"
    shutil.copytree(ROOT / "desktop", site / "desktop", ignore=shutil.ignore_patterns("__pycache__"))
    return site


def _run_spec(site: Path, **env: str) -> subprocess.CompletedProcess[str]:
    dropped = ("PYTHONPATH", "CHATNODES_BUNDLE_NO_TRIM")
    full_env = {k: v for k, v in os.environ.items() if k not in dropped}
    full_env.update(PYTHONPATH=os.pathsep.join([str(STANDINS), str(site)]), **env)
    return subprocess.run([sys.executable, str(STANDINS / "run_spec.py"), str(SPEC)], cwd=site,
                          capture_output=True, text=True, env=full_env, timeout=120, check=False)


@pytest.fixture(scope="module")
def spec_calls(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """What the spec hands PyInstaller (Analysis/EXE/COLLECT arguments), trimmed build."""
    result = _run_spec(_installed_copy(tmp_path_factory.mktemp("spec")))
    assert result.returncode == 0, result.stdout + result.stderr
    calls: dict[str, Any] = json.loads(result.stdout.strip().splitlines()[-1])
    return calls


def test_spec_builds_one_folder_named_chatnodes_from_the_entry_script(spec_calls: dict[str, Any]) -> None:
    assert spec_calls["EXE"]["name"] == "chatnodes"
    assert spec_calls["EXE"]["exclude_binaries"] is True  # one-folder, not one-file
    assert spec_calls["COLLECT"]["name"] == "chatnodes"
    assert spec_calls["Analysis"]["scripts"] == [str(PACKAGING / "entry.py")]


def test_spec_collects_keyring_metadata_backends_and_entry_points(spec_calls: dict[str, Any]) -> None:
    import importlib.metadata

    hidden = set(spec_calls["Analysis"]["hiddenimports"])
    # every backend keyring finds through its entry points, and every module of keyring.backends
    for ep in importlib.metadata.entry_points(group="keyring.backends"):
        assert ep.module in hidden
    assert {"keyring.backends.SecretService", "keyring.backends.fail", "keyring.backends.chainer"} <= hidden
    assert "secretstorage.collection" in hidden  # the Secret Service backend imports it lazily
    assert "jeepney.io.blocking" in hidden and not [name for name in hidden if ".tests" in name]
    dests = {dest for _src, dest in spec_calls["Analysis"]["datas"]}
    assert any(dest.startswith("keyring-") and dest.endswith(".dist-info") for dest in dests)
    assert any(dest.startswith("chatnodes-") and dest.endswith(".dist-info") for dest in dests)
    assert "desktop/core/chat" in dests  # the model price table
    assert "resources/icons" in dests


def test_spec_collects_the_app_modules_loaded_by_name(spec_calls: dict[str, Any]) -> None:
    """``desktop.core.chat`` and ``desktop.core.usage`` load their modules on first use of a name (start-up
    stays light); the bundle must hold those modules although no plain import statement names them."""
    hidden = set(spec_calls["Analysis"]["hiddenimports"])
    assert {"desktop.core.chat.runtime", "desktop.core.chat.loop", "desktop.core.usage._tally",
            "desktop.core.usage._report", "desktop.core.usage._recorder"} <= hidden


def test_spec_collects_the_mcp_sdk(spec_calls: dict[str, Any]) -> None:
    import importlib.metadata

    hidden = set(spec_calls["Analysis"]["hiddenimports"])
    # the client the app uses, the types, and the transports (imported lazily inside desktop.core.mcp)
    assert {"mcp", "mcp.client.stdio", "mcp.client.streamable_http", "mcp.client.sse", "mcp_types",
            "httpx2", "httpcore2"} <= hidden
    assert {"ijson.backends.yajl2_c", "ijson.backends._yajl2"} <= hidden  # loaded with importlib by ijson
    assert not [name for name in hidden if name.endswith("__main__")]
    # opentelemetry finds its context implementation through an entry point
    for ep in importlib.metadata.entry_points(group="opentelemetry_context"):
        assert ep.module in hidden
    dests = {dest for _src, dest in spec_calls["Analysis"]["datas"]}
    for dist in ("mcp", "httpx2", "opentelemetry_api"):  # httpx2.__version__ reads its metadata at import
        assert any(dest.lower().replace("-", "_").startswith(dist + "_") and dest.endswith(".dist-info")
                   for dest in dests), dist


def test_bundle_check_probes_mcp_and_allows_180_mib() -> None:
    check = (PACKAGING / "check.sh").read_text()
    assert 'MAX_MB="${CHATNODES_BUNDLE_MAX_MB:-180}"' in check
    assert '--mcp-probe' in check and "mcp-tool: mcp__probe__echo" in check
    entry = (PACKAGING / "entry.py").read_text()
    assert '"--mcp-probe"' in entry


def test_mcp_probe_lists_the_tools_of_a_real_stdio_server() -> None:
    server = ROOT / "tests" / "mcp" / "servers" / "stdio_server.py"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    result = subprocess.run([sys.executable, str(PACKAGING / "entry.py"), "--mcp-probe", sys.executable,
                             str(server)], capture_output=True, text=True, env=env, timeout=90, check=False)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "mcp-probe: ready" in result.stdout
    assert "mcp-tool: mcp__probe__add" in result.stdout
    assert "mcp-call: echo -> 'bundle'" in result.stdout
    failed = subprocess.run([sys.executable, str(PACKAGING / "entry.py"), "--mcp-probe", sys.executable, "-c",
                             "import sys; sys.exit(3)"], capture_output=True, text=True, env=env, timeout=90,
                            check=False)
    assert failed.returncode == 1 and "failed" in failed.stdout


def test_spec_excludes_the_other_qt_bindings_even_untrimmed(spec_calls: dict[str, Any],
                                                            tmp_path: Path) -> None:
    assert spec_calls["Analysis"]["excludes"] == list(trim.EXCLUDED_MODULES)
    untrimmed = _run_spec(_installed_copy(tmp_path), CHATNODES_BUNDLE_NO_TRIM="1")
    assert untrimmed.returncode == 0, untrimmed.stdout + untrimmed.stderr
    calls = json.loads(untrimmed.stdout.strip().splitlines()[-1])
    assert calls["Analysis"]["excludes"] == list(trim.OTHER_QT_BINDINGS)
    for binding in ("PyQt5", "PyQt6", "PySide2"):
        assert binding in trim.OTHER_QT_BINDINGS


def test_spec_refuses_the_source_tree(tmp_path: Path) -> None:
    result = _run_spec(ROOT)
    assert result.returncode != 0
    assert "resolves to the source tree, not the installed package" in result.stderr


def test_entry_script_runs_the_real_app(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k != "CHATNODES_BUNDLE_DIAG"}
    env["QT_QPA_PLATFORM"] = "offscreen"
    result = subprocess.run(
        [sys.executable, str(PACKAGING / "entry.py"), str(tmp_path / "proj"),
         "--config-dir", str(tmp_path / "cfg"), "--smoke-test"],
        capture_output=True, text=True, env=env, timeout=60, check=False)
    assert result.returncode == 0, result.stderr
    assert "first_paint_ms=" in result.stderr and "ready_ms=" in result.stderr
    assert (tmp_path / "proj" / "project.json").is_file()


# --- Qt modules and plugins ---------------------------------------------------------------------------------


def _pyside_modules_imported_by(folder: Path) -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    for path in sorted(folder.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for node in ast.walk(tree):
            names: list[str] = []
            if isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module] + [f"{node.module}.{alias.name}" for alias in node.names]
            elif isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            for name in names:
                parts = name.split(".")
                if parts[0] == "PySide6" and len(parts) > 1 and parts[1].startswith("Qt"):
                    found.setdefault(parts[1], []).append(str(path.relative_to(ROOT)))
    return found


def test_every_pyside6_module_the_app_imports_is_kept_in_the_bundle() -> None:
    imported = _pyside_modules_imported_by(ROOT / "desktop")
    assert "QtWidgets" in imported  # the scan itself works
    missing = {name: where for name, where in imported.items() if name not in trim.KEPT_QT_MODULES}
    assert not missing, (
        f"desktop/ imports PySide6 modules the bundle leaves out: {missing}; add them to "
        "KEPT_QT_MODULES and remove them from EXCLUDED_QT_MODULES in packaging/_trim.py"
    )
    assert not trim.KEPT_QT_MODULES & set(trim.EXCLUDED_QT_MODULES)


@pytest.mark.parametrize(
    "plugin",
    [
        "platforms/libqxcb.so",
        "platforms/libqoffscreen.so",
        "platforms/libqwayland.so",
        "platforms/libqwayland-generic.so",
        "wayland-shell-integration/libxdg-shell.so",
        "platforminputcontexts/libcomposeplatforminputcontextplugin.so",
        "platformthemes/libqxdgdesktopportal.so",
        "imageformats/libqsvg.so",
        "iconengines/libqsvgicon.so",
        "xcbglintegrations/libqxcb-glx-integration.so",
    ],
)
def test_plugins_a_linux_widgets_app_needs_are_kept(plugin: str) -> None:
    assert trim.is_kept_plugin(trim.QT_PLUGIN_PREFIX + plugin)


@pytest.mark.parametrize(
    "plugin",
    [
        "platforms/libqeglfs.so",
        "platforms/libqvnc.so",
        "platforms/libqlinuxfb.so",
        "platforms/libqminimal.so",
        "platformthemes/libqgtk3.so",
        "egldeviceintegrations/libqeglfs-x11-integration.so",
        "generic/libqevdevmouseplugin.so",
        "imageformats/libqtiff.so",
        "tls/libqopensslbackend.so",
        "sqldrivers/libqsqlite.so",
        "qmltooling/libqmldbg_debugger.so",
    ],
)
def test_plugins_the_app_never_loads_are_dropped(plugin: str) -> None:
    assert not trim.is_kept_plugin(trim.QT_PLUGIN_PREFIX + plugin)


# --- ELF reading and library pruning ------------------------------------------------------------------------


def _tiny_elf(needed: list[str], *, big_endian: bool = False) -> bytes:
    """A minimal 64-bit ELF: one PT_LOAD (vaddr 0x1000 -> offset 0), one PT_DYNAMIC, a string table."""
    end = ">" if big_endian else "<"
    strtab = b"\0" + b"".join(name.encode() + b"\0" for name in needed)
    offsets, pos = [], 1
    for name in needed:
        offsets.append(pos)
        pos += len(name) + 1
    ehdr_size, phdr_size = 64, 56
    strtab_off = ehdr_size + 2 * phdr_size
    dyn_off = strtab_off + len(strtab)
    dyn = b"".join(struct.pack(end + "qQ", 1, off) for off in offsets)
    dyn += struct.pack(end + "qQ", 5, 0x1000 + strtab_off) + struct.pack(end + "qQ", 0, 0)
    total = dyn_off + len(dyn)
    ident = b"\x7fELF" + bytes([2, 2 if big_endian else 1, 1]) + b"\0" * 9
    ehdr = ident + struct.pack(end + "HHIQQQIHHHHHH", 3, 62, 1, 0, ehdr_size, 0, 0, ehdr_size, phdr_size, 2,
                               64, 0, 0)
    load = struct.pack(end + "IIQQQQQQ", 1, 5, 0, 0x1000, 0x1000, total, total, 0x1000)
    dynamic = struct.pack(end + "IIQQQQQQ", 2, 6, dyn_off, 0x1000 + dyn_off, 0x1000 + dyn_off, len(dyn),
                          len(dyn), 8)
    return ehdr + load + dynamic + strtab + dyn


@pytest.mark.parametrize("big_endian", [False, True])
def test_elf_needed_reads_dt_needed_through_the_load_segments(tmp_path: Path, big_endian: bool) -> None:
    lib = tmp_path / "libfake.so"
    lib.write_bytes(_tiny_elf(["libQt6Core.so.6", "libc.so.6"], big_endian=big_endian))
    assert trim.elf_needed(lib) == ["libQt6Core.so.6", "libc.so.6"]


def test_elf_needed_of_a_non_elf_file_is_empty(tmp_path: Path) -> None:
    text = tmp_path / "notes.txt"
    text.write_text("not a library")
    assert trim.elf_needed(text) == []


@pytest.mark.skipif(shutil.which("readelf") is None, reason="readelf (binutils) is not installed")
def test_elf_needed_agrees_with_readelf_on_a_real_qt_extension() -> None:
    import PySide6

    module = next(Path(PySide6.__file__).parent.glob("QtGui*.so"))
    out = subprocess.run(["readelf", "-d", str(module)], capture_output=True, text=True, check=True).stdout
    expected = [line.split("[", 1)[1].rstrip("]") for line in out.splitlines() if "(NEEDED)" in line]
    assert expected and trim.elf_needed(module) == expected


def test_pruning_keeps_what_kept_binaries_link_to_transitively_and_drops_the_rest() -> None:
    lib = trim.QT_LIB_PREFIX
    binaries = [
        ("PySide6/QtGui.abi3.so", "/s/QtGui.abi3.so", "EXTENSION"),
        ("_cffi_backend.cpython-311-x86_64-linux-gnu.so", "/s/_cffi.so", "EXTENSION"),  # top-level extension
        (trim.QT_PLUGIN_PREFIX + "platforms/libqxcb.so", "/s/libqxcb.so", "BINARY"),
        (lib + "libQt6Gui.so.6", "/s/libQt6Gui.so.6", "BINARY"),
        (lib + "libQt6Core.so.6", "/s/libQt6Core.so.6", "BINARY"),
        (lib + "libicuuc.so.73", "/s/libicuuc.so.73", "BINARY"),
        (lib + "libQt6XcbQpa.so.6", "/s/libQt6XcbQpa.so.6", "BINARY"),
        (lib + "libQt6EglFSDeviceIntegration.so.6", "/s/libQt6Egl.so.6", "BINARY"),  # only eglfs needed it
        ("libgtk-3.so.0", "/s/libgtk-3.so.0", "BINARY"),  # only the GTK theme needed it
        ("libxkbcommon.so.0", "/s/libxkbcommon.so.0", "BINARY"),
        ("libpython3.11.so.1.0", "/s/libpython3.11.so.1.0", "BINARY"),  # loaded by the bootloader
        ("libQt6Core.so.6", "PySide6/Qt/lib/libQt6Core.so.6", "SYMLINK"),
        ("libQt6EglFSDeviceIntegration.so.6", "PySide6/Qt/lib/libQt6EglFSDeviceIntegration.so.6", "SYMLINK"),
    ]
    needed_of = {
        "/s/QtGui.abi3.so": ["libQt6Gui.so.6"],
        "/s/libqxcb.so": ["libQt6XcbQpa.so.6", "libxkbcommon.so.0"],
        "/s/libQt6Gui.so.6": ["libQt6Core.so.6"],
        "/s/libQt6Core.so.6": ["libicuuc.so.73", "libc.so.6"],
        "/s/libQt6XcbQpa.so.6": ["libQt6Gui.so.6"],
    }
    kept, dropped = trim.prune_unlinked_libraries(binaries, needed_of)
    assert {entry[0] for entry in dropped} == {
        lib + "libQt6EglFSDeviceIntegration.so.6",
        "libgtk-3.so.0",
        "libQt6EglFSDeviceIntegration.so.6",
    }
    assert len(kept) + len(dropped) == len(binaries)


def test_trim_drops_translations_qml_and_unneeded_plugins(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    def entry(dest: str, typecode: str, size: int) -> tuple[str, str, str]:
        src = tmp_path / dest.replace("/", "_")
        src.write_bytes(b"x" * size)  # not ELF: links to nothing
        return (dest, str(src), typecode)

    binaries = [
        entry("PySide6/QtCore.abi3.so", "EXTENSION", 10),
        entry(trim.QT_PLUGIN_PREFIX + "platforms/libqoffscreen.so", "BINARY", 20),
        entry(trim.QT_PLUGIN_PREFIX + "platforms/libqvnc.so", "BINARY", 30),
    ]
    datas = [
        entry(trim.QT_PREFIX + "translations/qtbase_de.qm", "DATA", 40),
        entry(trim.QT_PREFIX + "qml/QtQuick/qmldir", "DATA", 50),
        entry("desktop/core/chat/model_prices.json", "DATA", 60),
    ]
    kept_binaries, kept_datas = trim.trim(binaries, datas)
    assert [e[0] for e in kept_binaries] == [binaries[0][0], binaries[1][0]]
    assert [e[0] for e in kept_datas] == ["desktop/core/chat/model_prices.json"]
    out = capsys.readouterr().out
    assert "platforms/libqvnc.so" in out
    assert "collected files 0.0 MB -> 0.0 MB" in out  # sizes are reported (bytes here)


# --- data files ---------------------------------------------------------------------------------------------


def test_package_data_includes_the_model_price_table() -> None:
    pairs = trim.package_data_files(ROOT / "desktop", "desktop")
    assert (str(ROOT / "desktop" / "core" / "chat" / "model_prices.json"), "desktop/core/chat") in pairs
    assert not [src for src, _ in pairs if src.endswith((".py", ".pyc"))]


def test_resources_go_to_the_bundle_root_where_the_app_looks(capsys: pytest.CaptureFixture[str]) -> None:
    pairs = trim.resource_files(ROOT / "resources", "resources")
    dests = {(Path(src).name, dest) for src, dest in pairs}
    assert ("chatnodes.desktop", "resources") in dests
    assert ("chatnodes.svg", "resources/icons") in dests
    assert "WARNING" not in capsys.readouterr().out


def test_missing_resources_are_reported_not_fatal(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert trim.resource_files(tmp_path / "nope", "resources") == []
    assert "does not exist" in capsys.readouterr().out
    (tmp_path / "res").mkdir()
    (tmp_path / "res" / "style.qss").write_text("QWidget {}")
    assert len(trim.resource_files(tmp_path / "res", "resources")) == 1
    out = capsys.readouterr().out
    assert "chatnodes.desktop is missing" in out
    assert "chatnodes.svg or chatnodes.png is missing" in out


def test_desktop_entry_launches_the_bundle_binary() -> None:
    entry = (ROOT / "resources" / "chatnodes.desktop").read_text(encoding="utf-8").splitlines()
    assert entry[0] == "[Desktop Entry]"
    fields = dict(line.split("=", 1) for line in entry[1:] if "=" in line and not line.startswith("#"))
    assert fields["Type"] == "Application"
    assert fields["Name"] == "Chat Nodes"
    assert fields["Exec"].split()[0] == "chatnodes"
    assert fields["Icon"] == "chatnodes"
    assert fields["Terminal"] == "false"
    assert {"Development", "Utility"} <= set(fields["Categories"].strip(";").split(";"))


# --- scripts and diagnostics --------------------------------------------------------------------------------


@pytest.mark.parametrize("script", ["build.sh", "check.sh"])
def test_scripts_parse(script: str) -> None:
    subprocess.run(["bash", "-n", str(PACKAGING / script)], check=True)


_FAKE_PYTHON = r"""#!/usr/bin/env bash
# Stand-in interpreter: records its arguments; "-m venv DIR" makes a venv of stand-ins.
echo "python $*" >> "$FAKE_LOG"
if [[ "$1" == "-m" && "$2" == "venv" ]]; then
    mkdir -p "$3/bin" && cp "$0" "$3/bin/python" && cp "$FAKE_PYINSTALLER" "$3/bin/pyinstaller"
elif [[ "$1" == "-c" ]]; then
    exit 1  # the Qt-binding probe: "not installed"
elif [[ "$1" == "-" ]]; then
    cat > /dev/null
fi
"""

_FAKE_PYINSTALLER = r"""#!/usr/bin/env bash
echo "pyinstaller cwd=$PWD $*" >> "$FAKE_LOG"
while [[ $# -gt 0 ]]; do
    if [[ "$1" == "--distpath" ]]; then mkdir -p "$2/chatnodes" && touch "$2/chatnodes/chatnodes" \
        && chmod +x "$2/chatnodes/chatnodes"; fi
    shift
done
"""


def test_build_script_uses_its_own_venv_and_a_non_editable_install(tmp_path: Path) -> None:
    tree = tmp_path / "repo"
    (tree / "packaging").mkdir(parents=True)
    shutil.copy(PACKAGING / "build.sh", tree / "packaging" / "build.sh")
    (tree / "desktop").mkdir()
    (tree / "desktop" / "__init__.py").write_text("")
    (tree / "pyproject.toml").write_text("[project]\nname = 'chatnodes'\n")
    (tree / "README.md").write_text("readme")
    fakes = tmp_path / "fakes"
    fakes.mkdir()
    for name, text in (("python", _FAKE_PYTHON), ("pyinstaller", _FAKE_PYINSTALLER)):
        (fakes / name).write_text(text)
        (fakes / name).chmod(0o755)
    log = tmp_path / "calls.log"
    env = dict(os.environ, PYTHON=str(fakes / "python"), FAKE_LOG=str(log),
               FAKE_PYINSTALLER=str(fakes / "pyinstaller"))
    result = subprocess.run(["bash", str(tree / "packaging" / "build.sh")], capture_output=True, text=True,
                            env=env, timeout=60, check=False)
    assert result.returncode == 0, result.stdout + result.stderr
    calls = [line for line in log.read_text().splitlines() if line != "python --version"]
    venv = tree / ".venv-bundle"
    assert calls[0] == f"python -m venv {venv}"  # its own venv, never the dev one
    installs = [line for line in calls if " -m pip install " in line]
    assert len(installs) == 2
    assert all(" -e " not in line and "--editable" not in line for line in installs)
    staged = installs[0].rsplit(" ", 1)[1]
    assert staged.endswith("[bundle]") and not staged.startswith(str(tree))  # a staged copy, not the tree
    assert "--force-reinstall" in installs[1] and "--no-deps" in installs[1]
    (build,) = [line for line in calls if line.startswith("pyinstaller ")]
    assert f"cwd={tree / 'packaging'} " in build and build.endswith(" chatnodes.spec")
    assert f"--distpath {tree / 'dist'}" in build
    assert not (tree / "desktop" / "build").exists() and (tree / "dist" / "chatnodes" / "chatnodes").is_file()


def _run_entry(diag: str, *prefix: str, **env: str) -> subprocess.CompletedProcess[str]:
    """Run entry.py's diagnostic ``diag`` (behind ``prefix``), without the caller's session bus."""
    dropped = {"DBUS_SESSION_BUS_ADDRESS", "PYTHON_KEYRING_BACKEND"}
    full_env = {k: v for k, v in os.environ.items() if k not in dropped}
    full_env.update(CHATNODES_BUNDLE_DIAG=diag, **env)
    command = [*prefix, sys.executable, str(PACKAGING / "entry.py")]
    return subprocess.run(command, capture_output=True, text=True, env=full_env, timeout=60, check=False)


def test_keyring_diagnostic_reports_the_secret_service_backend() -> None:
    result = _run_entry("keyring")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "keyring-entry-points:" in result.stdout and "SecretService" in result.stdout
    assert "keyring.backends.SecretService.Keyring:" in result.stdout
    assert "keyring-backend: " in result.stdout


def test_qt_diagnostic_renders_the_svg_icon() -> None:
    result = _run_entry("qt", QT_QPA_PLATFORM="offscreen")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "svg" in result.stdout.split("qt-image-formats: ", 1)[1].split("\n", 1)[0].split(",")
    assert "-> 64x64" in result.stdout


def test_unknown_diagnostic_is_a_clear_error() -> None:
    result = _run_entry("nonsense")
    assert result.returncode == 2
    known = "(known: ijson, keyring, keyring-roundtrip, qt)"
    assert f"unknown CHATNODES_BUNDLE_DIAG value 'nonsense' {known}" in result.stderr


def test_ijson_diagnostic_reports_the_c_backend() -> None:
    result = _run_entry("ijson")
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.strip() == "ijson-backend: yajl2_c"


def test_entry_runs_the_import_subcommand_without_qt(tmp_path: Path) -> None:
    export = tmp_path / "conversations.json"
    export.write_text(json.dumps([{"uuid": "c-1", "name": "Hello", "chat_messages": [
        {"uuid": "m1", "sender": "human", "text": "hi", "content": [{"type": "text", "text": "hi"}]}]}]),
        encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM")}
    result = subprocess.run([sys.executable, str(PACKAGING / "entry.py"), "import", str(export), "--project",
                             str(tmp_path / "p")], capture_output=True, text=True, env=env, timeout=60,
                            check=False)
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.startswith("Imported 1 conversation (1 message)")


def test_keyring_roundtrip_diagnostic_fails_without_an_os_keyring(tmp_path: Path) -> None:
    result = _run_entry("keyring-roundtrip", HOME=str(tmp_path))
    assert result.returncode == 1, result.stdout + result.stderr
    assert "keyring-backend: keyring.backends.fail.Keyring" in result.stdout
    assert "keyring-roundtrip: failed (NoKeyringError" in result.stdout


@pytest.mark.skipif(
    shutil.which("dbus-run-session") is None or shutil.which("gnome-keyring-daemon") is None,
    reason="needs dbus-run-session and gnome-keyring-daemon (apt-get install gnome-keyring dbus-daemon)",
)
def test_keyring_roundtrip_diagnostic_through_a_private_gnome_keyring(tmp_path: Path) -> None:
    unlock = 'printf check | gnome-keyring-daemon --unlock --components=secrets >/dev/null 2>&1; exec "$@"'
    result = _run_entry("keyring-roundtrip", "dbus-run-session", "--", "sh", "-c", unlock, "sh",
                        HOME=str(tmp_path), XDG_DATA_HOME=str(tmp_path / "data"))
    assert result.returncode == 0, result.stdout + result.stderr
    assert "keyring-backend: keyring.backends.SecretService.Keyring" in result.stdout
    assert "keyring-roundtrip: ok" in result.stdout
