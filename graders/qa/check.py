"""`check`: grade a short answer against gold aliases (EM, F1, and the equivalence layer)."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from graders.alternatives import alternative_lines
from graders.boxes import find_boxed
from graders.commitment import AMBIGUOUS, ambiguity, committed_end
from graders.qa.equivalence import EquivalenceOptions, match_alias
from graders.qa.lexicon import RETRACTIONS
from graders.qa.normalize import (
    canonical_text,
    canonical_tokens,
    repair_mojibake,
    squad_normalize,
    squad_tokens,
)
from graders.reader import reader_view

__all__ = [
    "DEFAULT_MAX_ANSWER_CHARS",
    "MAX_BOXES",
    "QAVerdict",
    "check",
    "exact_match",
    "extract_answer",
    "token_f1",
]

DEFAULT_MAX_ANSWER_CHARS = 200
"""An extracted answer longer than this is not a short answer and is rejected."""

QAStatus = Literal["correct", "incorrect"]

_ANSWER_LINE = re.compile(r"^[ \t*#>_-]*(?:final\s+)?answer\s*[:：]\s*(.*)$", re.IGNORECASE | re.MULTILINE)
_LEAD_IN = re.compile(r"^(?:the\s+)?(?:final\s+)?answer\s+is\s*[:：]?\s*", re.IGNORECASE)


@dataclass(frozen=True)
class QAVerdict:
    """The verdict on one response.

    ``passed`` is the equivalence verdict (the reward); ``em`` and ``f1`` are the standard SQuAD
    exact match and best token F1 over the aliases, reported alongside.
    """

    passed: bool
    em: bool
    f1: float
    status: QAStatus
    reason: str
    extracted: str
    matched_alias: str | None = None
    rule: str | None = None


def exact_match(prediction: str, answers: Sequence[str]) -> bool:
    """SQuAD exact match against any alias."""
    pred = squad_normalize(prediction)
    return any(pred == squad_normalize(a) for a in answers)


def token_f1(prediction: str, answers: Sequence[str]) -> float:
    """Best SQuAD token F1 against the aliases."""
    pred = squad_tokens(prediction)
    best = 0.0
    for alias in answers:
        gold = squad_tokens(alias)
        common = sum((Counter(pred) & Counter(gold)).values())
        if common == 0:
            continue
        precision, recall = common / len(pred), common / len(gold)
        best = max(best, 2 * precision * recall / (precision + recall))
    return best


def extract_answer(response: str) -> str:
    """The short answer in ``response``: the last ``Answer: ...`` line if any, else the text,
    with a leading "The answer is" and trailing full stop removed."""
    found = _ANSWER_LINE.findall(response[-10_000:])
    text = found[-1] if found else response
    text = _LEAD_IN.sub("", text.strip()).strip()
    return text.rstrip(".").strip().strip("*").strip()


_MAX_READ_CHARS = 10_000
"""Only the end of a response is read (the answer is asked for on its last line)."""

MAX_BOXES = 8
"""A response with more ``\\boxed``/``\\fbox`` openings than this is rejected unread."""


def _boxed(response: str) -> list[str] | None:
    """Contents of the response's boxed answers ([] when none; None when there are too many)."""
    if "\\boxed" not in response and "\\fbox" not in response:
        return []
    if response.count("\\boxed") + response.count("\\fbox") > MAX_BOXES:
        return None
    return find_boxed(response, max_answer_chars=DEFAULT_MAX_ANSWER_CHARS)


def _retraction_after_answer(response: str) -> str | None:
    """A retraction or doubt written after the last ``Answer:`` line or box, or None.

    The prompt asks for the answer on the last line; text after it that takes the answer back
    ("Answer: Paris", then "Actually, it's London.") or doubts it ("I'm not sure") is what a reader
    takes, so the answer line alone is not the response's answer.
    """
    tail = response[-10_000:]
    lines = list(_ANSWER_LINE.finditer(tail))
    start = lines[-1].end() if lines else -1
    box = max(tail.rfind("\\boxed"), tail.rfind("\\fbox"))
    if box >= 0:
        close = tail.find("}", box)
        start = max(start, close + 1 if close >= 0 else len(tail))
    if start < 0:
        return None
    after = f" {canonical_text(tail[start:])} "
    retraction = next((phrase for phrase in RETRACTIONS if f" {phrase} " in after), None)
    if retraction is None:
        offered = alternative_lines(tail[start:])  # "or London", "Alternatively, London."
        retraction = offered[0].strip()[:40] if offered else None
    return retraction


