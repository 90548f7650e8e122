"""The `Grade` record: what every grader returns.

A grade keeps a wrong answer apart from a grader that failed: `status` is ``correct``,
``partial`` (``0 < score < 1``), ``incorrect`` (graded and wrong, "no answer found" included),
``error`` (the grading infrastructure failed: a judge endpoint down, a crashed pool, a missing
checker; the score means nothing and summaries count it apart) or ``timeout`` (the
infrastructure ran out of time; counted apart like ``error``).

Failures caused by the response itself (a model-supplied expression whose check times out or
crashes its worker) are ``incorrect`` with the reason (``"timeout: ..."``) and score 0, so a
response cannot leave the mean by being hard to grade. A grader that raises on a response gives
:meth:`Grade.failed`: ``incorrect``, reason ``grader_failed: ...``, counted in means and apart in
summaries. Only the infrastructure's own failures use :meth:`Grade.error` / :meth:`Grade.timeout`.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

__all__ = ["GRADER_FAILED", "TOO_COSTLY", "Check", "Grade", "GradeStatus"]

GradeStatus = Literal["correct", "partial", "incorrect", "error", "timeout"]

GRADER_FAILED = "grader_failed"
"""Reason prefix of an ``incorrect`` grade given because the grader raised on the response."""

TOO_COSTLY = "too_costly"
"""Reason prefix of an ``incorrect`` grade whose answer was refused because its evaluation cost
could not be bounded cheaply (a cost screen decided before any evaluation)."""


class Check(BaseModel):
    """One named sub-check of a grade (for example one rubric item or one instruction)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str = Field(description="Stable identifier of the check.")
    score: float = Field(ge=0.0, le=1.0, description="Score of this check in [0, 1].")
    weight: float = Field(default=1.0, ge=0.0, description="Weight in the parent grade.")
    passed: bool = Field(description="Whether this check passed.")
    status: GradeStatus = Field(default="correct", description="Same meaning as Grade.status.")
    reason: str = Field(default="", description="Short human-readable explanation.")


class Grade(BaseModel):
    """The result of grading one rollout."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    score: float = Field(ge=0.0, le=1.0, description="Reward in [0, 1]; 0 when status is error/timeout.")
    passed: bool = Field(description="Whether the rollout counts as solved (for pass@k).")
    status: GradeStatus = Field(description="correct/partial/incorrect, or error/timeout of the grader.")
    extracted: str | None = Field(default=None, description="The answer the grader took from the response.")
    reason: str = Field(default="", description="Short explanation of the verdict.")
    checks: tuple[Check, ...] = Field(default=(), description="Named weighted sub-checks, if any.")

    @model_validator(mode="after")
    def _consistent(self) -> Grade:
        if self.status in ("error", "timeout") and (self.passed or self.score != 0.0):
            raise ValueError(f"a grade with status {self.status!r} must have score 0 and passed=False")
        if self.status == "incorrect" and self.passed:
            raise ValueError("a grade with status 'incorrect' cannot have passed=True")
        return self

    @property
    def is_error(self) -> bool:
        """True when the grader failed or timed out (the score is not a verdict)."""
        return self.status in ("error", "timeout")

    @property
    def grader_failed(self) -> bool:
        """True when the grader raised on this response (or on one of its checks): a verdict that
        scored the failed part 0, counted apart in summaries."""
        return not self.is_error and self.reason.startswith(GRADER_FAILED + ":")

    @classmethod
    def from_score(
        cls,
        score: float,
        *,
        passed: bool | None = None,
        extracted: str | None = None,
        reason: str = "",
        checks: tuple[Check, ...] = (),
    ) -> Grade:
        """Build a grade from a score; ``passed`` defaults to ``score == 1``."""
        score = min(1.0, max(0.0, float(score)))
        ok = score >= 1.0 if passed is None else passed
        status: GradeStatus = "correct" if ok and score >= 1.0 else ("partial" if score > 0 else "incorrect")
        if ok and score < 1.0:
            status = "partial"
        return cls(score=score, passed=ok, status=status, extracted=extracted, reason=reason, checks=checks)

    @classmethod
    def correct(cls, *, extracted: str | None = None, reason: str = "") -> Grade:
        return cls(score=1.0, passed=True, status="correct", extracted=extracted, reason=reason)

    @classmethod
    def incorrect(cls, *, extracted: str | None = None, reason: str = "") -> Grade:
        return cls(score=0.0, passed=False, status="incorrect", extracted=extracted, reason=reason)

    @classmethod
    def failed(cls, reason: str) -> Grade:
        """The grader raised on this response: a verdict of 0, never an error left out of a mean."""
        return cls(score=0.0, passed=False, status="incorrect", reason=f"{GRADER_FAILED}: {reason}")

    @classmethod
    def error(cls, reason: str) -> Grade:
        """The grader failed: not a verdict on the response."""
        return cls(score=0.0, passed=False, status="error", reason=reason)

    @classmethod
    def timeout(cls, reason: str = "grader timed out") -> Grade:
        """The grader ran out of time: not a verdict on the response."""
        return cls(score=0.0, passed=False, status="timeout", reason=reason)
