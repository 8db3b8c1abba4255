"""What the Chat Nodes bundle leaves out, and the TOC filter that does it (used by ``chatnodes.spec``).

Pure Python without PyInstaller imports, so ``tests/packaging`` can check the rules quickly. A TOC entry is
PyInstaller's ``(dest_name, src_name, typecode)`` tuple; ``dest_name`` is the path inside the bundle's
``_internal`` folder, e.g. ``PySide6/Qt/plugins/platforms/libqxcb.so``.

The trimming has three steps:

1. Qt data the app never reads: translations (the UI is English only) and QML (no Qt Quick).
2. Qt plugins outside :data:`KEPT_PLUGINS` (a widgets app on Linux needs the xcb/wayland/offscreen platforms,
   input contexts, the portal theme, SVG icons and images, nothing else).
3. Shared libraries under the Qt lib folder, or at the bundle's top level, that no kept binary links to any
   more (read from the ELF ``DT_NEEDED`` entries, transitively): dropping the eglfs plugin is what lets its
   ``libQt6EglFSDeviceIntegration`` go, for example. Only libraries are pruned this way; every Python
   extension module and every kept plugin is a root.
"""

from __future__ import annotations

import fnmatch
import struct
from collections.abc import Iterable, Sequence
from pathlib import Path, PurePosixPath

TocEntry = tuple[str, str, str]

#: Qt bindings qasync would probe; PyInstaller aborts when it finds two bindings.
OTHER_QT_BINDINGS: tuple[str, ...] = ("PyQt5", "PyQt6", "PySide2", "PyQt4")

#: The PySide6 modules the app may import. ``tests/packaging`` fails when ``desktop/`` imports another one.
KEPT_QT_MODULES: frozenset[str] = frozenset({"QtCore", "QtGui", "QtWidgets", "QtSvg", "QtSvgWidgets"})

#: PySide6 modules left out of the bundle (their hooks would drag in libraries, plugins and QML).
EXCLUDED_QT_MODULES: tuple[str, ...] = (
    "Qt3DAnimation", "Qt3DCore", "Qt3DExtras", "Qt3DInput", "Qt3DLogic", "Qt3DRender", "QtAxContainer",
    "QtBluetooth", "QtCharts", "QtConcurrent", "QtDataVisualization", "QtDBus", "QtDesigner", "QtGraphs",
    "QtGraphsWidgets", "QtHelp", "QtHttpServer", "QtLabsStyleKit", "QtLocation", "QtMultimedia",
    "QtMultimediaWidgets", "QtNetwork", "QtNetworkAuth", "QtNfc", "QtOpenGL", "QtOpenGLWidgets", "QtPdf",
    "QtPdfWidgets", "QtPositioning", "QtPrintSupport", "QtQml", "QtQmlFeatures", "QtQuick", "QtQuick3D",
    "QtQuickControls2", "QtQuickTest", "QtQuickWidgets", "QtRemoteObjects", "QtScxml", "QtSensors",
    "QtSerialBus", "QtSerialPort", "QtSpatialAudio", "QtSql", "QtStateMachine", "QtTest", "QtTextToSpeech",
    "QtUiTools", "QtWebChannel", "QtWebEngineCore", "QtWebEngineQuick", "QtWebEngineWidgets", "QtWebSockets",
    "QtWebView", "QtXml",
)

#: Every module the spec excludes.
EXCLUDED_MODULES: tuple[str, ...] = (
    *OTHER_QT_BINDINGS,
    *(f"PySide6.{name}" for name in EXCLUDED_QT_MODULES),
    "tkinter", "_tkinter", "turtle", "turtledemo", "idlelib", "lib2to3", "pydoc_data", "test",
)

QT_PREFIX = "PySide6/Qt/"
QT_PLUGIN_PREFIX = QT_PREFIX + "plugins/"
QT_LIB_PREFIX = QT_PREFIX + "lib/"

#: Qt plugins kept, as glob patterns relative to ``PySide6/Qt/plugins/``.
KEPT_PLUGINS: tuple[str, ...] = (
    "platforms/libqxcb.so",  # X11
    "platforms/libqwayland*.so",  # Wayland (generic, egl)
    "platforms/libqoffscreen.so",  # headless: --smoke-test, CI, screenshots
    "xcbglintegrations/*",  # GL on X11 (tiny; QMdiArea itself paints in software)
    "wayland-shell-integration/*",  # xdg-shell: without it a Wayland window never shows
    "wayland-decoration-client/*",  # client-side title bars on GNOME/Wayland
    "wayland-graphics-integration-client/*",
    "platforminputcontexts/*",  # compose key, IBus: typing accents and CJK into the chat input
    "platformthemes/libqxdgdesktopportal.so",  # native file dialogs via the portal; GTK3 theme would drag GTK
    "imageformats/libqsvg.so",  # PNG is built into QtGui
    # Attachments (issue 26): pasted and dropped photos are downscaled with QImage before a send.
    "imageformats/libqjpeg.so",
    "imageformats/libqgif.so",  # read only: a GIF is sent as its first frame
    "imageformats/libqwebp.so",
    "iconengines/libqsvgicon.so",
    "styles/*",
)

