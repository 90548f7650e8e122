"""The import graph of verihub's packages, read from the source (ast), and its layering rules.

    python scripts/import_graph.py            print rule violations (exit 1 if any)
    python scripts/import_graph.py --mermaid  print the room diagram used in docs/architecture.md

Edges are the imports a module executes: module-level and function-level imports count (a lazy
import is still an arrow), imports under ``if TYPE_CHECKING:`` do not (they never run).
``from pkg import name`` is an edge to ``pkg.name`` when that is a module, else to ``pkg``.
The rules (tested by tests/hub/test_import_graph.py):

1. no cycle between modules;
2. ``graders`` imports nothing from ``hub`` or ``leaderboard``;
3. only ``hub.cli``, ``hub.client`` and ``hub.server`` import ``leaderboard``; ``leaderboard``
   imports only the public ``__init__`` surfaces of ``hub`` rooms, never their modules;
4. the rooms of ``hub`` import only rooms below them in :data:`ROOMS`, and nothing but
   ``python -m hub`` (``hub.__main__``) imports ``hub.cli`` (the top layer);
5. a room imports another room (``leaderboard`` counts as one) only through its package, the
   ``__init__`` surface: ``from hub.run import RunDir``, never ``from hub.run.rundir import RunDir``
   nor ``import hub.run.rundir``; ``from hub.env import types`` names a module, so it reaches in
   too. A name that is also one of the room's module names (``hub.run.evaluate.evaluate``) cannot
   sit on the surface (importing the submodule would replace it there) and is imported from its
   module; :data:`SURFACE_EXCEPTIONS` lists the few modules imported as modules, with the reason.
   The rooms of ``hub.server`` (:data:`SERVER_ROOMS`) are held to the same rule among themselves
   and from the server's own modules (``app``, ``worker``, ...), except where
   :data:`COMPOSITION_ROOTS` says a module wires other rooms' modules together. Inside a room,
   modules import their siblings directly.
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Iterable, Mapping
from pathlib import Path

__all__ = [
    "ROOMS",
    "COMPOSITION_ROOTS",
    "SERVER_ROOMS",
    "SURFACE_EXCEPTIONS",
    "build_graph",
    "find_cycles",
    "mermaid",
    "reach_ins",
    "room_of",
    "violations",
]

PACKAGES = ("graders", "hub", "leaderboard")
# low to high: a room may import the rooms before it (hub.version and the hub package root sit
# beside hub.env at the bottom; the root only re-exports hub.env).
ROOMS = (
    "hub.env",
    "hub.sandbox",
    "hub.registry",
    "hub.run",
    "hub.train",
    "hub.review",
    "hub.client",
    "hub.server",
    "hub.cli",
)
# the rooms inside hub.server (rule 5 holds between them as between the rooms of hub)
SERVER_ROOMS = tuple(
    f"hub.server.{name}" for name in ("core", "accounts", "web", "packages", "reviews", "results", "bounties")
)
# modules that may import other rooms' modules as modules (rule 5), each with the reason
COMPOSITION_ROOTS = {
    "hub.server.app": "the app mounts each room's route modules (api, pages, index, ...) as namespaces",
    "hub.server.worker": "the worker drives two queues with the same verbs (hub_evals.claim, reverify.claim)",
}
# modules another room may import as modules (rule 5), each with the reason; keep it short.
SURFACE_EXCEPTIONS = {
    # one function, called as ``aio.run(coro)``; a bare ``run`` on hub.env's surface would read as
    # running an environment.
    "hub.env.aio": "the event-loop runner, used as a namespace (aio.run)",
}


def _module_name(root: Path, path: Path) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _imports(tree: ast.AST) -> Iterable[tuple[str, tuple[str, ...]]]:
    """(module, names) for every executed import; TYPE_CHECKING blocks are skipped."""
    stack: list[ast.AST] = [tree]
    while stack:
        node = stack.pop()
        if isinstance(node, ast.If) and _is_type_checking(node.test):
            stack.extend(node.orelse)
            continue
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, ()
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            yield node.module, tuple(a.name for a in node.names)
        stack.extend(ast.iter_child_nodes(node))


def _files(root: Path, packages: Iterable[str]) -> dict[str, Path]:
    return {
        _module_name(root, p): p
        for pkg in packages
        if (root / pkg).is_dir()
        for p in (root / pkg).rglob("*.py")
    }


def build_graph(root: Path, packages: Iterable[str] = PACKAGES) -> dict[str, set[str]]:
    """Module -> the project modules it imports, for every module of ``packages`` under ``root``."""
    files = _files(root, packages)
    graph: dict[str, set[str]] = {name: set() for name in files}
    for name, path in files.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for module, names in _imports(tree):
            targets = [f"{module}.{n}" for n in names if f"{module}.{n}" in files]
            if len(targets) < len(names) or not names:
                targets.append(module)
            graph[name].update(t for t in targets if t in files and t != name)
    return graph


def find_cycles(graph: Mapping[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    out: list[list[str]] = []
    counter = 0

    def visit(v: str) -> None:
        nonlocal counter
        index[v] = low[v] = counter
        counter += 1
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    sys.setrecursionlimit(max(sys.getrecursionlimit(), 10_000))
    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def room_of(module: str) -> str | None:
    """The room of a ``hub`` module (``hub.run.runner`` -> ``hub.run``); None outside the rooms."""
    for room in ROOMS:
        if module == room or module.startswith(room + "."):
            return room
    return None


def _rank(module: str) -> int:
    room = room_of(module)
    if room is not None:
        return ROOMS.index(room)
    return 0 if module in ("hub", "hub.version") else -1


def violations(graph: Mapping[str, set[str]]) -> list[str]:
    """Every broken rule, one line each (empty when the layering holds)."""
    problems = [f"import cycle: {' -> '.join(c)}" for c in find_cycles(graph)]
    for src in sorted(graph):
        for dst in sorted(graph[src]):
            top_src, top_dst = src.split(".")[0], dst.split(".")[0]
            if top_src == "graders" and top_dst in ("hub", "leaderboard"):
                problems.append(f"graders must not import {top_dst}: {src} -> {dst}")
            if (
                top_dst == "leaderboard"
                and top_src == "hub"
                and room_of(src) not in ("hub.cli", "hub.client", "hub.server")
            ):
                problems.append(f"only hub.cli, hub.client and hub.server import leaderboard: {src} -> {dst}")
            if top_src == "leaderboard" and top_dst == "hub" and dst not in ("hub", *ROOMS):
                problems.append(f"leaderboard imports hub's public room surfaces only: {src} -> {dst}")
            if top_src == "hub" and top_dst == "hub":
                if room_of(dst) == "hub.cli" and room_of(src) != "hub.cli" and src != "hub.__main__":
                    problems.append(f"nothing imports hub.cli: {src} -> {dst}")
                elif _rank(dst) > _rank(src) and src != "hub" and src != "hub.__main__":
                    room = room_of(src) or src
                    problems.append(f"{room} must not import the higher room {room_of(dst)}: {src} -> {dst}")
    return problems


def _surface_of(module: str) -> str | None:
    """The room whose package is ``module``'s surface: a ``hub`` room, or ``leaderboard``."""
    if module == "leaderboard" or module.startswith("leaderboard."):
        return "leaderboard"
    for room in SERVER_ROOMS:
        if module == room or module.startswith(room + "."):
            return room
    return room_of(module)


