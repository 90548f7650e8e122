"""The answer-equivalence layer: stricter than token F1, looser than exact match.

A prediction is accepted against a gold alias when one rule below holds, tried in order:

1. ``canonical`` / ``same content words``: equal canonical tokens (case, punctuation, accents,
   articles, number words vs digits, damaged Unicode ignored), or equal once function words
   are dropped (``Fort Benning, Georgia`` ~ ``Fort Benning in Georgia``).
2. ``date``: both read as dates (any common format) that agree, the prediction at least as
   specific as the gold (``June 8, 1978`` for ``1978``; a year for a full date only with
   ``coarser_dates``).
3. ``contains gold``: the gold's tokens appear contiguously inside a prediction at most
   ``max_extra_tokens`` longer, with no added capitalised word (``Queen Elizabeth II`` for
   ``Elizabeth II``, but not ``Paris London`` for ``Paris``).
4. ``inside gold``: the prediction is a contiguous part of the gold with half of its content
   words, two thirds for a proper name (``Liev Schreiber`` for ``Isaac Liev Schreiber``).
5. ``name`` / ``plural`` / ``without title`` / ``one of the gold's alternatives``: full vs short
   names and initials, a plural ``s``, the gold minus a leading title, one side of a gold
   ``X or Y``.

Hedges (``maybe``, ``I think``, ``?``) and negations (``not``) never pass unless the alias reads
the same way; a list of candidates (``X or Y``, ``X, Y``, ``X / Y``) passes only when every item
is itself correct. Precision comes first: in doubt, reject.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from graders.qa.dates import MONTH_WORDS as _MONTH_WORDS
from graders.qa.dates import parse_date
from graders.qa.normalize import canonical_text, canonical_tokens

__all__ = ["EquivalenceOptions", "Match", "find_hedge", "is_list", "match_alias"]

_HEDGE_WORDS = frozenset(
    (
        "maybe perhaps possibly probably likely unlikely unsure guess might could nor neither not no "
        "never unknown uncertain except instead rather unlike but versus vs approximately around about "
        "roughly believe think suppose assume options candidates isnt wasnt arent werent doesnt didnt "
        "cant wont dont"
    ).split()
)
_HEDGE_PHRASES = ("not sure", "i think", "i believe", "one of", "any of", "some of", "or maybe")
_LIST_MARK = re.compile(r"[,;/|&\n+]|\band\b|\bor\b|^\s*[-*\u2022]|\d[.)]\s", re.IGNORECASE)
_LIST_SPLIT = re.compile(r"\s*(?:[,;/|&\n+]|\band\b|\bor\b|\beither\b)\s*", re.IGNORECASE)
_OR_SPLIT = re.compile(r"\s+or\s+", re.IGNORECASE)
_STOPWORDS = frozenset(
    ("of in on at to by for from with and as up its his her their is was are were be this that it").split()
)
_MAX_LIST_ITEMS = 8
_SCALE = frozenset({"hundred", "thousand", "million", "billion", "trillion", "percent", "%"})
_NAME_PARTICLES = frozenset(
    {"de", "la", "le", "da", "di", "du", "van", "von", "der", "den", "of", "the", "and", "y"}
)
_WORDS = re.compile(r"[^\W\d_]+")


def _is_proper_name(alias: str) -> bool:
    """True when every word of the (gold) alias is capitalised, as in a name: "Cristiano Ronaldo"."""
    words = [w for w in _WORDS.findall(alias) if w.lower() not in _NAME_PARTICLES]
    return bool(words) and all(w[0].isupper() for w in words)


@dataclass(frozen=True)
class EquivalenceOptions:
    """Knobs of the equivalence layer (the defaults are the measured configuration)."""

    dates: bool = True
    """Accept a date in another format, or more specific than the gold (``June 8, 1978`` for ``1978``)."""
    coarser_dates: bool = False
    """Also accept a date less specific than the gold (``2014`` for ``October 5, 2014``): human
    raters mostly do, but on NQ-open one in five such answers was judged wrong, so it is off."""
    max_extra_tokens: int = 3
    """Rule 3: how many tokens a prediction may add around the gold."""
    inside_gold: bool = True
    """Rule 4: accept a prediction that is a contiguous part of the gold with half its content words."""
    no_extra_names: bool = True
    """Rule 3: reject when a word added around the gold is capitalised (another name:
    ``Paris London``), titles such as ``King`` excepted."""
    names: bool = True
    """Rule 5: accept a full name for a short one and back (same first and last word)."""


@dataclass(frozen=True)
class Match:
    """Which alias matched and by which rule."""

    alias: str
    rule: str


def find_hedge(text: str) -> str | None:
    """The first hedge, negation or question mark in ``text``, or None."""
    if "?" in text:
        return "?"
    plain = canonical_text(text)
    padded = f" {plain} "
    for phrase in _HEDGE_PHRASES:
        if f" {phrase} " in padded:
            return phrase
    for token in canonical_tokens(text):
        if token in _HEDGE_WORDS:
            return token
    return None


def is_list(text: str) -> bool:
    """True when ``text`` has the marks of a list of candidates (commas, ``and``/``or``, bullets)."""
    return _LIST_MARK.search(text) is not None


def _contains(haystack: Sequence[str], needle: Sequence[str]) -> bool:
    n = len(needle)
    return n > 0 and any(tuple(haystack[i : i + n]) == tuple(needle) for i in range(len(haystack) - n + 1))


def _is_subsequence(short: Sequence[str], long: Sequence[str]) -> bool:
    it = iter(long)
    return all(token in it for token in short)


def _content(tokens: Sequence[str]) -> tuple[str, ...]:
    return tuple(t for t in tokens if t not in _STOPWORDS)


def _same_name(pred: Sequence[str], gold: Sequence[str]) -> bool:
    """Full name vs short name: same first and last word, the shorter a subsequence of the longer
    (``Daniel Jacob Radcliffe`` ~ ``Daniel Radcliffe``), or the same words with initials
    (``Roger L. Jackson`` ~ ``Roger Labon Jackson``)."""
    if any(t in _STOPWORDS or t.isdigit() for t in (*pred, *gold)):
        return False
    if len(pred) == len(gold) >= 3 and pred[0] == gold[0] and pred[-1] == gold[-1]:
        return all(
            p == g or (min(len(p), len(g)) == 1 and p[0] == g[0])
            for p, g in zip(pred[1:-1], gold[1:-1], strict=True)
        )
    short, long = (pred, gold) if len(pred) <= len(gold) else (gold, pred)
    return (
        len(short) >= 2
        and len(long) - len(short) <= 2
        and short[0] == long[0]
        and short[-1] == long[-1]
        and _is_subsequence(short, long)
    )


def _singular(token: str) -> str:
    return token[:-1] if len(token) > 3 and token.endswith("s") and not token.endswith("ss") else token


def _capitalised_tokens(text: str) -> frozenset[str]:
    """Canonical tokens of the capitalised words of ``text`` that are not titles ("King")."""
    out: set[str] = set()
    for word in text.split():
        if word[:1].isupper():
            out.update(t for t in canonical_tokens(word) if t not in _TITLES)
    return frozenset(out)


def _single_match(
    pred: tuple[str, ...],
    gold: tuple[str, ...],
    proper: bool,
    options: EquivalenceOptions,
    names: frozenset[str] = frozenset(),
) -> str | None:
    """The rule by which one hedge-free, list-free prediction matches one gold alias, or None.

    ``proper``: the gold alias is written as a proper name (every word capitalised).
    ``names``: tokens that the prediction writes capitalised (possible other candidates).
    """
    if pred == gold:
        return "canonical"
    if options.dates:
        pred_date, gold_date = parse_date(pred), parse_date(gold)
        if pred_date is not None and gold_date is not None:
            if not pred_date.agrees_with(gold_date):
                return None
            return "date" if options.coarser_dates or pred_date.covers(gold_date) else None
        if pred_date is not None and _is_number_like(gold):
            return None
    if len(pred) == len(gold) and pred[:-1] == gold[:-1] and _singular(pred[-1]) == _singular(gold[-1]):
        return "plural"
    if len(pred) <= len(gold) + options.max_extra_tokens and _contains(pred, gold):
        extra = [t for t in pred if t not in gold]
        # "Paris London" is two candidates, not an answer: no other name may ride along.
        if options.no_extra_names and any(t in names for t in extra):
            return None
        # "11" is not "11 million": a bare number gold only matches when nothing numeric is added.
        if not (len(gold) == 1 and gold[0].isdigit() and any(t.isdigit() or t in _SCALE for t in extra)):
            return "contains gold"
    if options.inside_gold and len(gold) >= 2 and _contains(gold, pred):
        pred_content, gold_content = _content(pred), _content(gold)
        # A bare surname or first name is ambiguous ("Ronaldo"): names need two thirds of the words.
        need = 2 / 3 if proper else 1 / 2
        if (
            pred_content
            and len(pred_content) >= need * len(gold_content)
            and (not all(t.isdigit() for t in pred_content) or _unit_only(gold_content, pred_content))
        ):
            return "inside gold"
    if options.names and (_same_name(pred, gold) or _same_name(pred, _drop_titles(gold))):
        return "name"
    untitled = _drop_titles(gold)
    if untitled != gold and untitled and _single_match(pred, untitled, proper, options, names) is not None:
        return "without title"
    return None


_TITLES = frozenset(
    (
        "mr mrs ms miss dr sir dame lord lady king queen prince princess president senator gen general "
        "captain capt col colonel lt sgt rev pope maharaja emperor empress sultan senior pilot actor "
        "actress former judge justice governor admiral major professor prof"
    ).split()
)
_NOT_UNITS = frozenset({"bc", "bce", "ad", "ce", "am", "pm", *_SCALE})


def _drop_titles(tokens: tuple[str, ...]) -> tuple[str, ...]:
    """``("senior", "pilot", "ed", "white")`` -> ``("ed", "white")`` (leading titles only)."""
    i = 0
    while i < len(tokens) - 1 and tokens[i] in _TITLES:
        i += 1
    return tokens[i:]


def _is_number_like(tokens: tuple[str, ...]) -> bool:
    return any(t.isdigit() for t in tokens)


def _unit_only(gold_content: tuple[str, ...], pred_content: tuple[str, ...]) -> bool:
    """A bare number may stand for a number with a unit ("25" for "up to 25 players") when every
    other gold word is a plain unit word, not a scale, era or further number ("25 million")."""
    rest = [t for t in gold_content if t not in pred_content]
    return bool(rest) and all(t.isalpha() and t not in _NOT_UNITS and t not in _MONTH_WORDS for t in rest)


def _match_item(prediction: str, aliases: Sequence[str], options: EquivalenceOptions) -> Match | None:
    pred = canonical_tokens(prediction)
    if not pred:
        return None
    names = _capitalised_tokens(prediction)
    for alias in aliases:
        rule = _single_match(pred, canonical_tokens(alias), _is_proper_name(alias), options, names)
        if rule is not None:
            return Match(alias, rule)
        # A gold that offers alternatives ("morgue or mortuary") accepts each of them.
        for part in _OR_SPLIT.split(alias) if _OR_SPLIT.search(alias) else ():
            if part.strip() and _single_match(
                pred, canonical_tokens(part), _is_proper_name(part), options, names
            ):
                return Match(alias, "one of the gold's alternatives")
    return None


def match_alias(prediction: str, aliases: Sequence[str], options: EquivalenceOptions) -> Match | None:
    """The first alias that ``prediction`` is equivalent to (see the module docstring), or None."""
    pred = canonical_tokens(prediction)
    if not pred:
        return None
    hedge = find_hedge(prediction)
    for alias in aliases:
        # A hedged answer ("Paris?", "maybe Paris") matches only an alias hedged the same way.
        if hedge is not None and find_hedge(alias) != hedge:
            continue
        gold = canonical_tokens(alias)
        if pred == gold:
            return Match(alias, "canonical")
        if _content(pred) and _content(pred) == _content(gold):
            return Match(alias, "same content words")
    if hedge is not None:
        return None
    if options.dates and parse_date(pred) is not None:
        return _match_item(prediction, aliases, options)
    if not is_list(prediction):
        return _match_item(prediction, aliases, options)
    items = [item for item in _LIST_SPLIT.split(prediction) if item.strip()]
    if len(items) < 2 or len(items) > _MAX_LIST_ITEMS:
        return None
    # A list passes only when every item is itself a correct answer (several right answers).
    matches = [_match_item(item, aliases, options) for item in items]
    if all(m is not None for m in matches):
        first = matches[0]
        assert first is not None
        return Match(first.alias, "all listed answers correct")
    return None
