"""Stand-ins for ``PyInstaller.utils.hooks`` (the functions chatnodes.spec calls), from installed metadata."""

from __future__ import annotations

import importlib
import importlib.metadata
import pkgutil
from collections.abc import Callable


def copy_metadata(name: str) -> list[tuple[str, str]]:
    """``[(metadata folder, dest)]`` of distribution ``name``; raises when it is missing, like PyInstaller."""
    dist = importlib.metadata.distribution(name)
    return [(str(dist.locate_file("")), f"{dist.metadata['Name']}-{dist.version}.dist-info")]


def collect_submodules(package: str, filter: Callable[[str], bool] = lambda name: True) -> list[str]:
    """``package`` and every module below it whose name passes ``filter``."""
    module = importlib.import_module(package)
    names = [package]
    if hasattr(module, "__path__"):
        names += [info.name for info in pkgutil.walk_packages(module.__path__, package + ".")]
    return [name for name in names if filter(name)]


def collect_entry_point(group: str) -> tuple[list[tuple[str, str]], list[str]]:
    """``(metadata datas, hidden imports)`` for every entry point of ``group``."""
    datas: list[tuple[str, str]] = []
    hidden: list[str] = []
    for ep in importlib.metadata.entry_points(group=group):
        hidden.append(ep.module)
        if ep.dist is not None:
            datas += copy_metadata(ep.dist.metadata["Name"])
    return sorted(set(datas)), sorted(set(hidden))
