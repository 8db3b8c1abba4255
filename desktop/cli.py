"""The command line's Qt-free subcommands: ``import`` and ``export``.

``python -m desktop import FILE [--project DIR] [--replace] [--only ID ...] [--list]`` imports a
ChatGPT or Claude data export (``.zip``, unzipped folder or ``conversations.json``) or a Chat Nodes
export into a project folder and prints what it imported, skipped and could not import.
``python -m desktop export OUT [--project DIR] [--node ID_OR_TITLE ...]`` writes nodes of a project
(all by default, with their history archives) to a Chat Nodes export file.

Neither imports Qt: they run without a display (``desktop/__main__.py`` dispatches here before the
app is imported). The project's lock is respected: while a window holds the project, both say so
and exit with status 1 (export reads a consistent copy then, but never writes the project).
Exit status: 0 on success, 1 when anything failed (each failure is printed), 130 on Ctrl+C.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import logging
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TextIO

from desktop.core.files import FileLock
from desktop.core.importers import (
    ImportFailed,
    ImportOptions,
    ImportOutcome,
    ImportProgress,
    ProjectLockedError,
    export_nodes,
    import_into_project,
    preview_export,
)
from desktop.core.store import ProjectError, ProjectStore, is_parked

__all__ = ["SUBCOMMANDS", "default_project_dir", "main"]

log = logging.getLogger(__name__)

SUBCOMMANDS = ("import", "export")
"""First arguments of ``python -m desktop`` handled here instead of by the app."""
APP_ID = "chatnodes"


def default_project_dir() -> Path:
    """The "Default project" folder the app opens without a PROJECT_DIR (not created here)."""
    import platformdirs

    return Path(platformdirs.user_data_dir(APP_ID, appauthor=False)) / "Default project"


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m desktop", description="Chat Nodes without a window.")
    sub = parser.add_subparsers(dest="command", required=True)
    imp = sub.add_parser("import", help="import a ChatGPT, Claude or Chat Nodes export into a project",
                         description="Import a ChatGPT or Claude data export (.zip, unzipped folder or "
                                     "conversations.json) or a Chat Nodes export (.json) into a project.")
    imp.add_argument("file", type=Path, metavar="FILE")
    imp.add_argument("--project", type=Path, metavar="DIR",
                     help="project folder (created when missing; default: your 'Default project')")
    imp.add_argument("--replace", action="store_true",
                     help="import conversations that are already in the project again, replacing them")
    imp.add_argument("--only", nargs="+", metavar="ID", help="import only these conversations (original ids)")
    imp.add_argument("--list", action="store_true", help="only list the conversations (nothing is imported)")
    imp.add_argument("--config-dir", type=Path, metavar="DIR",
                     help="settings folder, for the history cap (default: $CHATNODES_CONFIG_DIR, else the "
                          "platform's config dir)")
    exp = sub.add_parser("export", help="export nodes of a project to a Chat Nodes export file")
    exp.add_argument("out", type=Path, metavar="OUT")
    exp.add_argument("--project", type=Path, metavar="DIR",
                     help="project folder (default: 'Default project')")
    exp.add_argument("--node", nargs="+", metavar="ID_OR_TITLE", help="export only these nodes")
    return parser


def _history_cap(config_dir: Path | None) -> int:
    from desktop.core.config import SettingsStore, default_config_dir

    folder = config_dir.expanduser() if config_dir is not None else Path(default_config_dir(os.environ))
    if not (folder / SettingsStore.FILE_NAME).is_file():
        return 200 * 1024
    return SettingsStore(folder).open().value.history_cap_bytes


def _locked_message(store: ProjectStore) -> str:
    pid = FileLock(store.lock_path).holder_pid()
    who = f"Chat Nodes (process {pid})" if pid is not None else "another Chat Nodes window"
    return (f"{store.folder} is open in {who}; close it there, or use File → Import… in that window, "
            "and try again. Nothing was imported.")


def _date(ms: int) -> str:
    if ms <= 0:
        return "          "
    return _dt.datetime.fromtimestamp(ms / 1000).strftime("%Y-%m-%d")


def _plural(n: int, word: str) -> str:
    return f"{n:,} {word}{'' if n == 1 else 's'}"


class _Progress:
    def __init__(self, out: TextIO) -> None:
        self.out = out
        self.live = out.isatty()

    def __call__(self, p: ImportProgress) -> None:
        if self.live:
            share = f" ({p.fraction:.0%})" if p.fraction is not None else ""
            self.out.write(f"\r  read {_plural(p.conversations, 'conversation')}{share}   ")
            self.out.flush()

    def done(self) -> None:
        if self.live:
            self.out.write("\r" + " " * 60 + "\r")
            self.out.flush()


def _list(args: argparse.Namespace, out: TextIO) -> int:
    preview = preview_export(args.file, progress=_Progress(sys.stderr))
    for e in preview.entries:
        print(f"  {_date(e.created_at)}  {e.title}  ({_plural(e.messages, 'message')}, "
              f"{e.branches:,} branch{'' if e.branches == 1 else 'es'})  id {e.original_id}", file=out)
    for notice in preview.notices:
        print(f"note: {notice}", file=out)
    for problem in preview.problems:
        print(f"error: {problem}", file=out)
    print(f"{_plural(len(preview.entries), 'conversation')} in {args.file} ({preview.format or 'unknown'})",
          file=out)
    return 1 if preview.problems else 0


def _print_outcome(outcome: ImportOutcome, folder: Path, out: TextIO) -> None:
    report = outcome.report
    total = sum(i.messages for i in report.imported)
    print(f"Imported {_plural(len(report.imported), 'conversation')} ({_plural(total, 'message')}) from "
          f"{report.path} ({report.format or 'unknown format'}) into {folder}", file=out)
    for item in report.imported:
        extra = f", {item.branches} branches" if item.branches > 1 else ""
        nodes = f", {len(item.node_ids)} nodes" if len(item.node_ids) > 1 else ""
        print(f"  + {item.title}  ({_plural(item.messages, 'message')}{extra}{nodes})", file=out)
    parked = sum(1 for n in outcome.nodes if is_parked(n))
    if parked:
        print(f"{_plural(len(outcome.nodes) - parked, 'node')} open (the most recent); the other {parked:,} "
              "are listed in the sidebar under Imported", file=out)
    if report.replaced_node_ids:
        print(f"Replaced {_plural(len(report.replaced_node_ids), 'node')} imported before", file=out)
    if report.skipped:
        print(f"Skipped {_plural(len(report.skipped), 'conversation')}:", file=out)
        for s in report.skipped:
            print(f"  - {s.title}  ({s.reason}; id {s.original_id})", file=out)
    for notice in outcome.notices:
        print(f"note: {notice}", file=out)
    if report.problems:
        print(f"Could not import ({len(report.problems)}):", file=out)
        for problem in report.problems:
            print(f"  ! {problem}", file=out)
    if report.cancelled:
        print("Cancelled: the conversations listed above were imported whole; the rest were not read.",
              file=out)


def _import(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    if args.list:
        return _list(args, out)
    folder = (args.project or default_project_dir()).expanduser()
    store = ProjectStore(folder, history_cap_bytes=_history_cap(args.config_dir))
    progress = _Progress(err)
    try:
        try:
            options = ImportOptions(replace=args.replace, only=args.only)
            outcome, saved = import_into_project(store, args.file, options=options, progress=progress)
        finally:
            progress.done()
    except ProjectLockedError:
        print(f"error: {_locked_message(store)}", file=err)
        return 1
    except ImportFailed as exc:
        print(f"error: {exc}", file=err)
        return 1
    except (ProjectError, OSError) as exc:
        print(f"error: the project could not be saved: {exc}; it is unchanged", file=err)
        return 1
    finally:
        store.release()
    _print_outcome(outcome, folder, out)
    if saved is not None:
        for notice in saved.notices:
            print(f"note: {notice}", file=out)
    return 0 if outcome.report.ok else 1


def _export(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    folder = (args.project or default_project_dir()).expanduser()
    if not (folder / "project.json").is_file():
        print(f"error: {folder} holds no project.json", file=err)
        return 1
    store = ProjectStore(folder)
    try:
        loaded = store.open()
        if loaded.error is not None:
            print(f"error: {store.path} could not be read ({loaded.error.reason})", file=err)
            return 1
        nodes = loaded.value.nodes
        if args.node:
            wanted = set(args.node)
            nodes = [n for n in nodes if n.id in wanted or n.title in wanted]
            missing = wanted - {n.id for n in nodes} - {n.title for n in nodes}
            if missing:
                print(f"error: no node {', '.join(sorted(missing))} in {folder}", file=err)
                return 1
        size = export_nodes(args.out, nodes, store.read_archive)
    except OSError as exc:
        print(f"error: could not write {args.out}: {exc.strerror or exc}", file=err)
        return 1
    finally:
        store.release()
    print(f"Exported {_plural(len(nodes), 'node')} of {folder} to {args.out} ({size / 1024:,.0f} KiB)",
          file=out)
    return 0


def main(argv: Sequence[str] | None = None, *, out: TextIO | None = None, err: TextIO | None = None) -> int:
    """Run a subcommand (``argv`` without the program name); returns the exit status."""
    out = out or sys.stdout
    err = err or sys.stderr
    args = _parser().parse_args(list(sys.argv[1:] if argv is None else argv))
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s: %(message)s")
    try:
        if args.command == "import":
            return _import(args, out, err)
        return _export(args, out, err)
    except KeyboardInterrupt:
        print("interrupted: nothing was saved", file=err)
        return 130
