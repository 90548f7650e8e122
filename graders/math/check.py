"""The three ways to check a response: in this process, pooled (sync) and pooled (async).

- :func:`check_inline` does the work in the calling process with no time limit. Use it inside a
  worker or for benchmarks; on hostile input it may take unbounded time and memory.
- :func:`check` and :func:`acheck` run :func:`check_inline` in a :class:`~graders.pool.WorkerPool`
  (a shared default pool, started on first use, unless one is passed) with a hard timeout: a
  check that runs past it is killed and reported with status ``timeout``, never ``incorrect``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from fractions import Fraction
from typing import Any

from graders.commitment import AMBIGUOUS, ambiguity, committed_end
from graders.extract import answer_value, apply_policy, extract_answers
from graders.grade import GRADER_FAILED
from graders.math.compare import ReferenceUnreadable, compare
from graders.math.normalize import fold_unicode_math
from graders.math.options import MathOptions
from graders.math.parse import Answer, read_answer, read_reference, warm_up
from graders.math.restate import restate, stray_words, strip_thinking
from graders.math.solutions import is_solution_list
from graders.math.strict import unevaluated_reason
from graders.math.structure import kind_mismatch
from graders.math.verdict import MathStatus, MathVerdict
from graders.pool import (
    PoolConfig,
    PoolError,
    PoolTimeout,
    WorkerDied,
    WorkerError,
    WorkerPool,
    shared_pool,
)
from graders.reader import reader_view
from graders.typography import fold_numerals

__all__ = ["DEFAULT_TIMEOUT", "acheck", "check", "check_inline", "default_pool", "reference_text"]

DEFAULT_TIMEOUT = 5.0
"""Seconds one pooled check may take before it is reported as ``timeout``."""

_RESOURCE_ERRORS = ("MemoryError", "RecursionError", "OverflowError")
_WEAK_FORMS = ("final_line", "last_math")


def reference_text(reference: object) -> str:
    """A reference answer as text: ``27.0`` -> ``"27"``, ``Fraction(1, 2)`` -> ``"\\frac{1}{2}"``."""
    if isinstance(reference, bool) or reference is None:
        raise TypeError(f"a math reference must be a string or a number, got {reference!r}")
    if isinstance(reference, float) and reference.is_integer():
        return str(int(reference))
    if isinstance(reference, Fraction):
        if reference.denominator == 1:
            return str(reference.numerator)
        return f"\\frac{{{reference.numerator}}}{{{reference.denominator}}}"
    if isinstance(reference, (int, float)):
        return str(reference)
    if isinstance(reference, str):
        return reference
    raise TypeError(f"a math reference must be a string or a number, got {type(reference).__name__}")


def _resolve_options(options: MathOptions | None, overrides: dict[str, Any]) -> MathOptions:
    base = options if options is not None else MathOptions()
    return dataclasses.replace(base, **overrides) if overrides else base


def _judge_one(reference: Answer, raw: str, options: MathOptions, *, weak_form: bool) -> MathVerdict:
    answer = read_answer(raw)
    if not answer.text:
        return MathVerdict.fail("no_answer", "the answer is empty", raw)
    if "\\boxed" in answer.text or "\\fbox" in answer.text:
        return MathVerdict.fail("unparseable", "a box inside the answer", raw)
    mismatch = kind_mismatch(reference.text, answer.text)
    if mismatch is not None:  # a set or list is not an interval or tuple (and back)
        return MathVerdict.fail("incorrect", mismatch, raw)
    restated = restate(reference, answer)
    if isinstance(restated, str):
        return MathVerdict.fail("incorrect", restated, raw)
    reference, answer = restated
    words = stray_words(reference, answer)
    if words is not None:
        return MathVerdict.fail("unparseable", words, raw)
    # an answer read from a bare final line, with no box or "the answer is", counts only in
    # its final form: the last line of a copied question ("Simplify \\[...\\]") is not one
    if options.strict or weak_form:
        reason = unevaluated_reason(answer, reference)
        if reason is not None:
            return MathVerdict.fail("incorrect", reason, raw)
    result = compare(reference, answer, options)
    if result.outcome == "equal":
        return MathVerdict.correct(raw, result.reason)
    status: MathStatus = "unparseable" if result.outcome == "unparseable" else "incorrect"
    return MathVerdict.fail(status, result.reason, raw)


def _same_as(judged: Callable[[str], MathVerdict]) -> Callable[[str, str], bool | None]:
    """A later value is the committed (passing) answer when it passes too, another answer when
    it reads as a wrong one, and undecided when it does not read as an answer at all."""

    def same(value: str, _committed: str) -> bool | None:
        read = answer_value(value)
        if read is None or not any(ch.isdigit() or ch == "\\" for ch in read):
            return None  # prose, or a bare letter of a diagram's label: not an answer
        verdict = judged(read)
        if verdict.passed:
            return True
        return False if verdict.status == "incorrect" else None

    return same


def check_inline(response: str, *, reference: object, options: MathOptions | None = None) -> MathVerdict:
    """Check ``response`` against ``reference`` in this process (no time limit; see module doc)."""
    opts = options if options is not None else MathOptions()
    try:
        ref = read_reference(fold_numerals(reference_text(reference)))
        if not ref.text:
            return MathVerdict.fail("error", "the reference answer is empty")
        if not isinstance(response, str):
            return MathVerdict.fail("no_answer", f"the response is not text ({type(response).__name__})")
        if opts.max_response_chars is not None and len(response) > opts.max_response_chars:
            return MathVerdict.fail(
                "no_answer", f"response longer than {opts.max_response_chars} characters; not read"
            )
        # Unicode mathematics as LaTeX first: the reader's folding (NFKC) would make "\u00bd" "1\u20442"
        text = reader_view(fold_unicode_math(fold_numerals(strip_thinking(response))), markdown=False)
        extraction = extract_answers(text, opts.extract)
        if extraction.flag == "unclosed_box":
            return MathVerdict.fail(
                "unparseable",
                f"a \\boxed{{ is never closed within {opts.extract.max_answer_chars} characters",
            )
        if extraction.flag is not None:
            return MathVerdict.fail("incorrect", f"rejected: {extraction.flag.replace('_', ' ')}")
        answers = extraction.answers
        if not answers:
            return MathVerdict.fail("no_answer", "no final answer found (ask for \\boxed{})")
        weak = extraction.form in _WEAK_FORMS
        verdicts: dict[str, MathVerdict] = {}

        def judged(raw: str) -> MathVerdict:
            if raw not in verdicts:
                verdicts[raw] = _judge_one(ref, raw, opts, weak_form=weak)
            return verdicts[raw]

        def committed(verdict: MathVerdict) -> MathVerdict:
            """``verdict`` unless the response gives another answer in another form or after
            the committed one, or takes it back (the commitment policy)."""
            if not verdict.passed:
                return verdict
            # an answer committed in another form ("Final Answer: 8" next to \boxed{7}) that
            # reads as a different value is a hedge too; unreadable running text is not
            other = next((judged(a) for a in extraction.others if judged(a).status == "incorrect"), None)
            if other is not None:
                return MathVerdict.fail(
                    "incorrect",
                    f"{AMBIGUOUS}: the response commits to different answers in different forms",
                    other.extracted,
                )
            changed = ambiguity(text[committed_end(text) :], [verdict.extracted or ""], _same_as(judged))
            if changed is not None:
                return MathVerdict.fail(
                    "incorrect",
                    f"{AMBIGUOUS}: changed after the answer ({changed.text[:60]!r})",
                    changed.value,
                )
            return verdict

        if opts.multi_answer == "reject":
            distinct = list(dict.fromkeys(answers))
            if len(distinct) > 1 and is_solution_list(ref.text):
                # one box per solution ("x = \\boxed{2} or x = \\boxed{3}"): together they are
                # the answer, compared as one list (a wrong extra box fails the set); a later
                # different answer still makes it ambiguous
                return committed(judged(", ".join(distinct)))
            results = [judged(raw) for raw in distinct]
            if all(v.passed for v in results):
                return committed(results[-1])
            if any(v.passed for v in results):
                wrong = next(v for v in results if not v.passed)
                return MathVerdict.fail(
                    "incorrect", "the response commits to several different answers", wrong.extracted
                )
            return judged(answers[-1])
        chosen, _ = apply_policy(answers, opts.multi_answer, lambda a, b: a == b)
        assert chosen is not None
        return judged(chosen)
    except ReferenceUnreadable as exc:
        return MathVerdict.fail("error", str(exc))
    except (MemoryError, RecursionError, OverflowError) as exc:
        return MathVerdict.fail("unparseable", f"the answer exhausted a resource ({type(exc).__name__})")


def default_pool() -> WorkerPool:
    """The shared pool used when none is passed (two workers, 2 GiB each; created on first use)."""
    return shared_pool("graders.math", PoolConfig(size=2, memory_mb=2048, initializer=warm_up))


def _pooled_failure(exc: PoolError, timeout: float) -> MathVerdict:
    """What a failed pooled check says about the response.

    The call's clock starts once a ready worker has the job, so running past the timeout, running
    out of memory or crashing the worker mid-call is the answer's doing: status ``timeout`` /
    ``unparseable``, both graded 0 (never left out of a mean). A pool that cannot start or reach
    a worker is the grader's failure: ``error``. A check that raised on the response is a grader
    bug met on it: ``incorrect``, reason ``grader_failed: ...`` (counted apart in summaries).
    """
    if isinstance(exc, PoolTimeout):
        return MathVerdict.fail("timeout", f"the check of this answer took longer than {timeout:g}s")
    if isinstance(exc, WorkerError) and exc.type_name in _RESOURCE_ERRORS:
        return MathVerdict.fail("unparseable", f"the answer exhausted a resource ({exc.type_name})")
    if isinstance(exc, WorkerDied) and exc.during_call:
        return MathVerdict.fail("unparseable", f"the answer crashed its checker process ({exc})")
    if isinstance(exc, WorkerError):  # the check raised on this response: a grader bug, scored 0
        return MathVerdict.fail("incorrect", f"{GRADER_FAILED}: the math check raised {exc}"[:500])
    return MathVerdict.fail("error", f"math check failed: {exc}")


def check(
    response: str,
    *,
    reference: object,
    options: MathOptions | None = None,
    pool: WorkerPool | None = None,
    timeout: float = DEFAULT_TIMEOUT,
    **overrides: Any,
) -> MathVerdict:
    """Check ``response`` against ``reference`` in a worker process with a hard timeout.

    ``overrides`` are :class:`MathOptions` fields (``strict=True``, ``multi_answer="last"``, ...)
    applied on top of ``options``. Example::

        >>> check("... so the answer is \\\\boxed{\\\\frac{1}{2}}", reference="0.5").passed
        True
    """
    opts = _resolve_options(options, overrides)
    runner = pool if pool is not None else default_pool()
    try:
        return runner.submit(check_inline, response, reference=reference, options=opts, timeout=timeout)
    except PoolError as exc:
        return _pooled_failure(exc, timeout)


async def acheck(
    response: str,
    *,
    reference: object,
    options: MathOptions | None = None,
    pool: WorkerPool | None = None,
    timeout: float = DEFAULT_TIMEOUT,
    **overrides: Any,
) -> MathVerdict:
    """Async :func:`check`: awaits the pooled check without blocking the event loop."""
    opts = _resolve_options(options, overrides)
    runner = pool if pool is not None else default_pool()
    try:
        return await runner.asubmit(
            check_inline, response, reference=reference, options=opts, timeout=timeout
        )
    except PoolError as exc:
        return _pooled_failure(exc, timeout)
