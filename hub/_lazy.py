"""Lazy room surfaces: a room's ``__init__`` names what it exports without importing it yet.

A room whose modules are heavy (the server's web stack, the sandbox, the HTTP client) keeps its
``__init__`` cheap so that ``verihub --help`` and light commands do not pay for it::

    from typing import TYPE_CHECKING

    from hub._lazy import surface

    if TYPE_CHECKING:  # what mypy and readers see; the same names as the map below
        from hub.run.rundir import RunDir

    __all__ = ["RunDir"]
    __getattr__, __dir__ = surface(__name__, {"RunDir": "hub.run.rundir"})

The first ``from hub.run import RunDir`` imports :mod:`hub.run.rundir` (PEP 562). The value is
read from its module at every look-up (a dictionary and ``sys.modules`` hit), never copied onto
the package, so what a test patches on the module is what every room sees. A name that is also
a submodule of the package cannot be exported (the submodule's import would replace it there).
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping

__all__ = ["surface"]


def surface(
    package: str, exports: Mapping[str, str]
) -> tuple[Callable[[str], object], Callable[[], list[str]]]:
    """``(__getattr__, __dir__)`` for ``package``, each name of ``exports`` read from its module."""
    table = dict(exports)

    def __getattr__(name: str) -> object:
        module = table.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        return getattr(importlib.import_module(module), name)

    def __dir__() -> list[str]:
        return sorted(set(vars(sys.modules[package])) | set(table))

    return __getattr__, __dir__
