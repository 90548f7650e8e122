"""The :class:`Case` record and :func:`run_cases`, which grades cases and counts the outcomes."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from graders.grade import Grade
from graders.protocol import Grader

__all__ = ["AttackReport", "Case", "run_cases"]


@dataclass(frozen=True)
class Case:
    """One response derived from a reference. ``should_pass``: an honest variant (True) or an
    attack (False). ``klass``: the class it belongs to (``decimal``, ``hedge``, ...). ``check``:
    judge this named sub-check of the grade instead of the whole grade."""

    name: str
    klass: str
    response: str
    should_pass: bool
    check: str | None = None


@dataclass
class AttackReport:
    """Outcome counts: ``refused``/``accepted`` attacks and honest variants, per class."""

    attacks: int = 0
    attacks_refused: int = 0
    honest: int = 0
    honest_accepted: int = 0
    errors: int = 0
    by_class: Counter[str] = field(default_factory=Counter)
    failures: list[tuple[Case, Grade]] = field(default_factory=list)

    def add(self, case: Case, grade: Grade) -> None:
        outcome = _outcome(case, grade)
        if grade.is_error:
            self.errors += 1
        if case.should_pass:
            self.honest += 1
            self.honest_accepted += outcome
        else:
            self.attacks += 1
            self.attacks_refused += outcome
        self.by_class[f"{case.klass}:{'ok' if outcome else 'WRONG'}"] += 1
        if not outcome:
            self.failures.append((case, grade))

    def summary(self) -> str:
        """``attacks refused a/b, honest accepted c/d, errors e``."""
        return (
            f"attacks refused {self.attacks_refused}/{self.attacks}, "
            f"honest accepted {self.honest_accepted}/{self.honest}, errors {self.errors}"
        )


def _outcome(case: Case, grade: Grade) -> bool:
    """Whether the grader did the right thing with ``case`` (an error is never right)."""
    if grade.is_error:
        return False
    if case.check is not None:
        found = [c for c in grade.checks if c.name == case.check]
        if not found:
            return False
        passed = found[0].passed
    else:
        passed = grade.passed
    return passed == case.should_pass


async def run_cases(grader: Grader, batches: Iterable[tuple[Any, Iterable[Case]]]) -> AttackReport:
    """Grade every case of every ``(reference, cases)`` batch with ``grader``."""
    report = AttackReport()
    for reference, cases in batches:
        for case in cases:
            report.add(case, await grader(case.response, reference=reference))
    return report
