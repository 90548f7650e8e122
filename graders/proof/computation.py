"""Claims checked by computation, not by a proof kernel: identities and solutions of equations.

Some claims need no proof assistant: ``(a+b)^2 = a^2 + 2ab + b^2`` holds for all values of its
variables or it does not, and ``x = 3`` satisfies ``x^2 - 5x + 6 = 0`` or it does not. These two
functions decide such claims with :mod:`graders.math`'s substitution checks (the ``identity`` and
``root`` modes: symbolically, then at seeded random points), through its public
:func:`graders.math.acheck`, so the LaTeX grammar (never ``sympify`` of model text), the worker
pool, the hard timeout and the memory cap are graders.math's own; nothing is computed here.

Both return a :class:`~graders.proof.verdict.ProofVerdict` like the kernels do: ``proved``,
``failed`` (false, or not a claim that can be read), ``timeout`` or ``error`` (the checker
failed), with ``backend="sympy"``. graders.math is imported on first use (sympy is slow to
import).
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from graders.proof.verdict import ProofStatus, ProofVerdict

if TYPE_CHECKING:
    from graders.math.verdict import MathVerdict
    from graders.pool import WorkerPool

__all__ = ["check_identity", "check_solution", "split_equation"]

_DEFAULT_TIMEOUT = 5.0
_NOT_EQUALS = "<>!:="


def split_equation(claim: str) -> tuple[str, str] | None:
    """``lhs = rhs`` split at its one top-level ``=``; None if there is not exactly one."""
    depth, found = 0, []
    for i, ch in enumerate(claim):
        if ch in "({[":
            depth += 1
        elif ch in ")}]":
            depth -= 1
            if depth < 0:
                return None
        elif ch == "=" and depth == 0:
            if claim[i - 1 : i] in tuple(_NOT_EQUALS) or claim[i + 1 : i + 2] in tuple(_NOT_EQUALS):
                return None
            found.append(i)
    if depth != 0 or len(found) != 1:
        return None
    lhs, rhs = claim[: found[0]].strip(), claim[found[0] + 1 :].strip()
    return (lhs, rhs) if lhs and rhs else None


def _balanced(text: str) -> bool:
    depth = 0
    for ch in text:
        depth += 1 if ch == "{" else -1 if ch == "}" else 0
        if depth < 0:
            return False
    return depth == 0


def _to_proof(v: MathVerdict, start: float, what: str) -> ProofVerdict:
    status: ProofStatus
    if v.passed:
        status, reason = "proved", f"{what} holds ({v.reason})"
    elif v.status == "timeout" or v.status == "error":
        status, reason = v.status, f"{what}: {v.reason}"
    else:
        status, reason = "failed", f"{what} does not hold: {v.status}: {v.reason}"
    return ProofVerdict(status=status, reason=reason, backend="sympy", elapsed_s=time.monotonic() - start)


async def check_identity(
    claim: str, *, pool: WorkerPool | None = None, timeout: float = _DEFAULT_TIMEOUT
) -> ProofVerdict:
    """Is the LaTeX claim ``lhs = rhs`` true for all values of its variables?

    ``pool``: a graders.math worker pool (default: graders.math's shared pool). Example::

        await check_identity("(a+b)^2 = a^2 + 2ab + b^2")   # proved
        await check_identity("(a+b)^2 = a^2 + b^2")         # failed
    """
    from graders.math import acheck

    start = time.monotonic()
    sides = split_equation(claim)
    if sides is None:
        return ProofVerdict.failed("not an identity claim: expected one `lhs = rhs`", backend="sympy")
    lhs, rhs = sides
    if not (_balanced(lhs) and _balanced(rhs)):
        return ProofVerdict.failed("unbalanced braces in the claim", backend="sympy")
    # graders.math checks that the answer adds no variable the reference lacks; an identity is
    # symmetric, so the other side is tried as the reference before the claim is declared false
    first = await acheck(f"\\boxed{{{rhs}}}", reference=lhs, mode="identity", pool=pool, timeout=timeout)
    if first.passed or first.status == "timeout":
        return _to_proof(first, start, "the identity")
    other = await acheck(f"\\boxed{{{lhs}}}", reference=rhs, mode="identity", pool=pool, timeout=timeout)
    if other.passed or other.status == "timeout":
        return _to_proof(other, start, "the identity")
    verdicts = [v for v in (first, other) if v.status != "error"]
    if verdicts:
        return _to_proof(verdicts[0], start, "the identity")
    if "could not be parsed" in first.reason:
        # the claim is the model's text: a side the grammar cannot read is a failed claim
        return ProofVerdict.failed(f"the claim could not be read: {first.reason}", backend="sympy")
    return _to_proof(first, start, "the identity")


async def check_solution(
    equation: str, solution: str, *, pool: WorkerPool | None = None, timeout: float = _DEFAULT_TIMEOUT
) -> ProofVerdict:
    """Does every value ``solution`` proposes satisfy ``equation`` (LaTeX, one variable)?

    ``solution`` is a model's response, read as graders.math reads answers (``\\boxed{3}``,
    ``x = 3``, ``\\{2, 3\\}``); ``equation`` is the task's (an expression means ``= 0``).
    """
    from graders.math import acheck

    start = time.monotonic()
    v = await acheck(solution, reference=equation, mode="root", pool=pool, timeout=timeout)
    return _to_proof(v, start, "the solution")