def reach_ins(root: Path, packages: Iterable[str] = PACKAGES) -> list[str]:
    """Executed imports from one room into another that name a module instead of the room (rule 5)."""
    files = _files(root, packages)
    problems = []
    for src, path in sorted(files.items()):
        src_room = _surface_of(src)
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for module, names in _imports(tree):
            room = _surface_of(module)
            if room is None or room == src_room or module in SURFACE_EXCEPTIONS:
                continue
            if not names:  # import hub.run.rundir
                if module != room:
                    problems.append(f"{src} reaches into {room}: import {module}")
                continue
            for name in names:
                submodule = f"{room}.{name}"
                if module == room:  # a composition root may name a server room's module
                    as_namespace = src in COMPOSITION_ROOTS and room in SERVER_ROOMS
                    bad = submodule in files and submodule not in SURFACE_EXCEPTIONS and not as_namespace
                else:  # a name shadowed by a submodule of the room is imported from its module
                    bad = submodule not in files
                if bad:
                    problems.append(f"{src} reaches into {room}: from {module} import {name}")
    return problems


def mermaid(graph: Mapping[str, set[str]]) -> str:
    """A Mermaid flowchart of the rooms (and graders, leaderboard) with the imports between them."""

    def node(module: str) -> str | None:
        top = module.split(".")[0]
        if top in ("graders", "leaderboard"):
            return top
        return room_of(module)

    edges = sorted(
        {
            (a, b)
            for src, dsts in graph.items()
            for dst in dsts
            if (a := node(src)) and (b := node(dst)) and a != b
        }
    )
    lines = ["flowchart BT"]
    lines += [f"    {a.replace('.', '_')}[{a}] --> {b.replace('.', '_')}[{b}]" for a, b in edges]
    return "\n".join(lines)


def main(argv: list[str]) -> int:
    root = Path(__file__).resolve().parent.parent
    graph = build_graph(root)
    if "--mermaid" in argv:
        print(mermaid(graph))
        return 0
    problems = violations(graph) + reach_ins(root)
    print(
        "\n".join(problems)
        if problems
        else f"import graph ok: {len(graph)} modules, no cycle, layering holds, rooms meet at surfaces"
    )
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
