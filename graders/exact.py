"""Exact-answer grading for tasks with one canonical answer (procedural tasks, short strings).

A response commits to an answer through any of these forms, and *every* form present counts:
``\\boxed{X}``/``\\fbox{X}``; a ``#### X`` line; an ``Answer: X`` line (or "The (final) answer is
X", "A: X"); for integers, a final line ``<expression> = X`` (one ``=``, not a comparison or an
update) and, once another form is present, a final bare integer; opt-in (``statements=True``), a
final line ending ``... is "X".``; and, only when nothing else is present, the whole one-line
response. A box offered as one of alternatives, or a value a hedge offers on a later line, is one
more commitment.

All committed answers must agree (``Answer: 8`` then ``\\boxed{7}`` fails, whichever is right).
Empty answers, unclosed or too many boxes, and answers that are not literal values (``3+4`` is
not ``7``) fail too. Nothing is ever evaluated. Examples and the red-team cases: docs/graders.md,
"graders.exact".
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Literal

from graders.alternatives import alternative_lines
from graders.boxes import box_in_context, boxed_spans
from graders.commitment import AMBIGUOUS, ambiguity, committed_end
from graders.extract import ExtractConfig, extract_answers
from graders.grade import Grade
from graders.reader import MARKUP_CHARS, reader_view
from graders.total import total
from graders.typography import fold_numerals

__all__ = ["Commitment", "Commitments", "ExactGrader", "extract_committed", "normalize_integer"]

AnswerKind = Literal["integer", "text"]

MAX_RESPONSE_CHARS = 20_000
_BOXED_ONLY = ExtractConfig(forms=("boxed",), max_answer_chars=200)
_HASH_LINE = re.compile(r"^[ \t]*####[ \t]*(\S[^\n]{0,200}?)[ \t]*$", re.MULTILINE)
_ANSWER_LINE = re.compile(
    r"^[ \t*#>-]*(?:(?:the\s+)?(?:final\s+)?answer\b|a(?=[ \t*]*:))"
    r"\s*(?:is\b\s*)?(?:[:=]\s*)?([^:=\s].{0,199}?)[ \t*]*$",
    re.IGNORECASE | re.MULTILINE,
)
_INT = re.compile(r"[+-]?(?:\d{1,3}(?:,\d{3})+|\d+)")
# one ``=`` that is not part of a comparison or an update (``!=``, ``<=``, ``+=``: ``3 + 5 != 7``
# asserts the opposite of 7); each whitespace run belongs to one quantifier, so matching is linear
_FINAL_EQ = re.compile(r"^[^=\n]{0,199}[^=\n!<>+\-*/~^%&|]=\s*([+-]?\d[\d,]*)\s*(?:\.\s*)?$")
_STATEMENT = re.compile(r"\bis\s*(?::\s*)?([\"'])((?:(?!\1)[^\n]){1,200})\1\s*(?:[.!]\s*)?$", re.IGNORECASE)
# every ``is "X"`` on the final statement's line that is not asked (``It is 'k' or it is 'l'.``)
_STATEMENTS = re.compile(r"\bis\s*(?::\s*)?([\"'])((?:(?!\1)[^\n]){1,200})\1(?![ \t]*\?)", re.IGNORECASE)
# a box with "or" (or a slash) right before or after it on its line, across $, \\( \\) and **
_ALTERNATIVE_BEFORE = re.compile(r"(?:(?<![A-Za-z])or|/)[ \t]*(?:\$|\\\(|\*\*)?[ \t]*$", re.IGNORECASE)
_ALTERNATIVE_AFTER = re.compile(r"[ \t]*(?:\$|\\\)|\*\*)?[ \t]*(?:\(?[ \t]*or(?![A-Za-z])|/)", re.IGNORECASE)
_LATEX_TEXT = re.compile(r"\\(?:text|textbf|mathrm|mathbf|texttt)\{([^{}]*)\}")
_ANY_INT = re.compile(r"(?<![\w.])[+-]?\d[\d,]*(?![\w.]?\d)")


@dataclass(frozen=True)
class Commitment:
    """One answer a response commits to, and the form it was found in (``boxed``, ...)."""

    form: str
    answer: str


@dataclass(frozen=True)
class Commitments:
    """Every answer a response commits to, in form order; ``flag`` names a structural problem
    (``too_many_boxes``, ``unclosed_box``, ...) that fails the response whatever its answers."""

    found: tuple[Commitment, ...]
    flag: str | None = None


def normalize_integer(text: str) -> str | None:
    """``"1,234"`` -> ``"1234"``; None unless ``text`` is a plain integer literal."""
    t = text.strip().rstrip(".").strip()
    if t.startswith("$") and t.endswith("$"):
        t = t[1:-1].strip()
    if not _INT.fullmatch(t):
        return None
    sign = "-" if t.startswith("-") else ""
    digits = t.lstrip("+-").replace(",", "").lstrip("0") or "0"
    return ("" if digits == "0" else sign) + digits


def _clean_text(text: str) -> str:
    t = text.strip().strip("*").strip()
    latex = _LATEX_TEXT.fullmatch(t)
    if latex:
        t = latex.group(1).strip()
    for _ in range(2):  # 'X'. and "X." both give X; an ellipsis is kept
        if t.endswith(".") and not t.endswith(".."):
            t = t[:-1].strip()
        if len(t) >= 2 and t[0] == t[-1] and t[0] in "\"'`":
            t = t[1:-1].strip()
    return t


def extract_committed(response: str, *, kind: AnswerKind, statements: bool = False) -> Commitments:
    """Every answer ``response`` commits to, in every form present (see the module docstring)."""
    boxed = extract_answers(response, _BOXED_ONLY)
    if boxed.flag is not None:
        return Commitments(found=(), flag=boxed.flag)
    if boxed.answers and _box_among_alternatives(response):
        return Commitments(found=(), flag="alternative_answers")
    found = [Commitment("boxed", b) for b in boxed.answers]
    found += [Commitment("#### line", m.group(1)) for m in _HASH_LINE.finditer(response)]
    found += [
        Commitment("answer line", _clean_text(m.group(1)))
        for m in _ANSWER_LINE.finditer(response)
        if not (boxed.answers and _is_one_box(m.group(1)))  # "Answer: $\boxed{7}$" is the box's
    ]
    lines = [line.strip() for line in response.splitlines() if line.strip()]
    last = lines[-1] if lines else ""
    if kind == "integer":
        equation = _FINAL_EQ.match(last)
        if equation:
            found.append(Commitment("final equation", equation.group(1)))
    if statements and _STATEMENT.search(last):
        found += [Commitment("final statement", m.group(2)) for m in _STATEMENTS.finditer(last)]
    if found and kind == "integer" and len(lines) > 1 and normalize_integer(_clean_text(last)) is not None:
        # a bare number ending the response after an answer ("\boxed{7}\n8") is one too
        found.append(Commitment("final line", _clean_text(last)))
    if not found and len(lines) == 1:
        found.append(Commitment("whole response", _clean_text(last)))
    if found:
        found += _later_alternatives(response, kind)
    return Commitments(found=tuple(found))


def _first_commitment(response: str) -> int:
    """Where the first committing form (a box, a ``####`` line, an answer line) starts."""
    starts = [m.start() for m in (_HASH_LINE.search(response), _ANSWER_LINE.search(response)) if m]
    starts += [start for start, _, _ in boxed_spans(response, _BOXED_ONLY.max_answer_chars)[:1]]
    return min(starts, default=len(response))


def _later_alternatives(response: str, kind: AnswerKind) -> list[Commitment]:
    """Values offered on a line after the first answer by a hedge (the same hedge rules as the
    math grader): each counts as a commitment, so a different one fails the response."""
    line_end = response.find("\n", _first_commitment(response))
    if line_end == -1:
        return []
    out: list[Commitment] = []
    for line in alternative_lines(response[line_end + 1 :]):
        if kind == "integer":
            out += [Commitment("alternative on a later line", m.group(0)) for m in _ANY_INT.finditer(line)]
        else:
            out.append(Commitment("alternative on a later line", line.strip()))
    return out


def _is_one_box(text: str) -> bool:
    """Whether ``text`` is exactly one box (``$\\boxed{7}$.``, ``**\\boxed{7}**``): an answer
    line of that kind commits to the box's answer, which the boxed form already holds."""
    t = text.strip().strip("*").strip()
    if t.endswith("."):
        t = t[:-1].strip()
    for left, right in (("$$", "$$"), ("$", "$"), ("\\(", "\\)"), ("\\[", "\\]")):
        if len(t) > len(left) + len(right) and t.startswith(left) and t.endswith(right):
            t = t[len(left) : -len(right)].strip()
            break
    spans = boxed_spans(t, _BOXED_ONLY.max_answer_chars)
    return len(spans) == 1 and spans[0][0] == 0 and spans[0][1] == len(t)


def _box_among_alternatives(response: str) -> bool:
    """Whether a box is offered as one of alternatives on its line: ``\\boxed{7} or 8``,
    ``8 or \\boxed{7}``, ``\\boxed{7} (or 8)``."""
    spans = boxed_spans(response, _BOXED_ONLY.max_answer_chars)
    return box_in_context(response, spans, before=_ALTERNATIVE_BEFORE, after=_ALTERNATIVE_AFTER)


@dataclass(frozen=True)
class ExactGrader:
    """Grader for a single canonical answer (an integer or a short string).

    ``reference`` is the answer (str or int). ``case_sensitive`` applies to text answers.
    ``statements`` also accepts a final line ``... is "X".`` as a commitment to ``X`` (for
    small models that answer in a sentence); it must agree with every other form present.
    """

    kind: AnswerKind = "integer"
    case_sensitive: bool = True
    statements: bool = False

    def verdict(self, response: str, reference: Any) -> Grade:
        """Grade ``response`` against ``reference`` (synchronously)."""
        if len(response) > MAX_RESPONSE_CHARS:
            return Grade.incorrect(reason=f"response longer than {MAX_RESPONSE_CHARS} characters")
        # what a reader sees: emphasis, inline math and HTML rendered, a Unicode minus,
        # full-width digits and thin spaces as the ASCII number they show
        # (a reference that is itself written with markup characters, "x*y*z", is compared
        # with the text as typed: rendering would change the answer it asks for)
        markup_answer = any(ch in MARKUP_CHARS for ch in str(reference))
        response = fold_numerals(response) if markup_answer else reader_view(fold_numerals(response))
        committed = extract_committed(response, kind=self.kind, statements=self.statements)
        if committed.flag is not None:
            return Grade.incorrect(reason=f"malformed answer: {committed.flag.replace('_', ' ')}")
        if not committed.found:
            return Grade.incorrect(reason="no committed answer found")
        for c in committed.found:
            if self._norm(c.answer) is None:
                return Grade.incorrect(
                    extracted=c.answer, reason=f"not a literal {self.kind} value ({c.form})"
                )
        distinct: dict[str | None, Commitment] = {}
        for c in committed.found:
            distinct.setdefault(self._norm(c.answer), c)
        if len(distinct) > 1:
            listed = ", ".join(f"{c.answer!r} ({c.form})" for c in distinct.values())
            return Grade.incorrect(
                extracted=committed.found[-1].answer,
                reason=f"{AMBIGUOUS}: committed to different answers: {listed}",
            )
        changed = ambiguity(
            response[committed_end(response) :], [a for a in distinct if a is not None], self._same
        )
        if changed is not None:
            return Grade.incorrect(
                extracted=changed.value,
                reason=f"{AMBIGUOUS}: changed after the answer ({changed.text[:60]!r})",
            )
        (answer,) = distinct
        forms = " + ".join(dict.fromkeys(c.form for c in committed.found))
        expected = self._norm(fold_numerals(str(reference)))
        if expected is None:
            return Grade.error(f"reference {reference!r} is not a valid {self.kind}")
        if answer == expected:
            return Grade.correct(extracted=answer, reason=f"matches ({forms})")
        return Grade.incorrect(extracted=answer, reason=f"expected {expected} ({forms})")

    def _same(self, value: str, committed: str) -> bool | None:
        """Whether a later value is the committed answer (None when it is no literal value)."""
        norm = self._norm(value)
        return None if norm is None else norm == committed

    def _norm(self, text: str) -> str | None:
        if self.kind == "integer":
            return normalize_integer(text)
        t = _clean_text(text)
        if not t:
            return None
        return t if self.case_sensitive else t.casefold()

    @total
    async def __call__(self, response: str, *, reference: Any) -> Grade:
        return self.verdict(response, reference)