def _same_answer(value: str, committed: str) -> bool:
    """Whether a value stated after the answer names the same thing (its part before a comma
    counts too: "Paris, the capital" restates Paris)."""
    for candidate in (value, value.split(",", 1)[0]):
        if canonical_tokens(candidate) == canonical_tokens(committed):
            return True
        if match_alias(candidate, [committed], EquivalenceOptions()) is not None:
            return True
    return False


def check(
    response: str,
    *,
    answers: Sequence[str],
    max_answer_chars: int = DEFAULT_MAX_ANSWER_CHARS,
    equivalence: EquivalenceOptions | None = None,
) -> QAVerdict:
    """Grade ``response`` against the gold ``answers`` (aliases).

    Raises ValueError when ``answers`` is empty (a task bug); never raises for model output.
    """
    aliases = [a for a in answers if isinstance(a, str) and a.strip()]
    if not aliases:
        raise ValueError("answers must hold at least one non-empty gold alias")
    if not isinstance(response, str):
        return QAVerdict(False, False, 0.0, "incorrect", "response is not text", "")
    response = reader_view(repair_mojibake(response[-_MAX_READ_CHARS:]))  # "**Answer**: X" is "Answer: X"
    lines = _ANSWER_LINE.findall(response[-10_000:])
    declared = {canonical_tokens(a) for a in lines if "\\boxed" not in a and "\\fbox" not in a}
    if len(declared) > 1:
        return QAVerdict(False, False, 0.0, "incorrect", "several different 'Answer:' lines", "")
    boxes = _boxed(response)
    if boxes is None:
        return QAVerdict(False, False, 0.0, "incorrect", f"more than {MAX_BOXES} \\boxed openings", "")
    boxed = {canonical_tokens(b) for b in boxes}
    if len(boxed) > 1:
        return QAVerdict(False, False, 0.0, "incorrect", "several different boxed answers", "")
    if boxed and declared and boxed != declared:
        return QAVerdict(False, False, 0.0, "incorrect", "the boxed answer and the 'Answer:' line differ", "")
    extracted = boxes[0].strip() if boxes else extract_answer(response)
    if not extracted:
        return QAVerdict(False, False, 0.0, "incorrect", "no answer found", extracted)
    retraction = _retraction_after_answer(response)
    if retraction is not None:
        reason = f"{AMBIGUOUS}: the answer is taken back or doubted after it ({retraction!r})"
        return QAVerdict(False, False, 0.0, "incorrect", reason, extracted[:80])
    changed = ambiguity(response[committed_end(response) :], [extracted], _same_answer)
    if changed is not None:
        reason = f"{AMBIGUOUS}: another answer after the committed one ({changed.text[:60]!r})"
        return QAVerdict(False, False, 0.0, "incorrect", reason, extracted[:80])
    if len(extracted) > max_answer_chars:
        return QAVerdict(
            False,
            False,
            0.0,
            "incorrect",
            f"answer longer than {max_answer_chars} characters",
            extracted[:80],
        )
    em = exact_match(extracted, aliases)
    f1 = token_f1(extracted, aliases)
    match = match_alias(extracted, aliases, equivalence or EquivalenceOptions())
    if match is None:
        return QAVerdict(False, em, f1, "incorrect", "no gold alias is equivalent", extracted)
    return QAVerdict(
        True,
        em,
        f1,
        "correct",
        f"equivalent to {match.alias!r} ({match.rule})",
        extracted,
        match.alias,
        match.rule,
    )
