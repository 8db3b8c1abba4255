"""Print the package import table of docs/ARCHITECTURE.md ("Import graph between packages").

Usage: python3 tools/import_table.py [REPO]

Every ``import`` / ``from … import`` statement under ``desktop/`` counts (module-level, function-level
and ``TYPE_CHECKING`` alike). A package is a subpackage of ``desktop.core`` or ``desktop.ui``; the
modules directly in those two folders count as ``desktop.core`` / ``desktop.ui``.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path


def package_of(root: Path, module: str) -> str:
    """The package a dotted module name is counted under."""
    parts = module.split(".")
    if parts[:2] in (["desktop", "core"], ["desktop", "ui"]):
        if len(parts) >= 3 and (root / parts[1] / parts[2]).is_dir():
            return ".".join(parts[:3])
        return ".".join(parts[:2])
    return ".".join(parts[:2])


def existing(repo: Path, dotted: str) -> str | None:
    """The longest prefix of ``dotted`` that is a module or package of the tree."""
    parts = dotted.split(".")
    while parts:
        path = repo.joinpath(*parts)
        if path.is_dir() or path.with_suffix(".py").is_file():
            return ".".join(parts)
        parts = parts[:-1]
    return None


def imported(tree: ast.AST, parts: list[str], is_package: bool) -> list[str]:
    """The dotted names one module's statements import (``from m import n`` gives ``m`` and ``m.n``)."""
    names: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = parts if is_package else parts[:-1]
                base = base[: len(base) - (node.level - 1)]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module or ""
            names.append(module)
            names.extend(f"{module}.{alias.name}" for alias in node.names)
        elif isinstance(node, ast.Import):
            names.extend(alias.name for alias in node.names)
    return names


def main() -> None:
    repo = Path(sys.argv[1] if len(sys.argv) > 1 else ".").resolve()
    root = repo / "desktop"
    edges: dict[str, set[str]] = {}
    for path in sorted(root.rglob("*.py")):
        parts = list(path.relative_to(repo).with_suffix("").parts)
        is_package = parts[-1] == "__init__"
        if is_package:
            parts = parts[:-1]
        source = package_of(root, ".".join(parts))
        targets = edges.setdefault(source, set())
        for name in imported(ast.parse(path.read_text()), parts, is_package):
            found = existing(repo, name) if name.startswith("desktop.") else None
            if found is not None:
                target = package_of(root, found)
                if target not in (source, "desktop"):
                    targets.add(target)
    for source in sorted(edges):
        if source == "desktop":
            continue
        listed = ", ".join(f"`{t}`" for t in sorted(edges[source])) or "(nothing in desktop)"
        print(f"| `{source}` | {listed} |")


if __name__ == "__main__":
    main()
