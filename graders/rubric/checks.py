"""Deterministic rubric checks: regex, contains, length, a registered grader, a function.

Each is built once from its spec (regexes compiled, graders and functions resolved, so a bad
rubric fails on load) and then evaluated per response into a :class:`~graders.grade.Check`.
A check that raises on a response is a failed check (``grader_failed``, scored 0; see
:mod:`graders.total`); one whose infrastructure fails is a check with status ``error``.

Regex checks run in a :class:`~graders.pool.WorkerPool` with a hard, parent-side timeout: an
author's pattern such as ``(a+)+$`` backtracks for seconds on a short input, cannot be
interrupted inside the interpreter, and must not block the event loop. Past ``timeout_s`` the
worker is killed and the check is a ``timeout``.
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from graders.grade import GRADER_FAILED, Check, Grade, GradeStatus
from graders.pool import PoolConfig, PoolError, PoolTimeout, WorkerPool, shared_pool
from graders.protocol import Grader
from graders.reader import MARKUP_CHARS, reader_view
from graders.rubric.errors import RubricError
from graders.rubric.registry import import_object, make_grader
from graders.rubric.spec import ContainsCheck, FunctionCheck, GraderCheck, LengthCheck, RegexCheck
from graders.total import grade_of_exception
from graders.typography import canonical_text, strip_hidden, strip_invisible

__all__ = [
    "DeterministicCheck",
    "build_check",
    "default_regex_pool",
    "error_check",
    "regex_matches",
    "warm_up",
]


def default_regex_pool() -> WorkerPool:
    """The shared pool of regex checks (two workers, 512 MiB each; started on first use)."""
    return shared_pool("graders.rubric.regex", PoolConfig(size=2, memory_mb=512, initializer=warm_up))


def warm_up() -> None:
    """Pool initializer: unpickling it imports this module in the worker at start-up, so the
    first match's timeout is not spent on imports."""


def regex_matches(pattern: str, flags: int, fullmatch: bool, text: str) -> bool:
    """Whether ``pattern`` matches ``text`` (runs inside a pool worker; ``re`` caches the pattern)."""
    compiled = re.compile(pattern, flags)
    return (compiled.fullmatch(text) if fullmatch else compiled.search(text)) is not None


def error_check(spec_id: str, weight: float, reason: str, *, timed_out: bool = False) -> Check:
    """A check that could not be graded."""
    return Check(
        name=spec_id,
        score=0.0,
        weight=weight,
        passed=False,
        status="timeout" if timed_out else "error",
        reason=reason,
    )


def _verdict(spec_id: str, weight: float, ok: bool, reason: str) -> Check:
    return Check(
        name=spec_id,
        score=1.0 if ok else 0.0,
        weight=weight,
        passed=ok,
        status="correct" if ok else "incorrect",
        reason=reason,
    )


def _from_grade(spec_id: str, weight: float, grade: Grade, origin: str) -> Check:
    reason = f"{origin}: {grade.reason}" if grade.reason else origin
    if grade.grader_failed:  # keep the tag first, so the rubric's grade can count it
        reason = f"{GRADER_FAILED}: {origin}: {grade.reason.removeprefix(GRADER_FAILED + ':').strip()}"
    if grade.is_error:
        return error_check(spec_id, weight, reason, timed_out=grade.status == "timeout")
    return Check(
        name=spec_id,
        score=grade.score,
        weight=weight,
        passed=grade.passed,
        status=grade.status,
        reason=reason,
    )


@dataclass(frozen=True)
class DeterministicCheck:
    """A resolved deterministic check: ``await check(response, reference)`` -> Check."""

    id: str
    weight: float
    run: Callable[[str, Any], Any]
    """Returns a Check, or an awaitable of one."""

    async def __call__(self, response: str, reference: Any) -> Check:
        try:
            result = self.run(response, reference)
            if inspect.isawaitable(result):
                result = await result
        except Exception as exc:  # a check that raised on the response: see graders.total
            grade = grade_of_exception(exc)
            if grade.is_error:
                return error_check(self.id, self.weight, grade.reason[:300])
            return _from_grade(self.id, self.weight, grade, "check")
        if not isinstance(result, Check):  # pragma: no cover - internal contract
            return error_check(self.id, self.weight, "internal: check returned no result")
        return result


