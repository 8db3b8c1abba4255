"""Count the UI tests driven by real input (issue 31 item 3): a dev script, not part of ``desktop``.

A test function in ``tests/ui/**`` counts when its body reaches real input, directly or through
helper functions defined in ``tests/ui`` (followed transitively by name, across the support modules
it imports from):

* pytest-qt / QTest input: ``mouseClick``, ``mouseDClick``, ``mousePress``, ``mouseRelease``,
  ``keyClick``, ``keyClicks``, ``keyPress``, ``keyRelease``, ``keySequence``, ``keyEvent``,
  ``sendKeyEvent`` (as ``qtbot.X`` or ``QTest.X``);
* a synthesized input event the widget receives as from the platform: ``QKeyEvent``,
  ``QMouseEvent``, ``QWheelEvent``, ``QDropEvent``, ``QDragEnterEvent``, ``QContextMenuEvent``.

``QAction.trigger()``, ``button.click()``, ``submit()`` and the like are method calls, not input: they
do not count. Usage::

    python tools/count_ui_input.py            # the working tree
    python tools/count_ui_input.py --rev main # a commit, read with git (no checkout)
    python tools/count_ui_input.py --list     # also print each test and whether it counts
    python tools/count_ui_input.py --direct   # only input called in the test's own body
"""

from __future__ import annotations

import argparse
import ast
import subprocess
import sys
from collections.abc import Iterable
from pathlib import Path

INPUT_CALLS = frozenset({
    "mouseClick", "mouseDClick", "mousePress", "mouseRelease", "keyClick", "keyClicks", "keyPress",
    "keyRelease", "keySequence", "keyEvent", "sendKeyEvent",
})
INPUT_EVENTS = frozenset({
    "QKeyEvent", "QMouseEvent", "QWheelEvent", "QDropEvent", "QDragEnterEvent", "QContextMenuEvent",
})
ROOT = Path(__file__).resolve().parent.parent
FOLDER = "tests/ui"


def _sources(rev: str | None) -> dict[str, str]:
    """Path -> source of every ``.py`` file under ``tests/ui``, from the tree or from ``rev``."""
    if rev is None:
        return {str(p.relative_to(ROOT)): p.read_text(encoding="utf-8")
                for p in sorted((ROOT / FOLDER).rglob("*.py"))}
    names = subprocess.run(["git", "ls-tree", "-r", "--name-only", rev, FOLDER], cwd=ROOT, check=True,
                           capture_output=True, text=True).stdout.split()
    return {name: subprocess.run(["git", "show", f"{rev}:{name}"], cwd=ROOT, check=True,
                                 capture_output=True, text=True).stdout
            for name in sorted(names) if name.endswith(".py")}


def _called_names(node: ast.AST) -> set[str]:
    """The simple names and attribute names called anywhere inside ``node``."""
    names: set[str] = set()
    for sub in ast.walk(node):
        if isinstance(sub, ast.Call):
            func = sub.func
            if isinstance(func, ast.Name):
                names.add(func.id)
            elif isinstance(func, ast.Attribute):
                names.add(func.attr)
    return names


def _functions(tree: ast.Module) -> Iterable[ast.FunctionDef | ast.AsyncFunctionDef]:
    for sub in ast.walk(tree):
        if isinstance(sub, ast.FunctionDef | ast.AsyncFunctionDef):
            yield sub


def count(rev: str | None, *, direct: bool = False) -> tuple[list[tuple[str, bool]], int]:
    """Every test (``path::name``) with whether it is driven by real input, and how many are
    (``direct``: only input called in the test's own body, no helpers followed)."""
    trees = {path: ast.parse(text, filename=path) for path, text in _sources(rev).items()}
    # Helpers by name (tests/ui defines each helper name once or, if twice, alike enough).
    helpers: dict[str, set[str]] = {}
    for tree in trees.values():
        for fn in _functions(tree):
            if not fn.name.startswith("test_"):
                helpers.setdefault(fn.name, set()).update(_called_names(fn))
    driven: set[str] = set()
    changed = not direct
    while changed:  # transitive closure over helper calls
        changed = False
        for name, calls in helpers.items():
            if name not in driven and calls & (INPUT_CALLS | INPUT_EVENTS | driven):
                driven.add(name)
                changed = True
    results: list[tuple[str, bool]] = []
    for path, tree in trees.items():
        if not Path(path).name.startswith("test_"):
            continue
        for fn in _functions(tree):
            if fn.name.startswith("test_"):
                calls = _called_names(fn)
                results.append((f"{path}::{fn.name}", bool(calls & (INPUT_CALLS | INPUT_EVENTS | driven))))
    return results, sum(1 for _, hit in results if hit)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rev", help="count at this git revision instead of the working tree")
    parser.add_argument("--list", action="store_true", help="print every test and whether it counts")
    parser.add_argument("--direct", action="store_true", help="count input in the test's own body only")
    args = parser.parse_args(argv)
    results, hits = count(args.rev, direct=args.direct)
    if args.list:
        for name, hit in results:
            print(("input  " if hit else "method ") + name)
    total = len(results)
    share = 100 * hits / total if total else 0.0
    print(f"{hits} of {total} UI tests driven by real input ({share:.0f} %)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
