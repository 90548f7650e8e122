"""``verihub init NAME --kind single-turn|multi-turn|tools``: a new environment package.

The package is laid out as every verihub environment is::

    NAME/
      pyproject.toml            distribution verihub-NAME, entry point NAME -> verihub_NAME
      README.md                 task, data source, licence, grader, expected scores
      verihub_NAME/__init__.py  load_environment()
      tests/test_NAME.py        gold answers pass, and `verihub check` passes

A freshly generated package passes ``verihub check`` before any edit.
"""

from __future__ import annotations

import re
from importlib import resources
from pathlib import Path
from typing import Literal

from hub.env import UsageError

__all__ = ["KINDS", "Kind", "scaffold"]

Kind = Literal["single-turn", "multi-turn", "tools"]
KINDS: tuple[Kind, ...] = ("single-turn", "multi-turn", "tools")
_NAME = re.compile(r"^[a-z][a-z0-9_]{0,62}$")
_DESCRIPTIONS: dict[Kind, tuple[str, str, str]] = {
    "single-turn": (
        "Capital cities, one question and one answer per task (a single-turn template).",
        "answer a short factual question with one word.",
        '`graders.exact.ExactGrader(kind="text", case_sensitive=False)`: one committed answer; '
        "several different answers, empty answers and extra words fail.",
    ),
    "multi-turn": (
        "Guess a secret number with higher/lower feedback (a multi-turn template).",
        "guess an integer; after each wrong guess the environment says 'higher' or 'lower'.",
        '`graders.exact.ExactGrader(kind="integer")` on the final guess: one committed integer.',
    ),
    "tools": (
        "Count letters with a tool, then answer (a tool-use template).",
        "add up the letters of three words; a `count_letters` tool is available.",
        '`graders.exact.ExactGrader(kind="integer")` on the final answer: one committed integer.',
    ),
}


def _render(template: str, values: dict[str, str]) -> str:
    text = resources.files("hub.review.templates").joinpath(template).read_text(encoding="utf-8")
    for key, value in values.items():
        text = text.replace("{{" + key + "}}", value)
    return text


def scaffold(
    name: str,
    *,
    kind: Kind = "single-turn",
    dest: Path | None = None,
    license: str = "Apache-2.0",
    author: str = "",
    force: bool = False,
) -> Path:
    """Create the package of environment ``name`` in ``dest`` (default ``environments/NAME``)."""
    if not _NAME.match(name):
        raise UsageError(
            f"{name!r} is not a valid environment id: use lowercase letters, digits and _ (e.g. my_env)"
        )
    if kind not in KINDS:
        raise UsageError(f"--kind must be one of {', '.join(KINDS)}")
    root = dest if dest is not None else Path("environments") / name
    if root.exists() and any(root.iterdir()) and not force:
        raise UsageError(f"{root} exists and is not empty; choose another path or pass --force")
    package = f"verihub_{name}"
    summary, task_description, grader_description = _DESCRIPTIONS[kind]
    values = {
        "name": name,
        "package": package,
        "dist": f"verihub-{name.replace('_', '-')}",
        "summary": summary,
        "license": license,
        "author": author or "the authors",
        "task_description": task_description,
        "grader_description": grader_description,
    }
    module = {"single-turn": "single_turn", "multi-turn": "multi_turn", "tools": "tools"}[kind]
    files = {
        root / "pyproject.toml": _render("pyproject.toml.txt", values),
        root / "README.md": _render("README.md.txt", values),
        root / package / "__init__.py": _render(f"{module}.py.txt", values),
        root / "tests" / f"test_{name}.py": _render("test_env.py.txt", values),
    }
    for path, text in files.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root