#: Qt data folders dropped whole.
DROPPED_DATA_PREFIXES: tuple[str, ...] = (QT_PREFIX + "translations/", QT_PREFIX + "qml/")

#: Libraries never pruned even when nothing links to them (loaded by the bootloader or with dlopen).
ALWAYS_KEPT_LIBRARIES: tuple[str, ...] = ("libpython*",)


def is_kept_plugin(dest: str) -> bool:
    """Return whether a Qt plugin path (``PySide6/Qt/plugins/<type>/<file>``) stays in the bundle."""
    rel = dest[len(QT_PLUGIN_PREFIX):]
    return any(fnmatch.fnmatchcase(rel, pattern) for pattern in KEPT_PLUGINS)


def elf_needed(path: str | Path) -> list[str]:
    """Return the ``DT_NEEDED`` library names of an ELF file (empty for a non-ELF file).

    Handles 32/64-bit and either byte order; reads the dynamic section through the program headers, mapping
    ``DT_STRTAB``'s virtual address to a file offset with the ``PT_LOAD`` segments.
    """
    data = Path(path).read_bytes()
    if data[:4] != b"\x7fELF":
        return []
    is64 = data[4] == 2
    end = "<" if data[5] == 1 else ">"
    if is64:
        phoff, = struct.unpack_from(end + "Q", data, 0x20)
        phentsize, phnum = struct.unpack_from(end + "HH", data, 0x36)
    else:
        phoff, = struct.unpack_from(end + "I", data, 0x1C)
        phentsize, phnum = struct.unpack_from(end + "HH", data, 0x2A)
    loads: list[tuple[int, int, int]] = []  # (vaddr, offset, filesz)
    dynamic: tuple[int, int] | None = None
    for i in range(phnum):
        base = phoff + i * phentsize
        if is64:
            fields = struct.unpack_from(end + "IIQQQQ", data, base)
            p_type, p_offset, p_vaddr, p_filesz = fields[0], fields[2], fields[3], fields[5]
        else:
            p_type, p_offset, p_vaddr, _paddr, p_filesz = struct.unpack_from(end + "IIIII", data, base)
        if p_type == 1:
            loads.append((p_vaddr, p_offset, p_filesz))
        elif p_type == 2:
            dynamic = (p_offset, p_filesz)
    if dynamic is None:
        return []
    entry_fmt = end + ("qQ" if is64 else "iI")
    entry_size = struct.calcsize(entry_fmt)
    needed_offsets: list[int] = []
    strtab_vaddr: int | None = None
    for off in range(dynamic[0], dynamic[0] + dynamic[1] - entry_size + 1, entry_size):
        tag, value = struct.unpack_from(entry_fmt, data, off)
        if tag == 0:
            break
        if tag == 1:
            needed_offsets.append(value)
        elif tag == 5:
            strtab_vaddr = value
    if strtab_vaddr is None:
        return []
    strtab = next(
        (off + strtab_vaddr - vaddr for vaddr, off, size in loads if vaddr <= strtab_vaddr < vaddr + size),
        strtab_vaddr,
    )
    names = []
    for rel in needed_offsets:
        start = strtab + rel
        names.append(data[start:data.index(b"\0", start)].decode())
    return names


def _is_prunable_library(entry: TocEntry) -> bool:
    dest, _src, typecode = entry
    if typecode != "BINARY":  # EXTENSION (Python extension modules) and anything else stays
        return False
    name = PurePosixPath(dest).name
    if any(fnmatch.fnmatchcase(name, pattern) for pattern in ALWAYS_KEPT_LIBRARIES):
        return False
    top_level_lib = "/" not in dest and ".so" in name
    return dest.startswith(QT_LIB_PREFIX) or top_level_lib


def prune_unlinked_libraries(
    binaries: Sequence[TocEntry], needed_of: dict[str, list[str]] | None = None
) -> tuple[list[TocEntry], list[TocEntry]]:
    """Drop the prunable libraries (Qt libs, top-level libs) that no kept binary needs, transitively.

    Args:
        binaries: The binaries TOC after plugin filtering.
        needed_of: ``DT_NEEDED`` names per source path; read from the files when absent (tests pass it).

    Returns:
        ``(kept, dropped)``. A ``SYMLINK`` entry goes with the library it names.
    """
    def needed(src: str) -> list[str]:
        if needed_of is not None:
            return needed_of.get(src, [])
        try:
            return elf_needed(src)
        except (OSError, struct.error, ValueError):
            return []

    files = [entry for entry in binaries if entry[2] != "SYMLINK"]
    by_name: dict[str, list[TocEntry]] = {}
    for entry in files:
        by_name.setdefault(PurePosixPath(entry[0]).name, []).append(entry)
    reached: set[TocEntry] = set()
    todo = [entry for entry in files if not _is_prunable_library(entry)]
    while todo:
        entry = todo.pop()
        if entry in reached:
            continue
        reached.add(entry)
        for lib in needed(entry[1]):
            todo.extend(by_name.get(lib, []))
    kept_names = {PurePosixPath(entry[0]).name for entry in reached}
    kept: list[TocEntry] = []
    dropped: list[TocEntry] = []
    for entry in binaries:
        if entry[2] == "SYMLINK":
            keep = PurePosixPath(entry[0]).name in kept_names or PurePosixPath(entry[1]).name in kept_names
        else:
            keep = entry in reached
        (kept if keep else dropped).append(entry)
    return kept, dropped


