"""`MathVerdict`: the result of checking one response, and its mapping to a `Grade`."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from graders.grade import GRADER_FAILED, TOO_COSTLY, Grade

__all__ = ["MathStatus", "MathVerdict"]

MathStatus = Literal["correct", "incorrect", "no_answer", "unparseable", "timeout", "error"]
"""``correct``/``incorrect``: a verdict. ``no_answer``: no final answer was found (or the response
was rejected before reading, e.g. too long). ``unparseable``: an answer was found but is not
mathematics the checker can read (or it exhausted memory or crashed the checker). ``timeout``: the
check of this answer ran past its time limit; the answer's doing, so graded as wrong. ``error``:
the grading infrastructure failed (unreadable reference, a pool that cannot start); not a verdict."""

_TAGS = (f"{GRADER_FAILED}:", f"{TOO_COSTLY}:")


@dataclass(frozen=True)
class MathVerdict:
    """The verdict on one response: ``passed`` is True only for status ``correct``."""

    passed: bool
    status: MathStatus
    extracted: str | None = None
    reason: str = ""

    @classmethod
    def correct(cls, extracted: str, reason: str = "equivalent to the reference") -> MathVerdict:
        return cls(True, "correct", extracted, reason)

    @classmethod
    def fail(cls, status: MathStatus, reason: str, extracted: str | None = None) -> MathVerdict:
        if status == "correct":
            raise ValueError("use MathVerdict.correct for a passing verdict")
        return cls(False, status, extracted, reason)

    def to_grade(self) -> Grade:
        """The verdict as a :class:`~graders.grade.Grade`.

        Only ``error`` (the infrastructure's failure) leaves the score out; a ``timeout`` is an
        ``incorrect`` grade whose reason starts with ``timeout:``, so answers built to time the
        checker out score exactly what wrong answers score.
        """
        if self.status == "correct":
            return Grade.correct(extracted=self.extracted, reason=self.reason)
        if self.status == "error":
            return Grade.error(self.reason or "math check failed")
        if self.reason.startswith(_TAGS):  # already names its class (grader_failed, too_costly)
            return Grade.incorrect(extracted=self.extracted, reason=self.reason)
        reason = f"{self.status}: {self.reason}" if self.reason else self.status
        return Grade.incorrect(extracted=self.extracted, reason=reason)
