"""`ProofGrader`: a proof checker as a verihub :class:`~graders.protocol.Grader`."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from graders.grade import Grade
from graders.proof.checker import ProofChecker
from graders.proof.screen import extract_code
from graders.proof.verdict import ProofVerdict
from graders.total import total

__all__ = ["ProofGrader", "ProofReference", "verdict_to_grade"]

ProofReference = Mapping[str, Any]
"""A task's reference: ``{"statement": ..., "imports": [...], "allowed_axioms": [...] | None,
"allow_native_decide": bool}``; a plain string is taken as the statement."""


def verdict_to_grade(
    verdict: ProofVerdict, *, extracted: str | None = None, timeout_is_failure: bool = True
) -> Grade:
    """``proved`` -> correct, ``failed`` -> incorrect, ``error`` -> Grade.error.

    A ``timeout`` is the proof's doing (a looping tactic), so by default it is an incorrect
    grade with the reason; ``timeout_is_failure=False`` reports it as a grader timeout instead.
    """
    if verdict.status == "proved":
        return Grade.correct(extracted=extracted, reason=verdict.reason)
    if verdict.status == "failed":
        return Grade.incorrect(extracted=extracted, reason=verdict.reason)
    if verdict.status == "timeout":
        if timeout_is_failure:
            return Grade.incorrect(extracted=extracted, reason=f"timeout: {verdict.reason}")
        return Grade.timeout(verdict.reason)
    return Grade.error(verdict.reason)


class ProofGrader:
    """Grades a response by checking its proof of the reference statement.

    ``checker``: any :class:`~graders.proof.checker.ProofChecker` (see
    :func:`graders.proof.make_checker`). ``timeout``: seconds per check (default: the policy's).
    """

    def __init__(
        self, checker: ProofChecker, *, timeout: float | None = None, timeout_is_failure: bool = True
    ) -> None:
        self.checker = checker
        self.timeout = timeout
        self.timeout_is_failure = timeout_is_failure

    async def verdict(self, response: str, *, reference: Any) -> ProofVerdict:
        """The checker's full verdict (messages, goals, axioms) for ``response``."""
        ref: Mapping[str, Any] = {"statement": reference} if isinstance(reference, str) else reference
        base = self.checker.policy
        policy = replace(
            base,
            allowed_axioms=None if ref.get("allowed_axioms") is None else frozenset(ref["allowed_axioms"]),
            allow_native_decide=bool(ref.get("allow_native_decide", False)),
            timeout_s=float(self.timeout or ref.get("timeout_s") or base.timeout_s),
        )
        return await self.checker.check(
            str(ref["statement"]), response, imports=tuple(ref.get("imports") or ()), policy=policy
        )

    @total
    async def __call__(self, response: str, *, reference: Any) -> Grade:
        try:
            verdict = await self.verdict(response, reference=reference)
        except (KeyError, TypeError) as exc:
            return Grade.error(f"malformed proof reference: {exc!r}")
        return verdict_to_grade(
            verdict, extracted=extract_code(response), timeout_is_failure=self.timeout_is_failure
        )
