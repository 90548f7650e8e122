"""graders.qa red team: false passes found by adversarial probing, each pinned here.

Every case below passed before its fix; none is a data item special-cased (the shapes are
general: a symbol that hedges or negates, a decade for a year, a second name glued to the gold).
"""

from __future__ import annotations

import pytest

from graders.qa import EquivalenceOptions, check


@pytest.mark.parametrize(
    "response",
    [
        # question marks other than ASCII "?" hedge the same way
        "Paris\uff1f",
        "\u00bfParis?",
        "Paris \u00bf",
        "Paris\u061f",
        "Paris \u2753",
        "Paris\u203d",
        # negation and "wrong" marks
        "\u00acParis",
        "Paris \u2717",
        "Paris \u2718",
        "Paris \u274c",
        "Paris \u2716",
        # struck through: markdown, HTML, combining overlays
        "~~Paris~~",
        "<s>Paris</s>",
        "<del>Paris</del>",
        "P\u0336a\u0336r\u0336i\u0336s\u0336",
        "Paris\u0338",
    ],
)
def test_symbols_that_hedge_negate_or_strike_fail(response: str) -> None:
    assert check("Paris", answers=["Paris"]).passed
    assert not check(response, answers=["Paris"]).passed, response


@pytest.mark.parametrize(
    ("response", "answers"),
    [
        ("<2", ["2"]),
        (">2", ["2"]),
        ("\u22642", ["2"]),
        ("\u2265 2", ["2"]),
        ("\u22482", ["2"]),
        ("~2", ["2"]),
        ("\u223c2", ["2"]),
        ("2+", ["2"]),
        ("18+ years", ["18 years"]),
        ("2 \u00b1 1", ["2"]),
        ("\u2260 2", ["2"]),
        ("<1969", ["1969"]),
        ("\u2265 July 20, 1969", ["July 20, 1969"]),
        ("> 2", ["2"]),
        # full-width and small forms of the same signs, and the rest of the comparison block
        ("\uff5e2", ["2"]),
        ("\uff1c2", ["2"]),
        ("\uff1e2", ["2"]),
        ("\ufe642", ["2"]),
        ("\u2a852", ["2"]),
        ("\u2272 2", ["2"]),
    ],
)
def test_comparison_symbols_move_a_number(response: str, answers: list[str]) -> None:
    # the words are already refused ("at least 2", "less than 2"); the symbols mean the same
    assert not check(response, answers=answers).passed, response


def test_symbols_in_the_gold_itself_still_pass() -> None:
    assert check("18+", answers=["18+"]).passed
    assert check("C++", answers=["C++"]).passed
    assert check("2 + 2", answers=["2 + 2"]).passed
    assert check("Paris \u2713", answers=["Paris"]).passed  # a check mark affirms


@pytest.mark.parametrize(
    ("response", "answers"),
    [
        ("1960s", ["1960"]),
        ("the 1960s", ["1960"]),
        ("1960's", ["1960"]),
        ("2000s", ["2000"]),
        ("1969s", ["1969"]),
        ("1960", ["the 1960s"]),
        ("1990", ["1990s"]),
    ],
)
def test_a_decade_is_not_a_year(response: str, answers: list[str]) -> None:
    assert not check(response, answers=answers).passed, response


def test_decades_still_match_decades() -> None:
    assert check("the 1960s", answers=["1960s"]).passed
    assert check("1960's", answers=["the 1960s"]).passed


def test_a_markdown_quote_is_not_a_comparison() -> None:
    assert check("> Paris", answers=["Paris"]).passed
    assert check("> Elizabeth II", answers=["Elizabeth II"]).passed


@pytest.mark.slow
@pytest.mark.parametrize(
    ("response", "answers"),
    [
        # a wrong name glued before the gold reads as "middle names" of the gold
        ("Larry Bloom Larry Smith", ["Larry Smith"]),
        ("John Smith Jane Smith", ["John Smith"]),
        # a gold with its own middle initial: another middle name makes another person
        ("George H. W. Bush", ["George W. Bush"]),
        ("George W. Bush", ["George H. W. Bush"]),
    ],
)
def test_name_rule_does_not_swallow_other_names(response: str, answers: list[str]) -> None:
    assert not check(response, answers=answers).passed, response


def test_name_rule_still_reads_middle_names() -> None:
    assert check("Daniel Jacob Radcliffe", answers=["Daniel Radcliffe"]).passed
    assert check("Dwight David Eisenhower", answers=["Dwight D. Eisenhower"]).passed
    assert check("Darrel Curtis", answers=['Darrel "Darry" Curtis']).passed
    # a hyphenated surname is one name, not a middle name of the gold
    assert check("Hannah Dominique E. John-Kamen", answers=["Hannah John-Kamen"]).passed
    assert check("hannah dominique e. john - kamen", answers=["Hannah John-Kamen"]).passed
    assert not check("Hannah John-Kamen Smith-Kamen", answers=["Hannah John-Kamen"]).passed


