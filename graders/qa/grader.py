"""`QAGrader`: short-answer QA grading as an async grader (reference = list of gold aliases)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from graders.grade import Check, Grade
from graders.qa.check import DEFAULT_MAX_ANSWER_CHARS, check
from graders.qa.equivalence import EquivalenceOptions
from graders.total import total

__all__ = ["QAGrader"]


class QAGrader:
    """Grade a short answer against gold aliases with :func:`graders.qa.check`.

    ``reference`` is a list of aliases (a single string is one alias). The score is 1 when an
    alias is equivalent, else 0; the grade's checks carry SQuAD exact match and token F1 (for
    reporting, not the reward). An empty or malformed reference is a grader error.
    """

    def __init__(
        self,
        *,
        max_answer_chars: int = DEFAULT_MAX_ANSWER_CHARS,
        equivalence: EquivalenceOptions | None = None,
    ) -> None:
        self.max_answer_chars = max_answer_chars
        self.equivalence = equivalence or EquivalenceOptions()

    @total
    async def __call__(self, response: str, *, reference: Any) -> Grade:
        if isinstance(reference, str):
            aliases: list[str] = [reference]
        elif isinstance(reference, Sequence) and all(isinstance(a, str) for a in reference):
            aliases = list(reference)
        else:
            return Grade.error(f"QA reference must be a list of gold aliases, got {type(reference).__name__}")
        if not any(a.strip() for a in aliases):
            return Grade.error("QA reference must hold at least one non-empty gold alias")
        verdict = check(
            response,
            answers=aliases,
            max_answer_chars=self.max_answer_chars,
            equivalence=self.equivalence,
        )
        checks = (
            Check(
                name="exact_match",
                score=float(verdict.em),
                weight=0.0,
                passed=verdict.em,
                status="correct" if verdict.em else "incorrect",
            ),
            Check(
                name="token_f1",
                score=verdict.f1,
                weight=0.0,
                passed=verdict.f1 >= 1.0,
                status="correct" if verdict.f1 >= 1.0 else ("partial" if verdict.f1 > 0 else "incorrect"),
            ),
        )
        score = 1.0 if verdict.passed else 0.0
        return Grade(
            score=score,
            passed=verdict.passed,
            status=verdict.status,
            extracted=verdict.extracted,
            reason=verdict.reason,
            checks=checks,
        )
