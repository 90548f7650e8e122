"""Fidelity on the shared data: gold references pass, perturbed references fail.

Runs the same code as ``bench/fidelity_math.py`` (the source of the numbers in the docs).
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

from graders.extract import ALL_FORMS, ExtractConfig
from graders.math import MathOptions
from hub.review.testing import shared_data_dir

ROOT = Path(__file__).resolve().parents[2]


def _fidelity() -> ModuleType:
    spec = importlib.util.spec_from_file_location("fidelity_math", ROOT / "bench" / "fidelity_math.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def report() -> dict[str, object]:
    fidelity = _fidelity()
    options = MathOptions(strict=True)  # exactly as the environments grade
    return fidelity.run(shared_data_dir(ROOT), fidelity.DATASETS, options)  # type: ignore[no-any-return]


@pytest.mark.slow
@pytest.mark.parametrize(
    ("dataset", "size", "passing"),
    # AIME: one AoPS solution (2024-I-1) ends "... $180 + 24 = 204$. -author" with no box or
    # answer phrase; the environments do not read bare equations (a copied question has them)
    [("gsm8k", 1319, 1319), ("math500", 500, 500), ("aime24", 30, 29), ("amc23", 40, 40)],
)
def test_gold_references_pass(report: dict[str, object], dataset: str, size: int, passing: int) -> None:
    tally = report["gold"][dataset]  # type: ignore[index]
    assert tally.total == size
    assert tally.passed == passing, tally.failures[:10]
    if passing < size:
        assert all("no_answer" in failure for failure in tally.failures), tally.failures


def test_the_aime_solution_without_a_box_passes_with_the_opt_in_form() -> None:
    fidelity = _fidelity()
    options = MathOptions(strict=True, extract=ExtractConfig(forms=ALL_FORMS))
    report = fidelity.run(shared_data_dir(ROOT), ("aime24",), options)
    assert report["gold"]["aime24"].passed == 30


@pytest.mark.parametrize("dataset", ["gsm8k", "math500", "aime24", "amc23"])
def test_every_perturbation_fails(report: dict[str, object], dataset: str) -> None:
    kinds = report["perturbation"][dataset]  # type: ignore[index]
    assert sum(t.total for t in kinds.values()) > 0
    for kind, tally in kinds.items():
        assert tally.passed == tally.total, (kind, tally.failures[:10])


def test_perturbations_cover_each_kind(report: dict[str, object]) -> None:
    math500 = report["perturbation"]["math500"]  # type: ignore[index]
    assert all(math500[kind].total > 10 for kind in ("off_by_one", "sign_flipped", "digit_dropped"))
    assert math500["bracket_flipped"].total > 5
