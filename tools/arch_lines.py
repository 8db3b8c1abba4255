"""Refresh the `lines` column of docs/ARCHITECTURE.md's module tables and list modules missing from them.

Usage: python3 tools/arch_lines.py [--check]
Each table follows a line that starts with a package name in backticks (`desktop.core.chat`...).
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "ARCHITECTURE.md"
HEAD = re.compile(r"^`(desktop(?:\.[a-z_]+)*)`[ :]")
ROW = re.compile(r"^\| `([\w./]+\.py)` \| (\d+) \|")


def main() -> int:
    lines = DOC.read_text().splitlines(keepends=True)
    package: str | None = None
    seen: set[Path] = set()
    changed = 0
    for i, line in enumerate(lines):
        head = HEAD.match(line)
        if head:
            package = head.group(1)
            continue
        row = ROW.match(line)
        if row and package:
            path = ROOT / package.replace(".", "/") / row.group(1)
            if not path.is_file():
                print(f"missing module in the tree: {path.relative_to(ROOT)}")
                continue
            seen.add(path)
            count = sum(1 for _ in path.open())
            if count != int(row.group(2)):
                lines[i] = line.replace(f"| {row.group(2)} |", f"| {count} |", 1)
                changed += 1
    for path in sorted((ROOT / "desktop").rglob("*.py")):
        if path not in seen:
            print(f"not in the tables: {path.relative_to(ROOT)}")
    if "--check" not in sys.argv:
        DOC.write_text("".join(lines))
    print(f"{changed} line counts updated")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
