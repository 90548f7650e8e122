"""The answer-equivalence layer: stricter than token F1, looser than exact match.

:func:`match_alias` accepts a prediction against a gold alias when one rule holds, tried in
order (each named in the :class:`Match` it returns): ``canonical`` / ``same content words``,
``date``, ``plural`` / ``inflection``, ``contains gold``, ``inside gold``, ``without head``,
``country``, ``name`` / ``without title``, ``located`` / ``qualified place`` (through the
GeoNames gazetteer, :mod:`graders.qa.gazetteer`) and ``one of the gold's alternatives``;
:class:`EquivalenceOptions` turns the opt-in ones on. Each rule, with its examples and its
measured effect: docs/graders-text.md, "graders.qa".

Hedges (``maybe``, ``I think``, ``?``) and negations never pass unless the alias reads the same
way; a list of candidates (``X or Y``, ``X, Y``) passes only when every item is itself correct.
Precision comes first: in doubt, reject.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from graders.qa.dates import parse_date
from graders.qa.gazetteer import best_known_in, lies_in
from graders.qa.hedges import LIST_SPLIT, find_hedge, is_list
from graders.qa.normalize import canonical_tokens
from graders.qa.places import country_of, is_region
from graders.qa.rules import Gold, RuleOptions, content, movers, name_tokens, single_match

__all__ = ["EquivalenceOptions", "Match", "find_hedge", "is_list", "match_alias"]

_OR_SPLIT = re.compile(r"\s+or\s+", re.IGNORECASE)
_MAX_LIST_ITEMS = 8
_MAX_PLACE_TOKENS = 4


@dataclass(frozen=True)
class EquivalenceOptions:
    """Knobs of the equivalence layer (the defaults are the measured configuration)."""

    dates: bool = True
    """Accept a date in another format, or more specific than the gold (``June 8, 1978`` for ``1978``)."""
    coarser_dates: bool = False
    """Also accept a year for a fuller date (``2014`` for ``October 5, 2014``): human raters mostly
    do, but on NQ-open 4 of 21 such answers were judged wrong, and a policy rewarded for the year
    alone learns to stop there, so it is off."""
    month_for_day: bool = True
    """Accept a month and year for a full date (``July 1969`` for ``20 July 1969``): only the day
    is dropped. Raters accepted every such answer on NQ-open."""
    max_extra_tokens: int = 3
    """Rule 4: how many tokens a prediction may add around the gold."""
    inside_gold: bool = True
    """Rule 5: accept a prediction that is a contiguous part of the gold with half its content words."""
    no_extra_names: bool = True
    """Rule 4: only allow-listed words may stand around the gold. False lets any word ride along
    (``Jimmy Carter`` for ``Carter``, but also ``Paris London`` for ``Paris``)."""
    names: bool = True
    """Rule 7: accept a full name for a short one and back (same first and last word)."""
    places: bool = False
    """Rule 9: accept a place that the gazetteer puts in the gold region (``Terre Haute, Indiana``
    for ``Indiana``). Off: on the 2-fold split of NQ-open its gain (1 answer) is on one fold only
    (see docs/graders-text.md)."""
    qualified_places: bool = True
    """Rule 9: accept ``Paris, France`` for ``Paris`` (the qualifier contains the place's
    best-known referent): an honest way to name the gold place."""
    inflections: bool = False
    """Rule 3: accept an inflection (``executed`` for ``executes``). Off: its gain on NQ-open is
    on one fold only."""
    without_head: bool = False
    """Rule 6: accept a name without its classifier (``Caribbean`` for ``Caribbean Sea``). Off: its
    gain on NQ-open is on one fold only."""
    gold_alternatives: bool = False
    """Rule 10: accept one side of a gold ``X or Y``. Off: its gain on NQ-open is on one fold only."""

    def rules(self) -> RuleOptions:
        return RuleOptions(
            dates=self.dates,
            coarser_dates=self.coarser_dates,
            month_for_day=self.month_for_day,
            max_extra_tokens=self.max_extra_tokens,
            inside_gold=self.inside_gold,
            allowed_extras_only=self.no_extra_names,
            names=self.names,
            inflections=self.inflections,
            without_head=self.without_head,
        )


@dataclass(frozen=True)
class Match:
    """Which alias matched and by which rule."""

    alias: str
    rule: str


def _match_item(prediction: str, aliases: Sequence[str], options: EquivalenceOptions) -> Match | None:
    pred = canonical_tokens(prediction)
    if not pred:
        return None
    rules = options.rules()
    pred_name = name_tokens(prediction)
    for alias in aliases:
        rule = single_match(pred, Gold.of(alias), rules, pred_name)
        if rule is not None:
            return Match(alias, rule)
        # A gold that offers alternatives ("morgue or mortuary") accepts each of them (opt-in).
        alternatives = options.gold_alternatives and _OR_SPLIT.search(alias)
        for part in _OR_SPLIT.split(alias) if alternatives else ():
            if part.strip() and single_match(pred, Gold.of(part), rules, pred_name):
                return Match(alias, "one of the gold's alternatives")
    return None


def _names_another_country(place: tuple[str, ...], region: tuple[str, ...]) -> bool:
    """``Berlin Germany`` in ``Berlin Germany, France`` names a second country (a second
    candidate); ``Mexico City, Mexico`` names the same one."""
    countries = country_of(region)
    return any(
        country_of(place[i:j]) and not country_of(place[i:j]) & countries
        for i in range(len(place))
        for j in range(i + 1, min(len(place), i + 3) + 1)
    )


def _located(prediction: str, aliases: Sequence[str], options: EquivalenceOptions) -> Match | None:
    """``Place, Region`` checked against the gazetteer (:mod:`graders.qa.gazetteer`).

    For a gold ``Region``: the place must lie in the region (``Terre Haute, Indiana``), and not
    be a region itself (``Ohio, Indiana`` is two candidates). For a gold ``Place``: the region
    must contain the place's best-known referent (``Paris, France`` for the gold ``Paris``, not
    ``Paris, Texas``). A place the gazetteer does not know proves nothing and fails.
    """
    if prediction.count(",") != 1:
        return None
    place_text, region_text = prediction.split(",")
    place, region = canonical_tokens(place_text), canonical_tokens(region_text)
    if (
        not place
        or not is_region(region)
        or len(place) > _MAX_PLACE_TOKENS
        or is_list(place_text + region_text)
    ):
        return None
    if is_region(place) or _names_another_country(place, region):
        return None
    for alias in aliases:
        gold = canonical_tokens(alias)
        located = options.places and (gold == region or country_of(gold) & country_of(region))
        if located and lies_in(place, region):
            return Match(alias, "located")
        if options.qualified_places and gold == place and best_known_in(place, region):
            return Match(alias, "qualified place")
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
        if content(pred) and content(pred) == content(gold) and movers(pred) == movers(gold):
            return Match(alias, "same content words")
    if hedge is not None:
        return None
    if (options.dates and parse_date(pred) is not None) or not is_list(prediction):
        return _match_item(prediction, aliases, options)
    located = _located(prediction, aliases, options) if options.places or options.qualified_places else None
    if located is not None:
        return located
    items = [item for item in LIST_SPLIT.split(prediction) if item.strip()]
    if len(items) < 2 or len(items) > _MAX_LIST_ITEMS:
        return None
    # A list passes only when every item is itself a correct answer (several right answers).
    matches = [_match_item(item, aliases, options) for item in items]
    if all(m is not None for m in matches):
        first = matches[0]
        assert first is not None
        return Match(first.alias, "all listed answers correct")
    return None
