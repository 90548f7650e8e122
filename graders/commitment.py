"""One commitment policy for every answer grader: the last committed answer and what follows it.

A response commits to a final answer with an answer marker (a box, a ``#### X`` line, an
``Answer:`` line, "the answer is X"). After the last marker (:func:`committed_end`) a reader may
meet a remark, which leaves the answer alone, or:

- an *answer-bearing statement*: a cue (a short lead closed by punctuation such as ``Edit:``, a
  copula such as ``it should be``, a substitution such as ``I meant``) followed by a bare value;
- a *retraction*: a sentence that judges the answer wrong or doubts it (``scratch that``).

:func:`later_statements` lists both. A grader compares each value with the committed answer by
its own equivalence; a different value or any retraction makes the response *ambiguous*, which
is incorrect. Used by :mod:`graders.math`, :mod:`graders.exact` and :mod:`graders.qa`; examples
and its cost: docs/graders.md, "The reader's view and the committed answer".
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from graders.boxes import boxed_spans

__all__ = ["AMBIGUOUS", "Statement", "ambiguity", "committed_end", "later_statements"]

AMBIGUOUS = "ambiguous"
"""The reason every grader gives (as its first word) for a response that changes its answer."""

_MARKERS = re.compile(
    r"^[ \t]*####[^\n]*$|^[ \t*#>_-]*(?:final[ \t]+)?answer[ \t*_]*[:\uff1a][^\n]*$",
    re.IGNORECASE | re.MULTILINE,
)
# "the (final) answer is X" in running text: the commitment when no marker above is present
_PROSE_MARKER = re.compile(
    r"(?:final answer|the answer)[ \t]+is[ \t]*[:=]?[ \t]*(?!not\b|wrong\b|incorrect\b)", re.IGNORECASE
)
# a sentence: up to . ! ? ; or a line end; a decimal point and the dot of an initial ("U.S.
# Senate", "J. Smith") do not end it
_SENTENCE = re.compile(r"(?:[^\n.!?;]|\.(?=\d)|(?<=(?<![A-Za-z])[A-Za-z])\.(?=[A-Za-z]|[ \t]+[A-Z]))+[.!?;]*")
# a short discourse lead closed by punctuation: "Nope," "Hmm," "Edit:" "Wait, actually I erred:"
_LEAD = re.compile(
    r"^[ \t*_>(\[-]*(?:[A-Za-z'\u2019-]+[ \t]+){0,7}[A-Za-z'\u2019-]+[ \t*_]*"
    r"(?:[,:!\u2014]|--|\.\.\.|(?<=[ \t])-)(?:[ \t*_]+|$)"
)
# a sentence that is only a lead ("Nope!", "Hmm."): the next sentence carries its value
_INTERJECTION = re.compile(
    r"[ \t*_>-]*(?:[A-Za-z'\u2019-]+[ \t]+){0,2}[A-Za-z'\u2019-]+[ \t*_]*[.!,:\u2014-]+"
)
_COPULA = re.compile(
    r"^(?:(?:so|then|thus|oh|well|no|yes|and|but|actually|wait|hmm|ok|okay|really|sorry)[ \t,]+)*"
    r"(?:(?:it|that|this|which|the(?:[ \t]+[A-Za-z]+){1,3})"
    r"[ \t]*(?:'s|\u2019s|[ \t]is|[ \t]was|[ \t](?:should|must|would|will|has[ \t]+to|ought[ \t]+to)[ \t]+be"
    r"|[ \t]should[ \t]+read)"
    r"|(?:make|change|correct|fix)[ \t]+(?:that|it|this)(?:[ \t]+to)?"
    r"|(?:i[ \t]+)?meant|rather|instead|should[ \t]+be|it'?s|its)"
    r"(?![A-Za-z])[ \t]*[:=]?[ \t]*",
    re.IGNORECASE,
)
_RETRACTION = re.compile(
    r"(?<![A-Za-z])(?:"
    r"(?:that|this|it|which|above|answer|result|mine)"
    r"(?:'s|\u2019s|[ \t]+(?:\w+[ \t]+)?(?:is|was|seems|looks))"
    r"[ \t]+(?:\w+[ \t]+)?(?:wrong|incorrect|mistaken|not[ \t]+(?:right|correct))"
    r"|(?:made|make|making)[ \t]+(?:an?[ \t]+|some[ \t]+)?(?:\w+[ \t]+)?(?:error|mistake|slip)"
    r"|(?:scratch|ignore|disregard|forget|strike)[ \t]+(?:that|this|the[ \t]+above|my|what)"
    r"|never[ \t]*mind|not[ \t]+(?:sure|certain|confident)|unsure|i[ \t]+(?:was|am|'m)[ \t]+wrong"
    r"|(?:wrong|incorrect)[ \t]+answer"
    r")(?![A-Za-z])",
    re.IGNORECASE,
)
# what a "value" may not open with: a pronoun, a determiner or a function word ("that's it",
# "it's my answer", "that's the result"), or an evaluation ("that's correct", "it's right")
_NOT_A_VALUE = frozenset(
    "it its it's that this these those which what my our your his her their the a an all one "
    "correct right true final confirmed done everything nothing fine good ok okay so yes "
    "because since as if when where how why who there here to of in on at for with by from "
    "not no also just only still wrong incorrect false clear consistent we i you he she they us me "
    "let there step first next then".split()
)
# a verb that makes the rest a clause, not a bare value ("x must be positive")
_AUXILIARIES = frozenset(
    "is are was were be been being am must should can could will would has have had do does did "
    "may might shall".split()
)
# "London is the answer": the value is what the sentence names as the answer
_NAMED_ANSWER = re.compile(
    r"^(?P<value>.+?)[ \t]+(?:is|was|would[ \t]+be|should[ \t]+be|must[ \t]+be)[ \t]+"
    r"(?:the|my)[ \t]+(?:\w+[ \t]+)?(?:answer|result|solution)$",
    re.IGNORECASE,
)
_MAX_VALUE_WORDS = 8
_MAX_VALUE_CHARS = 120
_MAX_TAIL_CHARS = 4000


@dataclass(frozen=True)
class Statement:
    """A sentence after the committed answer that changes it: ``value`` is the value it gives
    (None for a retraction without one); ``text`` the sentence as written."""

    value: str | None
    text: str


def committed_end(text: str) -> int:
    """Where the last answer marker (a box, a ``####`` line, an answer line; without any, the
    last "the answer is X" sentence) ends: the rest of ``text`` follows the committed answer,
    and a "the answer is Y" there is a change of mind. ``len(text)`` when none."""
    ends = [end for _, end, _ in boxed_spans(text)]
    ends += [m.end() for m in _MARKERS.finditer(text)][-1:]
    if not ends:
        cues = [m.end() for m in _PROSE_MARKER.finditer(text)][-1:]
        for cue in cues:  # the end of the sentence that gives the answer
            sentence = _SENTENCE.match(text, cue)
            ends.append(sentence.end() if sentence is not None else cue)
    return max(ends) if ends else len(text)


def _strip_cues(sentence: str) -> tuple[str, bool]:
    """The sentence without its leading discourse lead and copula cues, and whether any was cut."""
    rest, cut = sentence.strip(), False
    lead = _LEAD.match(rest)
    # a lead is an interjection or a label ("Nope,", "Edit:"), not a clause ("Paris is big,")
    if lead is not None and lead.end() < len(rest) and not _AUXILIARIES & _lower_words(lead.group(0)):
        rest, cut = rest[lead.end() :], True
    for _ in range(3):
        copula = _COPULA.match(rest)
        if copula is not None and copula.end() > 0 and copula.end() < len(rest):
            rest, cut = rest[copula.end() :], True
            continue
        break
    return rest.strip(), cut


def _lower_words(text: str) -> set[str]:
    return {word.lower().strip(",.:;!*_") for word in text.split()}


def _value(rest: str) -> str | None:
    """``rest`` as a bare value, or None when it is prose, empty or an evaluation."""
    value = rest.strip().strip("*_").strip()
    while value and value[-1] in ".!;,":
        value = value[:-1].rstrip()
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'`":
        value = value[1:-1].strip()
    if not value or len(value) > _MAX_VALUE_CHARS or value.endswith("?"):
        return None
    named = _NAMED_ANSWER.match(value)
    if named is not None:
        value = named.group("value").strip()
    elif "=" in value:
        return None  # a step of working ("x = 3", "9 * 2 = 18"), not a change of answer
    words = value.split()
    if not words or len(words) > _MAX_VALUE_WORDS:
        return None
    if words[0].lower().strip(",.:") in _NOT_A_VALUE:
        return None
    if _AUXILIARIES & _lower_words(value):
        return None
    return value


def later_statements(tail: str) -> list[Statement]:
    """The answer-bearing statements and retractions in ``tail`` (the text after the committed
    answer), in order."""
    found: list[Statement] = []
    interjected = False  # the sentence before was only a lead ("Nope!" then "42.")
    for match in _SENTENCE.finditer(tail[:_MAX_TAIL_CHARS]):
        sentence = match.group(0).strip()
        if not sentence:
            continue
        after_lead, interjected = interjected, False
        if _RETRACTION.search(sentence):
            rest, _ = _strip_cues(sentence.split(":", 1)[1] if ":" in sentence else "")
            value = _value(rest) if rest and not _RETRACTION.search(rest) else None
            found.append(Statement(value, sentence))
            continue
        if not after_lead and _INTERJECTION.fullmatch(sentence) and not _AUXILIARIES & _lower_words(sentence):
            interjected = True
            continue
        rest, cut = _strip_cues(sentence)
        value = _value(rest) if cut or after_lead else None
        if value is not None:
            found.append(Statement(value, sentence))
    return found


def ambiguity(
    tail: str, committed: Sequence[str], same: Callable[[str, str], bool | None]
) -> Statement | None:
    """The first statement of ``tail`` that makes the response ambiguous: a retraction, or a
    value that ``same`` says differs from the committed answers (``same`` returns None when it
    cannot tell, which leaves the statement alone)."""
    for statement in later_statements(tail):
        if statement.value is None:
            return statement
        verdicts = [same(statement.value, answer) for answer in committed]
        if any(v is False for v in verdicts) and not any(v is True for v in verdicts):
            return statement
    return None
