"""A small gazetteer: countries with their names and demonyms, US states, Canadian provinces.

Two uses, both general facts of English rather than facts of any data set:

- :func:`country_of` reads a country name (``Great Britain``) or its demonym or adjective
  (``British``, ``the British``, ``Scottish``, ``Americans``) as the country;
- :func:`is_region` tells whether a name is a country, US state or Canadian province, the
  places that qualify a smaller one in ``Terre Haute, Indiana`` or ``Olympia, Greece``.
"""

from __future__ import annotations

from functools import cache

from graders.qa.normalize import canonical_tokens

__all__ = ["country_of", "demonym_country", "is_region"]

# "names | demonyms and adjectives" (comma-separated alternatives), one country a line.
_COUNTRIES = """
afghanistan | afghan; albania | albanian; algeria | algerian; angola | angolan
argentina | argentine, argentinian; armenia | armenian; australia | australian; austria | austrian
azerbaijan | azerbaijani; bangladesh | bangladeshi; belarus | belarusian; belgium | belgian
bolivia | bolivian; bosnia | bosnian; brazil | brazilian; bulgaria | bulgarian
burma, myanmar | burmese; cambodia | cambodian; cameroon | cameroonian; canada | canadian
chile | chilean; china | chinese; colombia | colombian; costa rica | costa rican; croatia | croatian
cuba | cuban; cyprus | cypriot; czech republic, czechia | czech; denmark | danish, dane
ecuador | ecuadorian; egypt | egyptian; england | english; estonia | estonian
ethiopia | ethiopian; fiji | fijian; finland | finnish, finn; france | french; georgia | georgian
germany | german; ghana | ghanaian; great britain, britain | british, briton; greece | greek
haiti | haitian; hungary | hungarian; iceland | icelandic, icelander; india | indian
indonesia | indonesian; iran | iranian; iraq | iraqi; ireland | irish; israel | israeli
italy | italian; jamaica | jamaican; japan | japanese; jordan | jordanian; kazakhstan | kazakh
kenya | kenyan; korea | korean; north korea | north korean; south korea | south korean
kuwait | kuwaiti; laos | laotian; latvia | latvian; lebanon | lebanese; libya | libyan
lithuania | lithuanian; luxembourg | luxembourgish; madagascar | malagasy; malaysia | malaysian
mexico | mexican; mongolia | mongolian; morocco | moroccan; mozambique | mozambican
nepal | nepali, nepalese; netherlands, holland | dutch; new zealand | new zealander
nigeria | nigerian; norway | norwegian; oman | omani; pakistan | pakistani; panama | panamanian
paraguay | paraguayan; peru | peruvian; philippines | filipino, philippine; poland | polish, pole
portugal | portuguese; qatar | qatari; romania | romanian; russia | russian
saudi arabia | saudi, saudi arabian; scotland | scottish, scot, scots; senegal | senegalese
serbia | serbian, serb; singapore | singaporean; slovakia | slovak, slovakian
slovenia | slovenian, slovene; somalia | somali; south africa | south african
spain | spanish, spaniard; sri lanka | sri lankan; sudan | sudanese; sweden | swedish, swede
switzerland | swiss; syria | syrian; taiwan | taiwanese; tanzania | tanzanian; thailand | thai
tunisia | tunisian; turkey | turkish, turk; uganda | ugandan; ukraine | ukrainian
united kingdom, uk | british, briton; united states, united states of america, usa, us, america | american
uruguay | uruguayan; venezuela | venezuelan; vietnam, viet nam | vietnamese; wales | welsh
yemen | yemeni; zambia | zambian; zimbabwe | zimbabwean
"""

_REGIONS = """
alabama alaska arizona arkansas california colorado connecticut delaware florida georgia hawaii
idaho illinois indiana iowa kansas kentucky louisiana maine maryland massachusetts michigan
minnesota mississippi missouri montana nebraska nevada new_hampshire new_jersey new_mexico
new_york north_carolina north_dakota ohio oklahoma oregon pennsylvania rhode_island
south_carolina south_dakota tennessee texas utah vermont virginia washington west_virginia
wisconsin wyoming district_of_columbia washington_dc dc alberta british_columbia manitoba
new_brunswick newfoundland nova_scotia ontario prince_edward_island quebec saskatchewan
"""


def _plural(demonym: str) -> str | None:
    """``american`` -> ``americans``; none for ``swiss``, ``french``, ``chinese``."""
    if " " in demonym or demonym.endswith(("s", "sh", "ch", "ese", "x")):
        return None
    return demonym + "s"


@cache
def _tables() -> tuple[dict[tuple[str, ...], frozenset[int]], dict[tuple[str, ...], frozenset[int]]]:
    """(country names -> country ids, demonyms -> country ids)."""
    names: dict[tuple[str, ...], set[int]] = {}
    demonyms: dict[tuple[str, ...], set[int]] = {}
    entries = [e for line in _COUNTRIES.strip().splitlines() for e in line.split(";")]
    for country_id, entry in enumerate(entries):
        left, right = entry.split("|")
        for name in left.split(","):
            names.setdefault(canonical_tokens(name), set()).add(country_id)
        for demonym in right.split(","):
            forms = [demonym.strip(), _plural(demonym.strip())]
            for form in filter(None, forms):
                demonyms.setdefault(canonical_tokens(form), set()).add(country_id)
    return (
        {k: frozenset(v) for k, v in names.items()},
        {k: frozenset(v) for k, v in demonyms.items()},
    )


def country_of(tokens: tuple[str, ...]) -> frozenset[int]:
    """Ids of the countries that ``tokens`` (canonical) name: ``great britain`` -> {Britain}."""
    return _tables()[0].get(tokens, frozenset())


def demonym_country(tokens: tuple[str, ...]) -> frozenset[int]:
    """Ids of the countries whose people or adjective ``tokens`` name: ``scottish`` -> {Scotland}."""
    return _tables()[1].get(tokens, frozenset())


@cache
def _regions() -> frozenset[tuple[str, ...]]:
    states = {tuple(word.split("_")) for word in _REGIONS.split()}
    return frozenset(states | set(_tables()[0]))


def is_region(tokens: tuple[str, ...]) -> bool:
    """True when ``tokens`` (canonical) name a country, a US state or a Canadian province."""
    return tokens in _regions()
