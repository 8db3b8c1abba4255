"""Names of a package imported from their module on first use (PEP 562), and kept."""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["lazy_getattr"]


def lazy_getattr(package: str, table: Mapping[str, str], namespace: dict[str, Any]) -> Callable[[str], Any]:
    """A module ``__getattr__`` for ``package`` that imports each name of ``table`` when first used.

    Args:
        package: The package's ``__name__``.
        table: name -> the submodule (relative to ``package``) that defines it.
        namespace: The package's ``globals()``: a loaded name is kept there (no second lookup).

    Returns:
        The ``__getattr__`` to assign in the package.
    """

    def __getattr__(name: str) -> Any:  # noqa: N807 - the module hook's own name
        module = table.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(f"{package}.{module}"), name)
        namespace[name] = value
        return value

    return __getattr__
