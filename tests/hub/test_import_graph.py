"""The layering of hub, graders and leaderboard, read from the source (scripts/import_graph.py).

The first test checks the real tree; the others build small trees that break each rule and show
that the checker reports them, so the first test can fail when someone adds such an import.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _load() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "verihub_import_graph", ROOT / "scripts" / "import_graph.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


ig = _load()


def _tree(tmp_path: Path, files: dict[str, str]) -> dict[str, set[str]]:
    for rel, text in files.items():
        path = tmp_path / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    for pkg in ("hub", "graders", "leaderboard"):
        for folder in [tmp_path / pkg, *(p for p in (tmp_path / pkg).rglob("*") if p.is_dir())]:
            if folder.is_dir() and not (folder / "__init__.py").exists():
                (folder / "__init__.py").write_text("", encoding="utf-8")
    graph: dict[str, set[str]] = ig.build_graph(tmp_path)
    return graph


@pytest.mark.slow
def test_the_repository_has_no_cycle_and_keeps_its_layering() -> None:
    graph = ig.build_graph(ROOT)
    assert len(graph) > 100  # the whole tree was read
    assert "hub.run.runner" in graph and {"hub.env", "hub.run.rundir"} <= graph["hub.run.runner"]
    assert ig.violations(graph) == []
    assert ig.reach_ins(ROOT) == []


def test_a_cycle_is_reported(tmp_path: Path) -> None:
    graph = _tree(
        tmp_path,
        {
            "hub/run/a.py": "from hub.run.b import x\n",
            "hub/run/b.py": "def f():\n    from hub.run.a import y  # a lazy import is still an arrow\n",
        },
    )
    assert any(p.startswith("import cycle: hub.run.a -> hub.run.b") for p in ig.violations(graph))


def test_type_checking_imports_are_not_arrows(tmp_path: Path) -> None:
    graph = _tree(
        tmp_path,
        {
            "hub/env/a.py": (
                "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from hub.env.b import B\n"
            ),
            "hub/env/b.py": "from hub.env.a import A\n",
        },
    )
    assert ig.violations(graph) == []


@pytest.mark.parametrize(
    ("files", "expected"),
    [
        ({"graders/g.py": "import hub.env.types\n", "hub/env/types.py": ""}, "graders must not import hub"),
        (
            {"hub/run/r.py": "from leaderboard import board\n", "leaderboard/board.py": ""},
            "only hub.cli, hub.client and hub.server import leaderboard",
        ),
        (
            {"leaderboard/x.py": "from hub.run.rundir import RunDir\n", "hub/run/rundir.py": ""},
            "leaderboard imports hub's public room surfaces only",
        ),
        (
            {"hub/env/e.py": "from hub.run.runner import Runner\n", "hub/run/runner.py": ""},
            "hub.env must not import the higher room hub.run",
        ),
        (
            {"hub/review/s.py": "import hub.cli.app\n", "hub/cli/app.py": ""},
            "nothing imports hub.cli",
        ),
    ],
)
def test_each_forbidden_edge_is_reported(tmp_path: Path, files: dict[str, str], expected: str) -> None:
    problems = ig.violations(_tree(tmp_path, files))
    assert any(expected in p for p in problems), problems


def test_allowed_edges_pass(tmp_path: Path) -> None:
    graph = _tree(
        tmp_path,
        {
            "hub/cli/c.py": "from leaderboard import board\nfrom hub.run.runner import Runner\n",
            "hub/run/runner.py": "from hub.env.types import Task\nfrom graders.grade import Grade\n",
            "hub/env/types.py": "",
            "graders/grade.py": "",
            "leaderboard/board.py": "from hub.run import RunDir\n",
        },
    )
    assert ig.violations(graph) == []


@pytest.mark.parametrize(
    ("files", "expected"),
    [
        (
            {"hub/run/r.py": "from hub.env.types import Task\n", "hub/env/types.py": ""},
            "hub.run.r reaches into hub.env: from hub.env.types import Task",
        ),
        (
            {"hub/run/r.py": "from hub.env import types\n", "hub/env/types.py": ""},
            "hub.run.r reaches into hub.env: from hub.env import types",
        ),
        (
            {"hub/run/r.py": "import hub.env.types as t\n", "hub/env/types.py": ""},
            "hub.run.r reaches into hub.env: import hub.env.types",
        ),
        (
            {
                "hub/server/s/x.py": "def f():\n    from leaderboard.board import Board\n",
                "leaderboard/board.py": "",
            },
            "hub.server.s.x reaches into leaderboard: from leaderboard.board import Board",
        ),
        (  # the rooms inside hub.server meet at their surfaces too
            {
                "hub/server/results/api.py": "from hub.server.core.db import sessions\n",
                "hub/server/core/db.py": "",
            },
            "hub.server.results.api reaches into hub.server.core: from hub.server.core.db import sessions",
        ),
        (  # the server's own modules as well; a composition root may name modules, not reach in
            {
                "hub/server/app.py": "from hub.server.core.config import HubConfig\n",
                "hub/server/core/config.py": "",
            },
            "hub.server.app reaches into hub.server.core: from hub.server.core.config import HubConfig",
        ),
    ],
)
def test_reaching_into_another_room_is_reported(tmp_path: Path, files: dict[str, str], expected: str) -> None:
    _tree(tmp_path, files)
    problems = ig.reach_ins(tmp_path)
    assert expected in problems, problems


def test_surfaces_siblings_and_shadowed_names_pass(tmp_path: Path) -> None:
    _tree(
        tmp_path,
        {
            "hub/run/r.py": (
                "from typing import TYPE_CHECKING\n"
                "from hub.env import Task\n"
                "from hub.run.s import helper\n"  # a sibling inside the room
                "from hub.env.grade import grade  # the name is a module's name\n"
                "from hub.env.aio import run\n"
                "if TYPE_CHECKING:\n    from hub.env.types import State\n"
            ),
            "hub/run/s.py": "",
            "hub/env/types.py": "",
            "hub/env/grade.py": "",
            "hub/env/aio.py": "",
        },
    )
    assert ig.reach_ins(tmp_path) == []


def test_a_composition_root_may_import_server_rooms_modules_as_namespaces(tmp_path: Path) -> None:
    files = {"hub/server/results/api.py": "", "hub/server/core/config.py": ""}
    root_line = "from hub.server.results import api\nfrom hub.server.core import HubConfig\n"
    _tree(tmp_path, {**files, "hub/server/app.py": root_line, "hub/server/admin.py": root_line})
    assert ig.reach_ins(tmp_path) == [
        "hub.server.admin reaches into hub.server.results: from hub.server.results import api"
    ]


def test_the_architecture_diagram_matches_the_tree() -> None:
    doc = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    diagram = ig.mermaid(ig.build_graph(ROOT))
    assert diagram in doc, "docs/architecture.md is stale: paste `python scripts/import_graph.py --mermaid`"
