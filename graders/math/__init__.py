"""Math answer checking: safe, fast and faithful (usable alone, as a reward function).

Reading guide
-------------
Three functions and one grader::

    from graders.math import check, acheck, MathGrader

    check(response, reference="\\frac{1}{2}")             # -> MathVerdict (pooled, hard timeout)
    await acheck(response, reference="1591", strict=True)  # async, for runners
    MathGrader(MathOptions(strict=True))                    # a verihub Grader for environments

A check (1) extracts the final answer(s) (:mod:`graders.extract`: last ``\\boxed{}``,
``#### N``, "the answer is", ``A: N``, the final line), (2) fails a response that commits to
several different answers (``multi_answer="reject"``), (3) in ``strict`` mode fails unevaluated
answers, (4) compares literal numbers exactly and everything else through a LaTeX grammar and
sympy (:mod:`graders.math.compare`). Model text is never passed to ``eval``, ``sympify`` or
``parse_expr``; the work runs in a :class:`~graders.pool.WorkerPool` with a parent-side timeout.

Statuses: ``correct``, ``incorrect``, ``no_answer``, ``unparseable`` (verdicts) and ``timeout``,
``error`` (the checker failed; not a verdict). See ``docs/graders-math.md``.
"""

from graders.extract import ExtractConfig, MultiAnswerPolicy
from graders.math.check import DEFAULT_TIMEOUT, acheck, check, check_inline, default_pool
from graders.math.grader import MathGrader
from graders.math.options import CheckMode, MathOptions
from graders.math.probes import hacking_probes, reference_response
from graders.math.verdict import MathStatus, MathVerdict

__all__ = [
    "DEFAULT_TIMEOUT",
    "CheckMode",
    "ExtractConfig",
    "MathGrader",
    "MathOptions",
    "MathStatus",
    "MathVerdict",
    "MultiAnswerPolicy",
    "acheck",
    "check",
    "check_inline",
    "hacking_probes",
    "reference_response",
    "default_pool",
]
