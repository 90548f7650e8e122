"""Closed word classes for the equivalence layer (canonical spelling: lower case, no accents).

Each list is a general class of English words, written from the class's definition and not
from any data set: function words, hedges and negations, comparators, honorifics and titles,
units of measure, and classifier head nouns (the generic noun that names the kind of thing a
proper name or modifier picks out: the *river* of "Amazon River", the *nerve* of "vagus nerve").
"""

from __future__ import annotations

__all__ = [
    "COMPARATORS",
    "DROPPABLE_HEADS",
    "FUNCTION_WORDS",
    "HEAD_NOUNS",
    "HEDGE_PHRASES",
    "HEDGE_WORDS",
    "OFFICES",
    "PLACE_PREFIXES",
    "RETRACTIONS",
    "SCALE_WORDS",
    "TITLES",
    "UNIT_WORDS",
]


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


FUNCTION_WORDS = _words(
    "of in on at to by for from with as its his her their is was are were be this that it"
)
"""Words that may accompany a gold answer without changing it ("in 1969", "it is Paris")."""

HEDGE_WORDS = _words(
    "maybe perhaps possibly probably likely unlikely unsure guess guessing might could nor neither not "
    "no never nope unknown uncertain except excluding besides instead rather unlike but versus vs "
    "approximately around about roughly believe think suppose assume options candidates wrong "
    "incorrect untrue confident confidence isnt wasnt arent werent doesnt didnt cant wont dont "
    "nowhere outside"
)
"""Hedges, negations and disclaimers: an answer using one passes only against a gold that does."""

HEDGE_PHRASES = ("not sure", "i think", "i believe", "one of", "any of", "some of", "or maybe", "other than")

RETRACTIONS = (
    "actually",
    "wait",
    "correction",
    "scratch that",
    "on second thought",
    "on second thoughts",
    "i mean",
    "just kidding",
    "no wait",
    "i was wrong",
    "im wrong",
    "i am wrong",
    "that is wrong",
    "thats wrong",
    "not sure",
    "unsure",
    "not certain",
    "not confident",
    "or maybe",
    "or rather",
    "i think",
    "i guess",
    "i believe",
)
"""Discourse markers of self-correction and doubt (canonical text). After the answer line they
take the answer back or hedge it: "Answer: Paris. Actually, it's London." """

COMPARATORS = _words(
    "before after since until till prior later earlier than more less fewer least most over under "
    "above below beyond within nearly almost up minus plus bc bce ad ce"
)
"""Words that move a number or date ("before 1969", "at least 2", "1969 BC", "-5")."""

SCALE_WORDS = _words("hundred thousand million billion trillion dozen")
"""Magnitude words: "1.5 million" is not "1.5"."""

TITLES = _words(
    "mr mrs ms miss mx dr doctor sir dame lord lady king queen prince princess emperor empress tsar "
    "czar kaiser sultan shah pharaoh pope saint st rev reverend father brother sister bishop cardinal "
    "rabbi imam sheikh president vice chancellor premier senator governor mayor judge justice "
    "general gen colonel col major maj captain capt lieutenant lt sergeant sgt admiral commander "
    "cmdr corporal private professor prof former late"
)
"""Honorifics, titles of office and military ranks, and the premodifiers "former" and "late"."""

OFFICES = TITLES - _words("former late mr mrs ms miss mx sir dame lord lady") | _words(
    "minister secretary chairman chairwoman chairperson chair speaker ambassador director "
    "commissioner attorney treasurer chief head leader officer deputy acting assistant associate "
    "marshal consul prefect minister premier monarch ruler sovereign"
)
"""Offices: a gold naming one ("President of France", "Prime Minister") is not a person's name,
so a title before it names another office ("Vice President"), not the same holder."""

UNIT_WORDS = _words(
    # length, area, volume, mass
    "mm cm m km meter meters metre metres kilometer kilometers kilometre kilometres millimeter "
    "millimeters centimeter centimeters in inch inches ft foot feet yd yard yards mi mile miles "
    "nautical acre acres hectare hectares sq square cubic l liter liters litre litres ml gallon gallons "
    "mg g gram grams kg kilogram kilograms lb lbs pound pounds oz ounce ounces ton tons tonne tonnes "
    # time, speed, temperature, energy, data, money, counts
    "sec seconds min minute minutes h hr hrs hour hours day days week weeks month months "
    "year years yr yrs decade decades century centuries mph kph kmh knots degree degrees celsius "
    "fahrenheit kelvin calorie calories kcal joule joules watt watts kw kwh volt volts hz "
    "kb mb gb tb bit bits byte bytes kbps mbps percent dollar dollars usd cent cents euro euros yen "
    "rupee rupees people persons times units"
)
"""Units of measure, currencies and generic counters: "4 GB" is the number 4 with a unit."""

PLACE_PREFIXES = _words("city town village state province county region kingdom republic island borough")
"""Heads of "the X of <name>" ("the state of New York", "the city of Paris")."""

_ADMINISTRATIVE_HEADS = _words("city town village county state province region district territory borough")
_SEQUENCE_HEADS = _words("edition season series episode chapter volume")
DROPPABLE_HEADS = _words(
    # natural features
    "island islands river lake sea ocean mountain mountains mount range valley bay gulf strait "
    "peninsula desert forest canyon falls plateau plain plains "
    # groups, institutions, peoples, languages
    "party company corporation dynasty empire kingdom tribe people language languages dialect "
    "origin descent family clan "
    # anatomy, biology
    "nerve nerves bone bones muscle muscles gland glands artery vein cell cells tissue organ lobe "
    "virus bacterium bacteria species genus tree trees plant plants "
    # works
    "film movie novel album song book"
)
"""Classifier nouns that a name can drop and still name the same thing ("the Caribbean" for the
Caribbean Sea). Not administrative heads ("Mexico" is not Mexico City), periods ("Middle" is not
the Middle Ages) or sequence nouns ("sixth" is not the sixth edition)."""

HEAD_NOUNS = DROPPABLE_HEADS | _SEQUENCE_HEADS
"""Classifier nouns that may follow the gold: "vagus nerve" for "Vagus", "eleventh edition" for
"eleventh". Not administrative heads or periods, which name another thing ("Mexico City" is not
Mexico, "Ohio State" not Ohio, "Bronze Age" not bronze)."""
