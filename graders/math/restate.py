"""From an extracted answer to the value it commits to, before any comparison.

- :func:`strip_thinking`: a reasoning model's ``<think>...</think>`` draft is not its answer;
  only the text after the last ``</think>`` is read (none when the thinking never ends).
- :func:`restate`: ``x = 5`` commits to 5, ``x > 2`` (against an interval) to ``(2, \\infty)``,
  and an equation that names no variable (``2 = 1591``) or a chained one commits to nothing
  (see :mod:`graders.math.relations`); ``\\equiv``, ``:=`` and ``\\coloneqq`` are read as ``=``.
- :func:`stray_words`: words in ``\\text{}`` that are not units (``1591 \\text{ (or 1592)}``,
  ``5 \\text{ if even}``) make an answer unreadable where the reference is not a word answer:
  Math-Verify drops ``\\text{}`` contents, which would let any remark ride along.
"""

from __future__ import annotations

import re

from graders.math.parse import Answer, read_answer, read_reference
from graders.math.relations import as_interval, state_value, stated_names, top_level_count
from graders.math.solutions import is_solution_list, solution_list
from graders.math.units import unit_scale

__all__ = ["restate", "stray_words", "strip_thinking"]

# an identity or a definition states an equation: ``a \\equiv b`` and ``a := b`` are read as
# ``a = b`` (Math-Verify compares only their right side, so ``\\pi + 1 \\equiv \\pi`` would pass)
_EQUALITY_LIKE = re.compile(r"\\(?:equiv|coloneqq|eqqcolon)(?![A-Za-z])|\u2261|\u2254|:=|=:")
_THINK_OPEN = re.compile(r"<think(?:ing)?>", re.IGNORECASE)
_THINK_CLOSE = re.compile(r"</think(?:ing)?>", re.IGNORECASE)
_TEXT_OPENER = re.compile(
    r"\\(?:text|textrm|textbf|textit|textsf|texttt|mbox|mathrm|mathbf|mathit|emph|operatorname)\s*\{"
)
_WORD = re.compile(r"(?<![\\A-Za-z])[A-Za-z]+")  # words, not \\commands
# a literal number, then bare words of two letters or more ("0 if even", "1591 squared")
_BARE_WORDS = re.compile(r"^[-+]?[\d.,]+\s+(?P<words>[A-Za-z]{2,}(?:\s+[A-Za-z]{2,})*)$")


def _text_groups(text: str) -> list[str]:
    """Contents of every ``\\text{...}``-like group (nested braces included)."""
    groups: list[str] = []
    covered = 0
    for m in _TEXT_OPENER.finditer(text):
        if m.start() < covered:
            continue  # inside a group already read (its words are read with it)
        depth, i = 1, m.end()
        while i < len(text) and depth:
            depth += {"{": 1, "}": -1}.get(text[i], 0)
            i += 1
        groups.append(text[m.end() : i - 1] if depth == 0 else text[m.end() :])
        covered = i
    return groups


def strip_thinking(response: str) -> str:
    """The response after its last ``</think>``; empty when a ``<think>`` is never closed."""
    closes = list(_THINK_CLOSE.finditer(response))
    if closes:
        return response[closes[-1].end() :]
    opened = _THINK_OPEN.search(response)
    return response[: opened.start()] if opened is not None else response


def _interval_like(text: str) -> bool:
    t = text.strip()
    return len(t) > 2 and t[0] in "([" and t[-1] in ")]" and "," in t


_VARIABLE = re.compile(r"(?<![\\A-Za-z])[A-Za-z](?![A-Za-z])")


def _is_relation(text: str) -> bool:
    """One equation with a variable on both sides (``y = 2x + 1``), not a value (``x = 5``)."""
    if top_level_count(text) != 1 or "," in text:
        return False
    left, right = text.split("=", 1)
    return _VARIABLE.search(left) is not None and _VARIABLE.search(right) is not None


def restate(reference: Answer, answer: Answer) -> tuple[Answer, Answer] | str:
    """``(reference, answer)`` as the values they state, or why the answer states none."""
    if _EQUALITY_LIKE.search(reference.text):
        reference = read_reference(_EQUALITY_LIKE.sub("=", reference.text))
    if _EQUALITY_LIKE.search(answer.text):
        answer = read_answer(_EQUALITY_LIKE.sub("=", answer.text))
    if is_solution_list(reference.text):
        # several solutions, however written: compared as the plain list (graders.math.solutions)
        listed = solution_list(reference.text)
        if listed is not None:
            reference = read_reference(listed)
        listed = solution_list(answer.text)
        if listed is not None:
            answer = read_answer(listed)
    if _is_relation(reference.text) and top_level_count(answer.text) == 1 and "," not in answer.text:
        # an equation between variables (a line, a curve) is answered by an equivalent equation,
        # rearranged or scaled (``2y = 4x + 2`` for ``y = 2x + 1``): compared as equations
        return reference, answer
    ref_value, _ = state_value(reference.text)
    if ref_value is None:  # the reference is an equation (a plane, a curve): compare equations
        if top_level_count(answer.text) > top_level_count(reference.text):
            return "a chained equation (a = b = c) where one equation is asked"
        return reference, answer
    named, asked = stated_names(answer.text), stated_names(reference.text)
    if named and asked and not named <= asked:
        extra = ", ".join(sorted(named - asked))
        return f"the answer gives a value to {extra}, the reference to {', '.join(sorted(asked))}"
    if ref_value != reference.text:
        reference = read_reference(ref_value)
    value, reason = state_value(answer.text)
    if value is None:
        return reason
    if value != answer.text:
        answer = read_answer(value)
    if _interval_like(reference.text):
        interval = as_interval(answer.text)
        if interval is not None:
            answer = read_answer(interval)
    elif _interval_like(answer.text):
        interval = as_interval(reference.text)
        if interval is not None:
            reference = read_reference(interval)
    return reference, answer


def _allowed_words(reference: Answer) -> set[str]:
    return {w.lower() for group in _text_groups(reference.text) for w in _WORD.findall(group)}


def stray_words(reference: Answer, answer: Answer) -> str | None:
    """Why the ``\\text{}`` in ``answer`` is not a unit, or None (see the module docstring)."""
    if reference.is_text_answer or answer.number is not None or answer.letter is not None:
        return None
    bare = _BARE_WORDS.match(answer.text)
    if bare is not None and unit_scale(bare.group("words"), in_text=False) is None:
        return f"the words {bare.group('words')!r} after the number are not a unit; give the value alone"
    allowed: set[str] | None = None
    for group in _text_groups(answer.text):
        if any(ch.isdigit() for ch in group):
            return f"a number inside \\text{{{group.strip()}}}: commit to one value"
        for word in _WORD.findall(group):
            if len(word) == 1 or unit_scale(word, in_text=True) == 1:
                continue
            if allowed is None:
                allowed = _allowed_words(reference)
            if word.lower() not in allowed:
                return f"the words {group.strip()!r} are not a unit; give the value alone"
    return None