@pytest.mark.parametrize(
    ("response", "answers"),
    [
        # a regnal or sequence numeral is part of the name: dropping it, or the words before it,
        # names someone or something else
        ("King George", ["King George III"]),
        ("Queen Elizabeth", ["Queen Elizabeth II"]),
        ("World War", ["World War II"]),
        ("World II", ["World War II"]),
        ("war II", ["World War II"]),
        ("Paul II", ["John Paul II"]),
        ("John Paul", ["Pope John Paul II"]),
        ("Pope John Paul", ["Pope John Paul II"]),
        ("Super Bowl", ["Super Bowl LII"]),
        ("Final Fantasy", ["Final Fantasy VII"]),
        ("Martin Luther King", ["Martin Luther King Sr."]),
        # a proper name without its head noun, or without the words that pick the country
        ("United States", ["United States Army"]),
        ("Republic of China", ["People's Republic of China"]),
        ("Republic of the Congo", ["Democratic Republic of the Congo"]),
    ],
)
def test_part_of_a_proper_name_that_names_something_else_fails(response: str, answers: list[str]) -> None:
    assert not check(response, answers=answers).passed, response


@pytest.mark.parametrize(
    ("response", "answers"),
    [
        ("Elizabeth II", ["Queen Elizabeth II"]),
        ("George III", ["King George III"]),
        ("John Paul II", ["Pope John Paul II"]),
        ("Louis XIV", ["Louis XIV of France"]),
        ("Henry VIII", ["King Henry VIII of England"]),
        ("Martin Luther King", ["Martin Luther King Jr."]),
        ("Liev Schreiber", ["Isaac Liev Schreiber"]),
        ("Robert Walpole", ["Sir Robert Walpole"]),
        ("Meriwether Lewis", ["Captain Meriwether Lewis"]),
    ],
)
def test_part_of_a_proper_name_that_still_names_it_passes(response: str, answers: list[str]) -> None:
    assert check(response, answers=answers).passed, response


@pytest.mark.parametrize(
    ("response", "answers"),
    [
        # a title followed by "of" names a relative, not the person
        ("brother of John F. Kennedy", ["John F. Kennedy"]),
        ("father of John Smith", ["John Smith"]),
        ("sister of Mary Smith", ["Mary Smith"]),
        # "Place, Region" where the place says "not here"
        ("Outside, France", ["France"]),
        ("Nowhere, France", ["France"]),
        ("Berlin Germany, France", ["France"]),  # two countries: two candidates
        # a feature or thing named after a country or state is not the country or state
        ("Jordan River", ["Jordan"]),
        ("Mississippi River", ["Mississippi"]),
        ("Georgia Strait", ["Georgia"]),
        ("Mexico Valley", ["Mexico"]),
        ("France people", ["France"]),
        ("Texas language", ["Texas"]),
        ("Irish Sea", ["Irish"]),
    ],
)
def test_words_around_the_gold_that_change_the_referent(response: str, answers: list[str]) -> None:
    assert not check(response, answers=answers).passed, response


def test_allowed_words_around_the_gold_still_pass() -> None:
    assert check("Father John Smith", answers=["John Smith"]).passed
    assert check("the state of Ohio", answers=["Ohio"]).passed
    places = EquivalenceOptions(places=True)  # opt-in: see docs/graders-text.md
    assert check("Terre Haute, Indiana", answers=["Indiana"], equivalence=places).passed
    assert check("South Bend, Indiana", answers=["Indiana"], equivalence=places).passed
    assert check("Amazon River", answers=["Amazon"]).passed
    assert check("vagus nerve", answers=["Vagus"]).passed
    assert check("Irish people", answers=["Irish"]).passed
    assert check("English language", answers=["English"]).passed


@pytest.mark.parametrize(
    ("response", "answers"),
    [
        # "by" and "to" before a number or date move it like "before" and "until" do
        ("by 1969", ["1969"]),
        ("to 1969", ["1969"]),
        ("by July 20, 1969", ["July 20, 1969"]),
        ("by 2", ["2"]),
        ("up to 25", ["25"]),
    ],
)
def test_by_and_to_before_a_number_move_it(response: str, answers: list[str]) -> None:
    assert not check(response, answers=answers).passed, response


def test_prepositions_that_do_not_move_a_number_still_pass() -> None:
    assert check("in 1969", answers=["1969"]).passed
    assert check("on July 20, 1969", answers=["July 20, 1969"]).passed
    assert check("up to 25", answers=["up to 25 players"]).passed
    assert check("to Paris", answers=["Paris"]).passed
    assert check("50 to 100 million", answers=["50 to 100 million"]).passed


@pytest.mark.parametrize(
    "response",
    [
        # the answer line, then the answer taken back or doubted: the prompt asks for the answer on
        # the last line, and a reader takes the correction
        "Answer: Paris\nActually, it's London.",
        "Answer: Paris\nWait, no. It is London.",
        "Answer: Paris\n\nOn second thought, Lyon.",
        "Answer: Paris\nScratch that: London.",
        "Answer: Paris\nCorrection: London",
        "Answer: Paris\nI'm not sure though.",
        "Answer: Paris (I think)\n",
        "Answer: Paris\nOr maybe London.",
        "Answer: Paris\nJust kidding, it's London.",
        "\\boxed{Paris}\nActually London.",
        "\\boxed{Paris}. Hmm, I was wrong: it is London.",
    ],
)
def test_an_answer_taken_back_after_its_line_fails(response: str) -> None:
    assert not check(response, answers=["Paris"]).passed, response


def test_an_answer_with_a_plain_note_after_it_still_passes() -> None:
    assert check("Answer: Paris\nIt is the capital of France.", answers=["Paris"]).passed
    assert check("Let me think.\nAnswer: Paris", answers=["Paris"]).passed
    assert check("I was unsure at first, but actually it is clear.\nAnswer: Paris", answers=["Paris"]).passed
    assert check("\\boxed{Paris}", answers=["Paris"]).passed
