"""The attack generator against every grader kind: all attacks refused, all honest variants
accepted, on references of every shape (integers, negatives, fractions, radicals, tuples,
intervals, solution lists; integer and string exact answers; multi-word QA golds; rubric and
IFEval checks; Coq statements). The counts per grader are in docs/graders.md."""

from __future__ import annotations

import asyncio
import shutil
from typing import Any

import pytest

from graders.attacks import (
    AttackReport,
    Case,
    exact_cases,
    ifeval_cases,
    math_cases,
    proof_cases,
    qa_cases,
    rubric_cases,
    run_cases,
)
from graders.exact import ExactGrader
from graders.ifeval import IFEvalGrader
from graders.math import MathGrader, MathOptions
from graders.pool import WorkerPool
from graders.qa import QAGrader
from graders.rubric import load_rubric

MATH_REFERENCES = [
    "42",
    "-17",
    "1234",
    "\\frac{3}{4}",
    "\\sqrt{2}",
    "\\frac{\\pi}{3}",
    "(1, -2)",
    "(-\\infty, 3]",
    "2, 5",
]


def _report(grader: Any, batches: list[tuple[Any, list[Case]]]) -> AttackReport:
    return asyncio.run(run_cases(grader, batches))


def _explain(report: AttackReport) -> str:
    return "\n".join(
        f"{c.name} ({c.klass}): {c.response!r} -> {g.status}: {g.reason}" for c, g in report.failures
    )


@pytest.mark.parametrize("strict", [True, False])
def test_math_grader(math_pool: WorkerPool, strict: bool) -> None:
    grader = MathGrader(MathOptions(strict=strict), pool=math_pool, timeout=2.0)
    batches = [(ref, math_cases(ref, bait=i == 0)) for i, ref in enumerate(MATH_REFERENCES)]
    report = _report(grader, batches)
    assert report.attacks > 90 and report.honest > 50
    assert not report.failures, _explain(report)


@pytest.mark.parametrize("reference", [42, -17, 1234, "kangaroo"])
def test_exact_grader(reference: int | str) -> None:
    grader = ExactGrader(kind="integer" if isinstance(reference, int) else "text")
    report = _report(grader, [(reference, exact_cases(reference))])
    assert not report.failures, _explain(report)


@pytest.mark.parametrize(
    "aliases",
    [
        ["Paris"],
        ["Amazon River"],
        ["the Treaty of Versailles"],
        ["Martin Luther King Jr."],
        ["Guy's Hospital"],
    ],
)
def test_qa_grader(aliases: list[str]) -> None:
    report = _report(QAGrader(), [(aliases, qa_cases(aliases))])
    assert not report.failures, _explain(report)


RUBRIC = {
    "id": "attacks",
    "checks": [
        {
            "id": "no-meta",
            "kind": "contains",
            "mode": "none",
            "ignore_case": True,
            "text": ["as an ai", "i can't"],
        },
        {"id": "keyword", "kind": "contains", "mode": "all", "text": ["waterproof", "don't"]},
    ],
}


def test_rubric_checks() -> None:
    rubric = load_rubric(RUBRIC)
    report = _report(rubric, [(None, rubric_cases(rubric.spec))])
    assert report.attacks >= 8 and not report.failures, _explain(report)


IFEVAL = {
    "instruction_id_list": [
        "keywords:forbidden_words",
        "punctuation:no_comma",
        "change_case:english_lowercase",
    ],
    "kwargs": [{"forbidden_words": ["password", "secret"]}, {}, {}],
    "prompt": "p",
}


def test_ifeval_hardened_refuses_every_attack() -> None:
    report = _report(IFEvalGrader(hardened=True), [(IFEVAL, ifeval_cases(IFEVAL))])
    assert report.attacks >= 8 and not report.failures, _explain(report)


def test_ifeval_reference_exact_mode_keeps_the_references_weakness() -> None:
    """The default mode is the comparison target: it accepts what the reference accepts."""
    report = _report(IFEvalGrader(), [(IFEVAL, ifeval_cases(IFEVAL))])
    assert report.honest_accepted == report.honest
    assert report.attacks_refused < report.attacks


@pytest.mark.skipif(shutil.which("coqc") is None, reason="coqc is not installed")
def test_coq_checker() -> None:
    from graders.proof import ProofGrader
    from graders.proof.coq import CoqChecker

    statement = "Theorem add_0_r_demo : forall n : nat, n + 0 = n."
    grader = ProofGrader(CoqChecker())
    report = _report(grader, [({"statement": statement}, proof_cases(statement, "coq"))])
    assert report.attacks == 8 and not report.failures, _explain(report)
