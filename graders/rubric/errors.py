"""Exceptions of :mod:`graders.rubric`.

::

    RubricError              a rubric cannot be used as written (fix the rubric file or the call)
    ├── RubricFormatError    the file does not parse or validate; ``problems`` lists each bad field
    └── UnknownGraderError   a ``kind: grader`` check names a grader nobody registered
    JudgeError               one judge call failed (transport, timeout, or a malformed verdict)
    └── VerdictError         the judge answered, but not with one strict JSON verdict

Judge errors never escape :class:`~graders.rubric.Rubric`: they become a check with status
``error`` (or ``timeout``), and by default an ``error`` grade. They never count as a pass.
"""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["JudgeError", "RubricError", "RubricFormatError", "UnknownGraderError", "VerdictError"]


class RubricError(Exception):
    """A rubric cannot be used as written."""


class RubricFormatError(RubricError):
    """A rubric file that does not parse or validate. ``problems``: one line per bad field."""

    def __init__(self, source: str, problems: Sequence[str]) -> None:
        self.source = source
        self.problems = tuple(problems)
        lines = "\n".join(f"  - {p}" for p in self.problems)
        super().__init__(f"{source} is not a valid rubric:\n{lines}\nSee docs/rubrics.md for the format.")


class UnknownGraderError(RubricError):
    """A ``kind: grader`` check names a grader that is not registered."""


class JudgeError(Exception):
    """One judge call failed; the check it served is an error, never a pass."""


class VerdictError(JudgeError):
    """The judge's answer is not exactly one JSON object ``{"reason": ..., "verdict": ...}``."""
