"""`Rubric`: a weighted list of checks that is itself a :class:`~graders.protocol.Grader`.

::

    rubric = load_rubric("rubric.yaml", judge=my_judge_model)   # validated; checks resolved
    grade = await rubric(response, reference=task.answer)      # a Grade with one Check per item
    earned, total = rubric_points(grade)                       # e.g. (120.0, 183.0)

The score is ``sum(weight * check score) / sum(weight)``; ``passed`` needs ``pass_threshold``,
every ``required`` check passing and no check that failed to grade. An ungraded check (judge
error, crashing grader) makes the grade an ``error`` only while it could still change the
verdict; otherwise the grade fails closed (``on_error: zero`` scores it 0). Judge checks:
:mod:`graders.rubric.judge`; regex checks run in a worker pool (:mod:`graders.rubric.checks`).
The format and rules: docs/rubrics.md.
"""

from __future__ import annotations

import asyncio
import os
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from graders.grade import GRADER_FAILED, Check, Grade, GradeStatus
from graders.pool import WorkerPool
from graders.rubric.checks import DeterministicCheck, build_check, error_check
from graders.rubric.errors import JudgeError, RubricError
from graders.rubric.judge import JudgeModel, JudgeSampling, aggregate_votes, ask_judge
from graders.rubric.load import load_rubric_spec
from graders.rubric.prompt import SecretFactory, build_judge_messages, make_code, make_nonce
from graders.rubric.spec import JudgeCheck, RubricSpec
from graders.total import total

__all__ = ["Rubric", "load_rubric", "rubric_points"]

JudgePanel = JudgeModel | Sequence[JudgeModel] | None


