"""`MathGrader`: the math checker as a verihub :class:`~graders.protocol.Grader`."""

from __future__ import annotations

from typing import Any

from graders.grade import Grade
from graders.math.check import DEFAULT_TIMEOUT, acheck
from graders.math.options import MathOptions
from graders.math.verdict import MathVerdict
from graders.pool import WorkerPool
from graders.total import total

__all__ = ["MathGrader"]


class MathGrader:
    """Grades a response's final answer against a reference answer, in the worker pool.

    ``options``: a :class:`MathOptions` (default: multiple distinct answers fail, not strict).
    ``pool``: a :class:`~graders.pool.WorkerPool` (default: the shared one). ``timeout``: seconds
    per check; a check that runs past it is the answer's doing: an ``incorrect`` grade whose reason
    starts with ``timeout:`` (score 0, counted in means). Only infrastructure failures are errors.
    """

    def __init__(
        self,
        options: MathOptions | None = None,
        *,
        pool: WorkerPool | None = None,
        timeout: float = DEFAULT_TIMEOUT,
    ) -> None:
        self.options = options if options is not None else MathOptions()
        self.pool = pool
        self.timeout = timeout

    async def verdict(self, response: str, *, reference: Any) -> MathVerdict:
        """The full :class:`MathVerdict` (status ``no_answer``/``unparseable`` kept apart)."""
        return await acheck(
            response, reference=reference, options=self.options, pool=self.pool, timeout=self.timeout
        )

    @total
    async def __call__(self, response: str, *, reference: Any) -> Grade:
        return (await self.verdict(response, reference=reference)).to_grade()

    def __repr__(self) -> str:
        return f"MathGrader(options={self.options!r}, timeout={self.timeout})"