def _size(entries: Iterable[TocEntry]) -> int:
    total = 0
    for _dest, src, typecode in entries:
        if typecode == "SYMLINK":
            continue
        try:
            total += Path(src).stat().st_size
        except OSError:
            pass
    return total


def _mb(size: int) -> str:
    return f"{size / 1e6:.1f} MB"


def trim(
    binaries: Sequence[TocEntry], datas: Sequence[TocEntry], *, report: bool = True
) -> tuple[list[TocEntry], list[TocEntry]]:
    """Apply the three trimming steps to an Analysis' ``binaries`` and ``datas``.

    Args:
        binaries: ``a.binaries``.
        datas: ``a.datas``.
        report: Print what was dropped and the sizes before and after.

    Returns:
        The trimmed ``(binaries, datas)``.
    """
    before = _size(binaries) + _size(datas)
    kept_datas = [e for e in datas if not e[0].startswith(DROPPED_DATA_PREFIXES)]
    dropped_datas = [e for e in datas if e[0].startswith(DROPPED_DATA_PREFIXES)]
    dropped_plugins = [e for e in binaries if e[0].startswith(QT_PLUGIN_PREFIX) and not is_kept_plugin(e[0])]
    plugin_kept = [e for e in binaries if e not in set(dropped_plugins)]
    kept_binaries, dropped_libs = prune_unlinked_libraries(plugin_kept)
    after = _size(kept_binaries) + _size(kept_datas)
    if report:
        print(f"chatnodes trim: dropped {len(dropped_datas)} Qt data files ({_mb(_size(dropped_datas))})")
        print(f"chatnodes trim: dropped {len(dropped_plugins)} Qt plugins ({_mb(_size(dropped_plugins))}):")
        for dest, _src, _type in sorted(dropped_plugins):
            print(f"    {dest[len(QT_PLUGIN_PREFIX):]}")
        print(f"chatnodes trim: dropped {len(dropped_libs)} unlinked libraries ({_mb(_size(dropped_libs))}):")
        for dest, _src, _type in sorted(dropped_libs):
            print(f"    {dest}")
        print(f"chatnodes trim: collected files {_mb(before)} -> {_mb(after)}")
    return kept_binaries, kept_datas


def package_data_files(pkg_dir: Path, dest_pkg: str) -> list[tuple[str, str]]:
    """Return ``(src, dest_dir)`` pairs for every non-Python file an installed package ships."""
    pairs = []
    for path in sorted(pkg_dir.rglob("*")):
        if not path.is_file() or path.suffix in {".py", ".pyc", ".pyi"} or "__pycache__" in path.parts:
            continue
        rel_dir = path.parent.relative_to(pkg_dir)
        pairs.append((str(path), str(PurePosixPath(dest_pkg, *rel_dir.parts))))
    return pairs


#: Files of ``resources/`` the bundle is expected to carry; absence is reported, not fatal.
EXPECTED_RESOURCES: tuple[str, ...] = ("chatnodes.desktop", "chatnodes.svg|chatnodes.png")


def resource_files(resources_dir: Path, dest: str, *, report: bool = True) -> list[tuple[str, str]]:
    """Return ``(src, dest_dir)`` pairs for ``resources/`` and say which expected resources are missing."""
    if not resources_dir.is_dir():
        if report:
            print(f"chatnodes.spec: WARNING: {resources_dir} does not exist: the bundle ships without icon, "
                  "style sheet or desktop entry")
        return []
    pairs = []
    for path in sorted(resources_dir.rglob("*")):
        if path.is_file() and "__pycache__" not in path.parts:
            rel_dir = path.parent.relative_to(resources_dir)
            pairs.append((str(path), str(PurePosixPath(dest, *rel_dir.parts))))
    if report:
        names = {PurePosixPath(src).name for src, _ in pairs}
        for expected in EXPECTED_RESOURCES:
            if not names & set(expected.split("|")):
                print(f"chatnodes.spec: WARNING: resources/{expected.replace('|', ' or ')} is missing: "
                      "the bundle ships without it")
    return pairs