class Rubric:
    """Grade a response against a rubric (see the module docstring for a reading guide).

    ``judge``: one :class:`JudgeModel` or a panel of them; required when the rubric has judge
    checks. ``pool``: the worker pool that runs regex checks under a hard timeout (default: a
    shared pool, started on first use). ``nonce_factory`` and ``code_factory`` exist for tests
    of the judge's secrets.
    """

    def __init__(
        self,
        spec: RubricSpec,
        *,
        judge: JudgePanel = None,
        pool: WorkerPool | None = None,
        nonce_factory: SecretFactory = make_nonce,
        code_factory: SecretFactory = make_code,
    ) -> None:
        self.spec = spec
        if judge is None:
            panel: tuple[JudgeModel, ...] = ()
        elif isinstance(judge, Sequence):
            panel = tuple(judge)
        else:
            panel = (judge,)
        for model in panel:
            if not isinstance(model, JudgeModel):
                raise RubricError(
                    f"{type(model).__name__} is not a JudgeModel (it needs `async def complete`)"
                )
        judged = [c.id for c in spec.judge_checks()]
        if judged and not panel:
            raise RubricError(
                f"rubric {spec.id!r} has judge checks ({', '.join(judged)}) but no judge model; "
                "pass judge=... (in verihub: hub.run.judge.LazyJudge or hub.run.judge.ClientJudge)"
            )
        self.judges = panel
        self._nonce_factory = nonce_factory
        self._code_factory = code_factory
        self._deterministic: dict[str, DeterministicCheck] = {
            c.id: build_check(c, pool=pool) for c in spec.checks if not isinstance(c, JudgeCheck)
        }
        self._required = {c.id for c in spec.checks if c.required}

    @classmethod
    def load(
        cls,
        source: str | os.PathLike[str] | Mapping[str, Any],
        *,
        judge: JudgePanel = None,
        pool: WorkerPool | None = None,
    ) -> Rubric:
        """Load and validate a rubric file (or mapping), then resolve its checks."""
        return cls(load_rubric_spec(source), judge=judge, pool=pool)

    @property
    def id(self) -> str:
        return self.spec.id

    def __repr__(self) -> str:
        return f"<Rubric {self.spec.id}: {len(self.spec.checks)} checks, {self.spec.total_weight:g} points>"

    @total
    async def __call__(self, response: str, *, reference: Any) -> Grade:
        if not isinstance(response, str):
            return Grade.error(
                f"rubric {self.spec.id}: the response is a {type(response).__name__}, not text"
            )
        if len(response) > self.spec.max_response_chars:
            return Grade.incorrect(reason=f"response longer than {self.spec.max_response_chars} characters")
        checks = await asyncio.gather(*(self._run(c.id, response, reference) for c in self.spec.checks))
        return self._combine(tuple(checks))

    # -- internals -----------------------------------------------------------------------------
    async def _run(self, check_id: str, response: str, reference: Any) -> Check:
        runner = self._deterministic.get(check_id)
        if runner is not None:
            return await runner(response, reference)
        spec = next(c for c in self.spec.judge_checks() if c.id == check_id)
        return await self._judge(spec, response, reference)

    async def _judge(self, check: JudgeCheck, response: str, reference: Any) -> Check:
        settings = self.spec.judge
        samples = check.samples or settings.samples
        calls = []
        for model in self.judges:
            for sample in range(samples):
                try:
                    prompt = build_judge_messages(
                        question=check.question,
                        choices=check.choices,
                        response=response,
                        reference=reference,
                        show_reference=check.show_reference,
                        nonce_factory=self._nonce_factory,
                        code_factory=self._code_factory,
                    )
                except JudgeError as exc:
                    return error_check(check.id, check.weight, str(exc))
                sampling = JudgeSampling(
                    temperature=settings.sample_temperature(samples),
                    max_tokens=settings.max_tokens,
                    seed=sample,
                    verdicts=prompt.codes,
                )
                calls.append(
                    ask_judge(
                        model,
                        prompt,
                        sampling=sampling,
                        timeout_s=settings.timeout_s,
                        max_chars=settings.max_output_chars,
                    )
                )
        votes = await asyncio.gather(*calls)
        failed = [v for v in votes if v.error is not None]
        if failed:
            return error_check(
                check.id,
                check.weight,
                f"{len(failed)}/{len(votes)} judge votes failed: {failed[0].error}"[:400],
                timed_out=all(v.timed_out for v in failed),
            )
        index = aggregate_votes(votes, check.choices, check.aggregate or settings.aggregate)
        score, choice = check.choice_scores()[index], check.choices[index]
        passed = index == len(check.choices) - 1  # only the best choice passes
        status: GradeStatus = "correct" if passed else ("partial" if score > 0 else "incorrect")
        reason = next(v.reason for v in votes if v.choice == choice)
        tally = ""
        if len(votes) > 1:
            counts = Counter(v.choice for v in votes)
            tally = " (votes " + ", ".join(f"{c}: {counts[c]}" for c in check.choices if counts[c]) + ")"
        return Check(
            name=check.id,
            score=score,
            weight=check.weight,
            passed=passed,
            status=status,
            reason=f"judge: {choice}{tally}: {reason}"[:500],
        )

    def _combine(self, checks: tuple[Check, ...]) -> Grade:
        total = self.spec.total_weight
        earned = sum(c.weight * c.score for c in checks)
        failed = [c for c in checks if c.status in ("error", "timeout")]
        blocked = [c.name for c in checks if c.name in self._required and not c.passed and c not in failed]
        # fail closed: when the graded checks already settle a failing verdict (a required check
        # failed, or full marks on every ungraded check would still miss the threshold), the
        # ungraded checks cannot change it, so they score 0 instead of turning the grade into an
        # error that summaries would leave out
        best_case = (earned + sum(c.weight * (1.0 - c.score) for c in failed)) / total
        settled = bool(blocked) or best_case < self.spec.pass_threshold - 1e-9
        if failed and self.spec.on_error == "error" and not settled:
            status: GradeStatus = "timeout" if all(c.status == "timeout" for c in failed) else "error"
            detail = "; ".join(f"{c.name}: {c.reason}" for c in failed[:3])
            return Grade(
                score=0.0,
                passed=False,
                status=status,
                reason=f"rubric {self.spec.id}: {len(failed)} check(s) could not be graded: {detail}"[:1000],
                checks=checks,
            )
        score = earned / total
        passed = not failed and not blocked and score >= self.spec.pass_threshold - 1e-9
        notes = [f"{earned:g}/{total:g} points"]
        crashed = [c.name for c in checks if c.reason.startswith(GRADER_FAILED + ":")]
        if crashed:  # first, so the grade counts as a grader failure (Grade.grader_failed)
            notes.insert(0, f"{GRADER_FAILED}: check(s) {', '.join(crashed)} raised (scored 0)")
        if failed:
            notes.append(f"not graded (scored 0): {', '.join(c.name for c in failed)}")
        if blocked:
            notes.append(f"required check(s) failed: {', '.join(blocked)}")
        return Grade.from_score(score, passed=passed, reason="; ".join(notes), checks=checks)


def load_rubric(
    source: str | os.PathLike[str] | Mapping[str, Any],
    *,
    judge: JudgePanel = None,
    pool: WorkerPool | None = None,
) -> Rubric:
    """Load a rubric file (``.json``, ``.yaml``, ``.yml``) or mapping into a ready :class:`Rubric`."""
    return Rubric.load(source, judge=judge, pool=pool)


def rubric_points(grade: Grade) -> tuple[float, float]:
    """``(earned, total)`` weighted points of a rubric grade, e.g. ``(120.0, 183.0)``."""
    return sum(c.weight * c.score for c in grade.checks), sum(c.weight for c in grade.checks)