def _regex(spec: RegexCheck, pool: WorkerPool | None) -> DeterministicCheck:
    re.compile(spec.pattern, spec.flags())  # validated by the spec already; fail on load if not
    want = spec.expect == "match"
    shown = f"/{spec.pattern[:60]}/ ({spec.mode})"

    async def run(response: str, reference: Any) -> Check:
        runner = pool if pool is not None else default_regex_pool()
        # a pattern that must not match is tried on the markup and on what a reader sees (a
        # bullet list written with "\u2022" or <ul> renders as "- " lines): fail closed
        texts = [response]
        if not want and reader_view(response) != response:
            texts.append(reader_view(response))
        try:
            matched = False
            for text in texts:
                matched = matched or await runner.asubmit(
                    regex_matches,
                    spec.pattern,
                    spec.flags(),
                    spec.mode == "fullmatch",
                    text,
                    timeout=spec.timeout_s,
                )
        except PoolTimeout:
            # the response made the pattern run away: its failure (scored 0), not the grader's
            reason = f"timeout: {shown} ran past {spec.timeout_s:g}s on this response; killed"
            return _verdict(spec.id, spec.weight, False, reason)
        except PoolError as exc:
            return error_check(spec.id, spec.weight, f"{shown} could not run: {exc}"[:300])
        ok = matched == want
        return _verdict(spec.id, spec.weight, ok, f"{'matches' if matched else 'does not match'} {shown}")

    return DeterministicCheck(spec.id, spec.weight, run)


def _visible(text: str) -> str:
    """``text`` without the characters that render as nothing (format characters, fillers)."""
    return strip_invisible(text)


def _plain(text: str, *, collapse: bool = True) -> str:
    """What a reader sees, for comparing strings: invisible characters dropped, compatibility
    forms folded (NFKC: full-width letters, no-break spaces), look-alike letters of other scripts
    folded to Latin (TR39 confusables), curly quotes and dashes as ASCII (see
    :mod:`graders.typography`), whitespace runs as one space. ``As an\u200b AI``, ``As an\u00a0AI``,
    ``\u0410s an AI`` (Cyrillic A) and ``As an\nAI`` all read ``As an AI``; ``don\u2019t`` reads
    ``don't``. ``collapse=False`` keeps whitespace as written (a required ``"```\\n"``)."""
    folded = canonical_text(_visible(text))
    return " ".join(folded.split()) if collapse else folded


def _is_markup(text: str) -> bool:
    return any(ch in MARKUP_CHARS for ch in text)


def _contains(spec: ContainsCheck) -> DeterministicCheck:
    collapse = spec.mode == "none"  # required strings keep their whitespace as written
    _plain("\u00e9\u200b")  # load the folding tables now, not during the first grade
    needles = tuple(_plain(t, collapse=collapse) for t in spec.text)
    if spec.ignore_case:
        needles = tuple(n.casefold() for n in needles)

    def run(response: str, reference: Any) -> Check:
        # Required strings ("all"/"any") are looked for in what a reader sees (reader_view:
        # Markdown and HTML rendered, comments, hidden elements and link definitions dropped);
        # forbidden ones ("none") in that view and in the markup too (fail closed: emphasis
        # inside a forbidden phrase, "c**a**t", is the phrase). Both sides compared folded.
        # A required string that is itself markup ("```", "**Note**") is looked for in the
        # markup, outside comments.
        views = [_plain(reader_view(response), collapse=collapse)]
        views.append(_plain(response if collapse else strip_hidden(response), collapse=collapse))
        hays = [seen.casefold() if spec.ignore_case else seen for seen in views]
        found = [
            original
            for original, n in zip(spec.text, needles, strict=True)
            if n and (n in hays[0] or ((collapse or _is_markup(n)) and n in hays[1]))
        ]
        if spec.mode == "none":
            raw = response.casefold() if spec.ignore_case else response
            exact = [t for t in spec.text if (t.casefold() if spec.ignore_case else t) in raw]
            found += [t for t in exact if t not in found]
        if spec.mode == "all":
            ok = len(found) == len(needles)
            missing = [t for t in spec.text if t not in found]
            reason = "contains all" if ok else f"missing {missing[:5]}"
        elif spec.mode == "any":
            ok = bool(found)
            reason = f"contains {found[0]!r}" if ok else "contains none of them"
        else:
            ok = not found
            reason = "contains none of the forbidden strings" if ok else f"contains forbidden {found[:5]}"
        return _verdict(spec.id, spec.weight, ok, reason)

    return DeterministicCheck(spec.id, spec.weight, run)


