"""The rules by which one committed prediction matches one gold alias (see :mod:`.equivalence`).

Everything here works on canonical tokens (:func:`graders.qa.normalize.canonical_tokens`) of a
prediction that has no hedge and is not a list; :class:`Gold` carries what the rules need to
know about the alias's written form.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from graders.qa.dates import MONTH_WORDS, parse_date
from graders.qa.gazetteer import is_city
from graders.qa.lexicon import (
    COMPARATORS,
    DROPPABLE_HEADS,
    FUNCTION_WORDS,
    HEAD_NOUNS,
    OFFICES,
    PLACE_PREFIXES,
    SCALE_WORDS,
    TITLES,
    UNIT_WORDS,
)
from graders.qa.normalize import canonical_tokens, repair_text
from graders.qa.numbers import is_number, is_ordinal
from graders.qa.places import country_of, demonym_country, is_region

__all__ = [
    "Gold",
    "RuleOptions",
    "contains",
    "content",
    "movers",
    "name_tokens",
    "roman_value",
    "single_match",
]

CONTENT_STOP = FUNCTION_WORDS | {"and", "up"}
"""Words ignored when comparing content ("Fort Benning in Georgia" = "Fort Benning, Georgia")."""

_NAME_PARTICLES = frozenset(
    {"de", "la", "le", "da", "di", "du", "van", "von", "der", "den", "of", "the", "and", "y"}
)
_WORDS = re.compile(r"[^\W\d_]+")
# An upper-case Roman numeral (not "C", "D", "L" or "M" alone, which are more often initials).
_ROMAN = re.compile(r"(?=[IVXLCDM]{2,}|[IVX])M{0,3}(?:CM|CD|D?C{0,3})(?:XC|XL|L?X{0,3})(?:IX|IV|V?I{0,3})")
_WORD_EDGES = "\"'.,;:()[]{}"
# A generation suffix names another person when dropped ("Martin Luther King" is the son, not
# "Martin Luther King Sr."); "Jr." may go.
_KEPT_SUFFIXES = frozenset({"sr", "senior"})
_DROPPABLE_SUFFIXES = frozenset({"jr", "junior"})
_POSSESSIVE = re.compile(r"(?<=\w)['\u2019]s\b")  # "People's Republic" is written as a name
_HYPHEN = re.compile(r"(?<=\w)\s*[-\u2010\u2011]\s*(?=[^\W\d_])")
_MOVERS = frozenset({"by", "to", "up"})
_PEOPLE_HEADS = frozenset({"people", "language", "languages", "dialect", "origin", "descent"})
_NOT_UNITS = COMPARATORS | SCALE_WORDS | MONTH_WORDS | {"am", "pm"}


@dataclass(frozen=True)
class RuleOptions:
    """The switches of :func:`single_match` (set from ``EquivalenceOptions``)."""

    dates: bool
    coarser_dates: bool
    max_extra_tokens: int
    inside_gold: bool
    allowed_extras_only: bool
    names: bool
    month_for_day: bool
    inflections: bool = False
    without_head: bool = False


@dataclass(frozen=True)
class Gold:
    """A gold alias: its canonical tokens and what its written form says."""

    tokens: tuple[str, ...]
    proper: bool
    """Every word is capitalised, as in a name ("Cristiano Ronaldo", "George III")."""
    definite: bool
    """Written with a leading "the" ("the British": the people, not the language)."""
    numerals: frozenset[str] = frozenset()
    """Canonical tokens written as Roman numerals after the first word ("III" of "George III",
    "II" of "World War II"): part of the name, like a number ("King George" is not George III)."""
    name_tokens: tuple[str, ...] = ()
    """The tokens with hyphenated words kept whole ("John-Kamen" one surname), for the name rule."""

    @classmethod
    def of(cls, alias: str) -> Gold:
        text = repair_text(alias).strip()
        words = [w for w in _WORDS.findall(_POSSESSIVE.sub("", text)) if w.lower() not in _NAME_PARTICLES]
        proper = bool(words) and all(w[0].isupper() for w in words)
        written = [w.strip(_WORD_EDGES) for w in text.split()][1:]
        numerals = frozenset(w.lower() for w in written if _ROMAN.fullmatch(w))
        definite = text.lower().startswith("the ")
        return cls(canonical_tokens(alias), proper, definite, numerals, name_tokens(alias))

    @property
    def numeric(self) -> bool:
        """The gold states a cardinal number ("1969", "4 GB", "up to 25 players")."""
        return any(is_number(t) for t in self.tokens)


def name_tokens(text: str) -> tuple[str, ...]:
    """Canonical tokens with hyphenated words joined (``John-Kamen``, ``John - Kamen``)."""
    return canonical_tokens(_HYPHEN.sub("", text))


def contains(haystack: Sequence[str], needle: Sequence[str]) -> int:
    """Where ``needle`` first occurs contiguously in ``haystack``, or -1."""
    n = len(needle)
    for i in range(len(haystack) - n + 1 if n else 0):
        if tuple(haystack[i : i + n]) == tuple(needle):
            return i
    return -1


def content(tokens: Sequence[str]) -> tuple[str, ...]:
    return tuple(t for t in tokens if t not in CONTENT_STOP)


def movers(tokens: Sequence[str]) -> tuple[str, ...]:
    """The function words that move a number or date right after them: ``by 1969`` (no later
    than), ``to 1969``, ``up to 25`` (at most). "Same content words" must keep them."""
    return tuple(
        t
        for i, t in enumerate(tokens)
        if t in _MOVERS and any(is_number(n) or n in MONTH_WORDS for n in tokens[i + 1 : i + 3])
    )


def _is_subsequence(short: Sequence[str], long: Sequence[str]) -> bool:
    it = iter(long)
    return all(token in it for token in short)


def _same_name(pred: Sequence[str], gold: Sequence[str]) -> bool:
    """Full name vs short name: same first and last word, the shorter a subsequence of the longer
    (``Daniel Jacob Radcliffe`` ~ ``Daniel Radcliffe``), or the same words with initials
    (``Roger L. Jackson`` ~ ``Roger Labon Jackson``)."""
    if any(t in CONTENT_STOP or not t.isalpha() for t in (*pred, *gold)):
        return False
    if len(pred) == len(gold) >= 3 and pred[0] == gold[0] and pred[-1] == gold[-1]:
        return all(
            p == g or (min(len(p), len(g)) == 1 and p[0] == g[0])
            for p, g in zip(pred[1:-1], gold[1:-1], strict=True)
        )
    # Middle names may be added to a first and last name, never to a name that has its own
    # middle ("George H. W. Bush" is not "George W. Bush"), never only as initials (the way
    # namesakes are told apart: "George W. Bush" is not "George Bush"), and never the first or
    # last name again ("Larry Bloom Larry Smith" is two names).
    if len(pred) > len(gold) and all(len(t) == 1 for t in pred[1:-1]):
        return False
    short, long = (pred, gold) if len(pred) <= len(gold) else (gold, pred)
    return (
        len(short) == 2
        and len(long) - len(short) <= 2
        and short[0] == long[0]
        and short[-1] == long[-1]
        and not set(short) & set(long[1:-1])
        and _is_subsequence(short, long)
    )


def _stem(token: str) -> str:
    """A light stem for inflections only: ``executes``/``executed``/``execute`` -> ``execut``.
    A word whose stem would be shorter than five letters is kept whole: ``states`` and ``stated``
    share too short a stem to be the same word."""
    stem = token
    if token.isalpha():
        for suffix in ("ing", "ed", "es", "s"):
            if stem.endswith(suffix):
                stem = stem[: -len(suffix)]
                break
        if stem.endswith("e"):
            stem = stem[:-1]
    return stem if len(stem) >= 5 else token


def _singular(token: str) -> str:
    """``acids`` -> ``acid``; a word only: ``1960s`` is a decade, not the year ``1960``."""
    if len(token) > 3 and token.endswith("s") and not token.endswith("ss") and token[:-1].isalpha():
        return token[:-1]
    return token


def _drop_titles(tokens: tuple[str, ...]) -> tuple[str, ...]:
    """``("president", "john", "f", "kennedy")`` -> ``("john", "f", "kennedy")`` (leading only)."""
    i = 0
    while i < len(tokens) - 1 and tokens[i] in TITLES:
        i += 1
    return tokens[i:]


def _extras_allowed(before: Sequence[str], after: Sequence[str], gold: Gold) -> bool:
    """May these words stand around the gold without naming another candidate or moving it?

    Function words always may ("in 1969"). Besides them: units after a number ("4 GB"); a
    classifier head after a name, modifier or rank ("vagus nerve", "eleventh edition"), but not
    after a country or state, where it names a feature called after the place ("Jordan River",
    "Georgia Strait"; a people's name takes only "people" or "language": "Irish people", not
    "Irish Sea"); titles right before a name of two or more words ("Queen Elizabeth II", not
    "brother of John Smith"); and "the state of" before a name. Anything else (another name, an
    adjective, "wrong", "before", "million") is refused.
    """
    titles = list(before)
    before = [t for t in before if t not in FUNCTION_WORDS]
    after = [t for t in after if t not in FUNCTION_WORDS]
    if gold.numeric:
        return not before and not _MOVERS & set(titles) and all(t in UNIT_WORDS for t in after)
    if before:
        # a title before a name ("Queen Elizabeth II"), never before an office: "Vice President"
        # and "Lieutenant Governor" are other offices than "President" and "Governor"
        titled = (
            gold.proper
            and len(gold.tokens) >= 2
            and all(t in TITLES for t in titles)
            and not any(t in OFFICES for t in gold.tokens)
        )
        place = gold.proper and len(before) == 1 and before[0] in PLACE_PREFIXES
        if not (titled or place):
            return False
    if after and (is_region(gold.tokens) or is_city(gold.tokens)):
        return False  # "Jordan River", "Paris Hilton": a head after a place names another thing
    heads = _PEOPLE_HEADS if demonym_country(gold.tokens) else HEAD_NOUNS
    return len(after) <= 1 and all(t in heads for t in after)


def _part_of_name(pred: tuple[str, ...], gold: Gold) -> bool:
    """May ``pred``, found inside the proper name ``gold``, stand for it?

    Leading words may go (``Liev Schreiber`` for ``Isaac Liev Schreiber``) unless the name is
    built with ``of``, where they pick the thing (``Republic of China`` is not ``People's
    Republic of China``), or has a numeral (``Paul II`` is not ``John Paul II``; titles go by
    the ``without title`` rule). Trailing words may go only as an ``of`` phrase (``Louis XIV`` for
    ``Louis XIV of France``) or a ``Jr.``: otherwise the head goes and the name names something
    else (``United States`` for ``United States Army``). Numerals are kept by the caller.
    """
    tokens = gold.tokens
    start = contains(tokens, pred)
    end = start + len(pred)
    if start > 0 and ("of" in tokens[1:] or gold.numerals):
        return False
    rest = tokens[end:]
    return not rest or rest[0] == "of" or all(t in _DROPPABLE_SUFFIXES for t in rest)


def _unit_only(gold_content: tuple[str, ...], pred_content: tuple[str, ...]) -> bool:
    """A bare number may stand for a number with a unit ("25" for "up to 25 players") when every
    other gold word is a plain word, not a scale, era, comparator or further number ("25 million")."""
    rest = [t for t in gold_content if t not in pred_content]
    return bool(rest) and all(t.isalpha() and t not in _NOT_UNITS for t in rest)


def roman_value(token: str) -> int | None:
    """``"ii"`` -> 2, ``"xiv"`` -> 14: a Roman numeral (canonical, lower case), or None."""
    if not token or _ROMAN.fullmatch(token.upper()) is None:
        return None
    values = {"i": 1, "v": 5, "x": 10, "l": 50, "c": 100, "d": 500, "m": 1000}
    total = 0
    for i, ch in enumerate(token):
        value = values[ch]
        total += -value if i + 1 < len(token) and values[token[i + 1]] > value else value
    return total


def _same_numerals(pred: Sequence[str], gold: Sequence[str]) -> bool:
    """The same words, a number after the first word written in Roman numerals on one side and
    in digits on the other (``world war 2`` ~ ``world war ii``)."""
    if len(pred) != len(gold) or len(pred) < 2 or pred[0] != gold[0]:
        return False
    differ = False
    for p, g in zip(pred[1:], gold[1:], strict=True):
        if p == g:
            continue
        digits, roman = (p, g) if p.isdigit() else (g, p)
        if not digits.isdigit() or roman_value(roman) != int(digits):
            return False
        differ = True
    return differ


def _initials_of(short: Sequence[str], long: Sequence[str]) -> bool:
    """``short`` spells a run of ``long``'s words by their initials, two letters or more, the
    rest the same (``u k`` for ``united kingdom``, ``u s a`` for ``united states of america``)."""
    start = next((i for i, t in enumerate(short) if len(t) == 1 and t.isalpha()), None)
    if start is None:
        return False
    end = start
    while end < len(short) and len(short[end]) == 1 and short[end].isalpha():
        end += 1
    letters = short[start:end]
    if len(letters) < 2 or tuple(short[:start]) != tuple(long[:start]):
        return False
    rest = tuple(short[end:])
    tail = len(long) - len(rest)
    if rest and tuple(long[tail:]) != rest:
        return False
    words = [w for w in long[start:tail] if w not in ("of", "and")]
    return len(words) == len(letters) and all(
        w[0] == c and len(w) > 1 for w, c in zip(words, letters, strict=True)
    )


def _country_match(pred: tuple[str, ...], gold: Gold) -> bool:
    """``Scottish`` for ``Scotland``; ``Great Britain`` for ``the British`` (the people), not for
    a bare ``British`` or ``Spanish`` (which may be a language)."""
    if demonym_country(pred) & country_of(gold.tokens):
        return True
    if gold.definite and country_of(pred) & demonym_country(gold.tokens):
        return True
    return bool(country_of(pred) & country_of(gold.tokens))


def single_match(
    pred: tuple[str, ...], gold: Gold, options: RuleOptions, pred_name: tuple[str, ...] = ()
) -> str | None:
    """The rule by which one hedge-free, list-free prediction matches one gold alias, or None.

    ``pred_name`` is :func:`name_tokens` of the prediction (hyphenated words whole), for the
    name rule; without it the name rule reads ``pred``."""
    tokens = gold.tokens
    if pred == tokens:
        return "canonical"
    if _same_numerals(pred, tokens):
        return "numeral"  # "World War 2" for "World War II"
    if _initials_of(pred, tokens) or _initials_of(tokens, pred):
        return "abbreviation"  # "U.K." for "United Kingdom", and back
    if options.dates:
        pred_date, gold_date = parse_date(pred), parse_date(tokens)
        if pred_date is not None and gold_date is not None:
            if not pred_date.agrees_with(gold_date):
                return None
            day_dropped = options.month_for_day and pred_date.month is not None and pred_date.day is None
            return "date" if options.coarser_dates or day_dropped or pred_date.covers(gold_date) else None
        if pred_date is not None and gold.numeric:
            full = pred_date.day is not None and pred_date.year is not None
            return "inside gold" if full and contains(tokens, pred) >= 0 else None
    # "amino acids" for "amino acid"; not for names, where a final "s" is spelling ("Paris", "Wales").
    if (
        not gold.proper
        and len(pred) == len(tokens)
        and pred[:-1] == tokens[:-1]
        and _singular(pred[-1]) == _singular(tokens[-1])
    ):
        return "plural"
    if len(pred) <= len(tokens) + options.max_extra_tokens:
        at = contains(pred, tokens)
        if at >= 0 and (
            not options.allowed_extras_only or _extras_allowed(pred[:at], pred[at + len(tokens) :], gold)
        ):
            return "contains gold"
    if options.inside_gold and len(tokens) >= 2 and contains(tokens, pred) >= 0:
        pred_content, gold_content = content(pred), content(tokens)
        # A bare surname or first name is ambiguous ("Ronaldo"): names need two thirds of the words.
        need = 2 / 3 if gold.proper else 1 / 2
        numbers_kept = all(
            t in pred
            for t in tokens
            if is_number(t) or is_ordinal(t) or t in gold.numerals or t in _KEPT_SUFFIXES
        )
        if gold.proper and not _part_of_name(pred, gold):
            numbers_kept = False
        bare_number = bool(pred_content) and all(is_number(t) for t in pred_content)
        if bare_number and all(t in UNIT_WORDS for t in gold_content if t not in pred_content):
            return "inside gold"  # "4" for "4 GB": the unit dropped, the number kept
        if (
            numbers_kept
            # one word of a multi-word gold is never enough ("acid" for "amino acid", "war" for
            # "Civil War", "F.C." for "Chelsea F.C.": initials are not words): the generic part
            # of a name names many things ("up to 25" keeps the words that bound its number)
            and (len([t for t in pred_content if len(t) > 1 or t.isdigit()]) >= 2 or bool(movers(pred)))
            and len(pred_content) >= need * len(gold_content)
            and (not bare_number or _unit_only(gold_content, pred_content))
        ):
            return "inside gold"
    # "executed" for "executes": the same words up to inflection (not for names: "Paris" is not "Pari").
    same_length = len(pred) == len(tokens)
    if (
        options.inflections
        and not gold.proper
        and same_length
        and [*map(_stem, pred)] == [*map(_stem, tokens)]
    ):
        return "inflection"
    # "Caribbean" for "Caribbean Sea": a name without its classifier, where the name alone still
    # names it (not "Mexico" for "Mexico City", "Middle" for "Middle Ages", "6th" for "6th season").
    if options.without_head and gold.proper and len(tokens) >= 2 and tokens[-1] in DROPPABLE_HEADS:
        rest = tokens[:-1]
        if content(pred) == rest and not any(is_number(t) or is_ordinal(t) for t in rest):
            return "without head"
    if _country_match(pred, gold):
        return "country"
    untitled = _drop_titles(tokens)
    # Not for a name with a numeral: "World II" is not "World War II", "John II" not "John Paul II".
    names = options.names and not gold.numerals
    if names and (_same_name(pred, tokens) or (len(untitled) >= 2 and _same_name(pred, untitled))):
        return "name"
    # "Hannah Dominique E. John-Kamen" for "Hannah John-Kamen": a hyphenated surname is one name.
    if names and gold.name_tokens not in ((), tokens) and _same_name(pred_name or pred, gold.name_tokens):
        return "name"
    # "Robert Walpole" for "Sir Robert Walpole": only for a name of two words or more once untitled.
    # Not for an office: "President of France" without "President" is the country.
    office = untitled[0] in FUNCTION_WORDS or any(t in OFFICES for t in untitled)
    if gold.proper and untitled != tokens and len(untitled) >= 2 and not office:
        if single_match(pred, Gold(untitled, True, False, gold.numerals), options) is not None:
            return "without title"
    return None
