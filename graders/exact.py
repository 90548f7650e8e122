"""Exact-answer grading for tasks with one canonical answer (procedural tasks, short strings).

The response must commit to exactly one answer, in one of these forms (checked in order):

1. ``\\boxed{X}``;
2. a line ``Answer: X`` (also "The answer is X", "Final answer: X");
3. for integers only: a final line ``<expression> = X`` (one ``=`` only);
4. the whole response is the answer (a trailing period is allowed).

Several different committed answers fail ("every option at once"); so do empty answers and
answers that are not literal values (``3+4`` is not ``7``). Nothing is ever evaluated.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Literal

from graders.grade import Grade

__all__ = ["ExactGrader", "extract_committed", "normalize_integer"]

MAX_RESPONSE_CHARS = 20_000
_BOXED = re.compile(r"\\boxed\{([^{}]{0,200})\}")
_ANSWER_LINE = re.compile(
    r"^[ \t*#>-]*(?:final answer|the answer is|answer)\s*(?:is)?\s*[:=]?\s*(.{1,200}?)[ \t*]*$",
    re.IGNORECASE | re.MULTILINE,
)
_INT = re.compile(r"[+-]?(?:\d{1,3}(?:,\d{3})+|\d+)")
_FINAL_EQ = re.compile(r"^[^=\n]{1,200}=\s*([+-]?\d[\d,]*)\s*\.?\s*$")


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
    if len(t) >= 2 and t[0] == t[-1] and t[0] in "\"'`":
        t = t[1:-1]
    return t.rstrip(".").strip() if not t.endswith("..") else t


def extract_committed(response: str, *, kind: Literal["integer", "text"]) -> tuple[list[str], str]:
    """All answers the response commits to, by the first form that is present, and the form."""
    boxed = _BOXED.findall(response)
    if boxed:
        return [b.strip() for b in boxed], "boxed"
    lines = [m.group(1) for m in _ANSWER_LINE.finditer(response)]
    if lines:
        return [_clean_text(x) for x in lines], "answer line"
    whole = response.strip()
    if kind == "integer" and whole:
        m = _FINAL_EQ.match(whole.splitlines()[-1].strip())
        if m:
            return [m.group(1)], "final equation"
    if whole and "\n" not in whole:
        return [_clean_text(whole)], "whole response"
    return [], "none"


@dataclass(frozen=True)
class ExactGrader:
    """Grader for a single canonical answer (an integer or a short string).

    ``reference`` is the answer (str or int). ``case_sensitive`` applies to text answers.
    """

    kind: Literal["integer", "text"] = "integer"
    case_sensitive: bool = True

    def verdict(self, response: str, reference: Any) -> Grade:
        if len(response) > MAX_RESPONSE_CHARS:
            return Grade.incorrect(reason=f"response longer than {MAX_RESPONSE_CHARS} characters")
        candidates, form = extract_committed(response, kind=self.kind)
        if not candidates:
            return Grade.incorrect(reason="no committed answer found")
        normalized = {self._norm(c) for c in candidates}
        if None in normalized:
            bad = next(c for c in candidates if self._norm(c) is None)
            return Grade.incorrect(extracted=bad, reason=f"not a literal {self.kind} value ({form})")
        if len(normalized) > 1:
            return Grade.incorrect(extracted=candidates[-1], reason="committed to several different answers")
        (answer,) = normalized
        expected = self._norm(str(reference))
        if expected is None:
            return Grade.error(f"reference {reference!r} is not a valid {self.kind}")
        if answer == expected:
            return Grade.correct(extracted=answer, reason=f"matches ({form})")
        return Grade.incorrect(extracted=answer, reason=f"expected {expected} ({form})")

    def _norm(self, text: str) -> str | None:
        if self.kind == "integer":
            return normalize_integer(text)
        t = _clean_text(text)
        if not t:
            return None
        return t if self.case_sensitive else t.casefold()

    async def __call__(self, response: str, *, reference: Any) -> Grade:
        return self.verdict(response, reference)
