"""Each room's ``__init__`` surface: every exported name resolves to its module's own object.

Lazy surfaces (:mod:`hub._lazy`) name their exports twice, in the ``surface(...)`` map that runs
and under ``TYPE_CHECKING`` for mypy; the two must agree, and no export may share its name with
a submodule (the submodule's import would replace it on the package; an eager ``__init__``
like leaderboard's rebinds it after the import).
"""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pytest

from tests.hub.test_import_graph import ig

ROOT = Path(__file__).resolve().parents[2]
# the rooms the import graph holds to their surfaces: every hub room but the top one, the rooms
# inside hub.server, and leaderboard
ROOMS = [*(room for room in ig.ROOMS if room != "hub.cli"), *ig.SERVER_ROOMS, "leaderboard"]


def _declared(room: str) -> tuple[dict[str, str], dict[str, str]]:
    """(the lazy map, the names imported under TYPE_CHECKING) of a room's ``__init__``."""
    tree = ast.parse((ROOT / room.replace(".", "/") / "__init__.py").read_text(encoding="utf-8"))
    lazy: dict[str, str] = {}
    typed: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "surface":
            table = node.args[1]
            assert isinstance(table, ast.Dict)
            for key, value in zip(table.keys, table.values, strict=True):
                assert isinstance(key, ast.Constant) and isinstance(value, ast.Constant)
                lazy[str(key.value)] = str(value.value)
        if isinstance(node, ast.If) and getattr(node.test, "id", None) == "TYPE_CHECKING":
            for stmt in node.body:
                if isinstance(stmt, ast.ImportFrom) and stmt.module:
                    typed.update({a.asname or a.name: stmt.module for a in stmt.names})
    return lazy, typed


@pytest.mark.parametrize("room", ROOMS)
def test_every_export_is_its_modules_object(room: str) -> None:
    package = importlib.import_module(room)
    lazy, typed = _declared(room)
    assert lazy == typed, "the surface(...) map and the TYPE_CHECKING imports differ"
    assert set(lazy) <= set(package.__all__)
    for name in package.__all__:
        value = getattr(package, name)
        if name in lazy:
            assert not (ROOT / room.replace(".", "/") / f"{name}.py").exists(), f"{name} is a submodule"
            assert value is getattr(importlib.import_module(lazy[name]), name)
    assert set(package.__all__) <= set(dir(package))


def test_a_lazy_surface_reads_the_module_at_each_look_up(monkeypatch: pytest.MonkeyPatch) -> None:
    import hub.run
    import hub.run.rundir

    sentinel = object()
    monkeypatch.setattr(hub.run.rundir, "RunDir", sentinel)
    from hub.run import RunDir

    assert RunDir is sentinel
    with pytest.raises(AttributeError, match="no attribute 'nothing_here'"):
        hub.run.nothing_here  # noqa: B018
