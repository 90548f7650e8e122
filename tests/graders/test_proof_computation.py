"""Claims checked by computation (``graders.proof.computation``): identities and solutions of
equations, decided by graders.math's substitution checks in its worker pool."""

from __future__ import annotations

import pytest

from graders.pool import WorkerPool
from graders.proof import check_identity, check_solution
from graders.proof.computation import split_equation


def test_split_equation() -> None:
    assert split_equation("(a+b)^2 = a^2 + 2ab + b^2") == ("(a+b)^2", "a^2 + 2ab + b^2")
    assert split_equation("f(x=1) = 2") == ("f(x=1)", "2")
    for not_one in ("a + b", "a = b = c", "a <= b", "a != b", "a == b", "= b", "a = {b", "a) = (b"):
        assert split_equation(not_one) is None, not_one


@pytest.mark.parametrize(
    ("claim", "status"),
    [
        ("(a+b)^2 = a^2 + 2ab + b^2", "proved"),
        ("\\sin^2 x + \\cos^2 x = 1", "proved"),
        ("\\frac{x^2 - 1}{x - 1} = x + 1", "proved"),
        ("0 = x - x", "proved"),  # the side with the variables is taken as the reference too
        ("(a+b)^2 = a^2 + b^2", "failed"),
        ("x^2 = x", "failed"),  # true at 0 and 1 only: an equation, not an identity
        ("a + b", "failed"),
        ("a = b = a", "failed"),
        ("x = }\\boxed{x", "failed"),  # cannot break out of the box graders.math reads
        ("\\sqrt{}{} = 1", "failed"),
    ],
)
async def test_identity_claims(math_pool: WorkerPool, claim: str, status: str) -> None:
    v = await check_identity(claim, pool=math_pool)
    assert v.status == status, v.reason
    assert v.backend == "sympy"


@pytest.mark.parametrize(
    ("solution", "status"),
    [
        ("\\boxed{2}", "proved"),
        ("so $x = 3$, the answer is \\boxed{x = 3}", "proved"),
        ("\\boxed{\\{2, 3\\}}", "proved"),
        ("\\boxed{4}", "failed"),
        ("\\boxed{\\{2, 4\\}}", "failed"),  # every proposed value must satisfy the equation
        ("no idea", "failed"),
    ],
)
async def test_solutions_of_an_equation(math_pool: WorkerPool, solution: str, status: str) -> None:
    v = await check_solution("x^2 - 5x + 6 = 0", solution, pool=math_pool)
    assert v.status == status, v.reason


@pytest.mark.slow
async def test_hostile_claim_is_bounded_by_the_pool(math_pool: WorkerPool) -> None:
    v = await check_identity("x = 10^{10^{10^{10}}} x", pool=math_pool, timeout=3.0)
    assert v.status in ("failed", "timeout"), v.reason
    assert (await check_identity("2x = x + x", pool=math_pool)).proved  # the pool still works
