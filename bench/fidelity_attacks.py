"""The attack generator (graders.attacks) against every bundled grader: counts per grader.

Usage: python bench/fidelity_attacks.py [--every N]

For each grader kind, builds cases from the references of the bundled environments' tasks
(every N-th task, default 8 for the datasets), grades them with the environment's grader, and
prints attacks refused and honest variants accepted (with the classes of any wrong outcome).
Coq needs ``coqc``; Lean is screen-only here (no Lean toolchain).
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import shutil
import sys
import time
from collections.abc import Iterable
from typing import Any

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


class _WorstJudge:
    """A stand-in judge answering every question with its worst choice: the attacks target the
    deterministic checks, judged one by one, so no model is needed."""

    async def complete(self, messages: Any, *, sampling: Any) -> str:
        import json

        return json.dumps({"reason": "stand-in judge", "verdict": sampling.verdicts[0]})


def _line(name: str, report: AttackReport, seconds: float) -> str:
    wrong = sorted({k.split(":")[0] for k in report.by_class if k.endswith(":WRONG")})
    note = f"  wrong classes: {', '.join(wrong)}" if wrong else ""
    return f"{name:<28} {report.summary()}  ({seconds:.1f}s){note}"


_DATA = {
    "gsm8k": "gsm8k",
    "math500": "math500",
    "aime": "aime24",
    "amc": "amc23",
    "nq_open": "nq_open",
    "ifeval": "ifeval/input_data.jsonl",
}


async def _env_batches(env_id: str, every: int, make: Any) -> tuple[Any, list[tuple[Any, list[Case]]]]:
    from hub.registry.entrypoints import load_environment
    from hub.review.testing import shared_data_dir

    kwargs = {"path": shared_data_dir() / _DATA[env_id]} if env_id in _DATA else {}
    env = load_environment(env_id, **kwargs)
    tasks = list(itertools.islice(env.tasks("test"), 0, 5000, every))
    return env, [(t.answer, make(t, i)) for i, t in enumerate(tasks)]


async def _graded(env: Any, batches: Iterable[tuple[Any, list[Case]]], grader: Any = None) -> AttackReport:
    return await run_cases(grader or env.grader, batches)


async def main_async(every: int) -> None:
    for env_id in ("gsm8k", "math500", "aime", "amc"):
        start = time.perf_counter()
        env, batches = await _env_batches(env_id, every, lambda t, i: math_cases(t.answer, bait=i == 0))
        print(_line(f"math ({env_id})", await _graded(env, batches), time.perf_counter() - start))
    for env_id in ("arith", "textops"):
        start = time.perf_counter()
        env, batches = await _env_batches(env_id, 25, lambda t, i: exact_cases(str(t.answer)))
        batches = batches[:40]
        print(_line(f"exact ({env_id})", await _graded(env, batches), time.perf_counter() - start))
    start = time.perf_counter()
    env, batches = await _env_batches("nq_open", every, lambda t, i: qa_cases(t.answer))
    print(_line("qa (nq_open)", await _graded(env, batches), time.perf_counter() - start))
    from graders.ifeval import IFEvalGrader

    env, batches = await _env_batches("ifeval", 1, lambda t, i: ifeval_cases(t.answer))
    batches = [b for b in batches if b[1]]
    for label, grader in (("default", env.grader), ("hardened", IFEvalGrader(hardened=True))):
        start = time.perf_counter()
        print(_line(f"ifeval ({label})", await _graded(env, batches, grader), time.perf_counter() - start))
    from verihub_rubric_demo import rubric_spec

    from graders.rubric import Rubric

    start = time.perf_counter()
    rubric = Rubric(rubric_spec(), judge=_WorstJudge())
    print(
        _line(
            "rubric (rubric_demo)",
            await run_cases(rubric, [(None, rubric_cases(rubric.spec))]),
            time.perf_counter() - start,
        )
    )
    if shutil.which("coqc"):
        start = time.perf_counter()
        env, batches = await _env_batches(
            "coq_core", 1, lambda t, i: proof_cases(t.answer["statement"], "coq")
        )
        print(_line("proof (coq_core)", await _graded(env, batches), time.perf_counter() - start))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--every", type=int, default=8, help="grade every N-th task of the datasets")
    args = parser.parse_args(argv)
    asyncio.run(main_async(args.every))
    return 0


if __name__ == "__main__":
    sys.exit(main())