def _measure(response: str, unit: str) -> int:
    """Visible length: characters that render as nothing (zero-width spaces, BOMs, blank
    fillers) are not characters, words or lines, so they cannot pad a response to a minimum."""
    if unit == "chars":
        return len(_visible(response).strip())
    if unit == "words":
        return len(_visible(response).split())
    return len([line for line in response.splitlines() if _visible(line).strip()])


def _length(spec: LengthCheck) -> DeterministicCheck:
    def run(response: str, reference: Any) -> Check:
        n = _measure(response, spec.unit)
        ok = (spec.min is None or n >= spec.min) and (spec.max is None or n <= spec.max)
        bounds = f"[{spec.min if spec.min is not None else 0}, {spec.max if spec.max is not None else 'inf'}]"
        return _verdict(spec.id, spec.weight, ok, f"{n} {spec.unit}, allowed {bounds}")

    return DeterministicCheck(spec.id, spec.weight, run)


def _grader(spec: GraderCheck) -> DeterministicCheck:
    grader: Grader = make_grader(spec.grader, dict(spec.options))
    fixed = spec.reference

    async def run(response: str, reference: Any) -> Check:
        grade = await grader(response, reference=fixed if fixed is not None else reference)
        return _from_grade(spec.id, spec.weight, grade, f"grader {spec.grader}")

    return DeterministicCheck(spec.id, spec.weight, run)


def _function(spec: FunctionCheck) -> DeterministicCheck:
    func = import_object(spec.function)
    if not callable(func):
        raise RubricError(f"{spec.function!r} is not callable")
    options = dict(spec.options)

    async def run(response: str, reference: Any) -> Check:
        value = func(response, reference=reference, **options)
        if inspect.isawaitable(value):
            value = await value
        if isinstance(value, Grade):
            return _from_grade(spec.id, spec.weight, value, spec.function)
        if isinstance(value, bool):
            return _verdict(spec.id, spec.weight, value, f"{spec.function} returned {value}")
        if isinstance(value, (int, float)) and 0.0 <= float(value) <= 1.0:
            score = float(value)
            status: GradeStatus = "correct" if score >= 1.0 else ("partial" if score > 0 else "incorrect")
            return Check(
                name=spec.id,
                score=score,
                weight=spec.weight,
                passed=score >= 1.0,
                status=status,
                reason=f"{spec.function} returned {score:g}",
            )
        return error_check(
            spec.id,
            spec.weight,
            f"{spec.function} returned {value!r:.60}; expected a bool, a score in [0, 1] or a Grade",
        )

    return DeterministicCheck(spec.id, spec.weight, run)


def build_check(
    spec: RegexCheck | ContainsCheck | LengthCheck | GraderCheck | FunctionCheck,
    *,
    pool: WorkerPool | None = None,
) -> DeterministicCheck:
    """Resolve a deterministic check spec (raises :class:`RubricError` for a bad reference).

    ``pool`` runs regex checks (default: :func:`default_regex_pool`, started on first use).
    """
    if isinstance(spec, RegexCheck):
        return _regex(spec, pool)
    if isinstance(spec, ContainsCheck):
        return _contains(spec)
    if isinstance(spec, LengthCheck):
        return _length(spec)
    if isinstance(spec, GraderCheck):
        try:
            return _grader(spec)
        except RubricError as exc:
            raise type(exc)(f"check {spec.id!r}: {exc}") from exc
    try:
        return _function(spec)
    except RubricError as exc:
        raise type(exc)(f"check {spec.id!r}: {exc}") from exc
