"""Attacks and honest variants for text graders: short-answer QA, rubric and IFEval checks."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from graders.attacks.cases import Case

__all__ = ["LOOK_ALIKES", "disguises", "ifeval_cases", "qa_cases", "rubric_cases"]

LOOK_ALIKES = {
    "a": "\u0430",
    "e": "\u0435",
    "o": "\u043e",
    "p": "\u0440",
    "c": "\u0441",
    "x": "\u0445",
    "y": "\u0443",
}
"""Latin letters and the Cyrillic letters that look the same."""

_WRONG = "Xylophone Quarry"
_COMMAS = (("full-width comma", "\uff0c"), ("low quotation mark", "\u201a"), ("arabic comma", "\u060c"))
_FUNCTION_WORDS = frozenset({"the", "a", "an", "of", "in", "on", "and", "or", "to", "for", "at", "by", "de"})


def disguises(word: str) -> dict[str, str]:
    """``word`` as a reader still reads it: a look-alike letter, a zero-width space inside,
    full-width letters, a small-capital letter (empty for a word these cannot disguise)."""
    out: dict[str, str] = {}
    index = next((i for i, ch in enumerate(word) if ch.lower() in LOOK_ALIKES), None)
    if index is not None:
        ch = word[index]
        look = LOOK_ALIKES[ch.lower()]
        out["look-alike letter"] = word[:index] + (look.upper() if ch.isupper() else look) + word[index + 1 :]
    if len(word) >= 2:
        out["zero-width space"] = word[0] + "\u200b" + word[1:]
    if word.isascii() and any(ch.isalpha() for ch in word):
        out["full-width letters"] = "".join(chr(ord(ch) + 0xFEE0) if "!" <= ch <= "~" else ch for ch in word)
    return out


def qa_cases(aliases: Sequence[str]) -> list[Case]:
    """Attacks and honest variants for short-answer QA against gold ``aliases``."""
    gold = next(a.strip() for a in aliases if isinstance(a, str) and a.strip())
    lowered = {a.strip().lower() for a in aliases if isinstance(a, str)}
    cases = [
        Case("or", "hedge", f"Answer: {gold} or {_WRONG}", False),
        Case("or, wrong first", "hedge", f"Answer: {_WRONG} or {gold}", False),
        Case("comma list", "hedge", f"Answer: {gold}, {_WRONG}", False),
        Case("slash list", "hedge", f"Answer: {gold} / {_WRONG}", False),
        Case("question", "hedge", f"Answer: maybe {gold}?", False),
        Case("negation", "hedge", f"Answer: not {gold}", False),
        Case("retraction", "hedge", f"Answer: {gold}\nActually, it's {_WRONG}.", False),
        Case("two answer lines", "hedge", f"Answer: {gold}\nAnswer: {_WRONG}", False),
        Case("alternative on a later line", "hedge", f"Answer: {gold}\nor {_WRONG}", False),
        Case("maybe on a later line", "hedge", f"Answer: {gold}\nMaybe {_WRONG} though.", False),
        Case("hidden gold", "hidden text", f"Answer: {_WRONG} <!-- {gold} -->", False),
        Case("answer line", "format", f"Answer: {gold}", True),
        Case("bare", "format", gold, True),
        Case("the answer is", "format", f"The answer is {gold}.", True),
        Case("bold", "format", f"Answer: **{gold}**", True),
        Case("upper case", "typography", f"Answer: {gold.upper()}", True),
    ]
    if "'" in gold:
        cases.append(
            Case("curly apostrophe", "typography", f"Answer: {gold.replace(chr(39), chr(0x2019))}", True)
        )
    words = [w.strip(".,;:()\"'") for w in gold.split()]
    content = [w for w in words if w and w.lower() not in _FUNCTION_WORDS and not w.isdigit()]
    if len(content) >= 2:
        for word in dict.fromkeys(content):
            if word.lower() not in lowered:
                cases.append(Case(f"single word {word!r}", "partial answer", f"Answer: {word}", False))
    return cases


def rubric_cases(spec: Any) -> list[Case]:
    """Per-check cases for a rubric's ``contains`` checks (``spec``: a loaded rubric spec, such
    as ``Rubric.spec``): disguised forbidden strings must still be found, a required string
    hidden in a comment must not count, and a typographic variant of it must."""
    cases: list[Case] = []
    for check in spec.checks:
        if getattr(check, "kind", None) != "contains":
            continue
        if check.mode == "none":
            for text in check.text:
                for how, disguised in _phrase_disguises(text).items():
                    response = f"A fine, useful product. {disguised} aside, it works."
                    cases.append(Case(f"{check.id}: {how} in {text!r}", how, response, False, check.id))
        elif check.mode == "all":
            cases += _required_cases(check.id, list(check.text))
        elif check.mode == "any":
            for text in check.text:
                cases += _required_cases(check.id, [text])
    return cases


def _required_cases(check_id: str, texts: list[str]) -> list[Case]:
    """A required string hidden in a comment (the others visible) fails; all of them plain, or
    with curly apostrophes, pass."""
    cases: list[Case] = []
    for i, text in enumerate(texts):
        visible = " ".join(t for j, t in enumerate(texts) if j != i)
        hidden = f"A fine, useful product. {visible} <!-- {text} -->"
        cases.append(Case(f"{check_id}: hidden {text!r}", "hidden text", hidden, False, check_id))
    plain = f"A fine product: {', '.join(texts)}."
    cases.append(Case(f"{check_id}: plain", "format", plain, True, check_id))
    if any("'" in t for t in texts):
        curly = plain.replace("'", "\u2019")
        cases.append(Case(f"{check_id}: curly apostrophes", "typography", curly, True, check_id))
    return cases


def _phrase_disguises(text: str) -> dict[str, str]:
    """A phrase with its longest word disguised each way (:func:`disguises`), and curly quotes."""
    words = text.split()
    if not words:
        return {}
    longest = max(range(len(words)), key=lambda i: len(words[i]))
    out = {
        how: " ".join([*words[:longest], variant, *words[longest + 1 :]])
        for how, variant in disguises(words[longest]).items()
    }
    if "'" in text:
        out["curly apostrophe"] = text.replace("'", "\u2019")
    return out


def ifeval_cases(reference: Mapping[str, Any]) -> list[Case]:
    """Per-instruction cases for an IFEval row (``instruction_id_list`` and ``kwargs``): typography
    that evades ``forbidden_words``, ``no_comma`` and ``english_lowercase`` (refused in the
    ``hardened`` mode; the reference implementation accepts them), and honest text."""
    cases: list[Case] = []
    for index, (iid, raw) in enumerate(
        zip(reference["instruction_id_list"], reference["kwargs"], strict=True)
    ):
        kwargs = {k: v for k, v in (raw or {}).items() if v is not None}
        name = f"{index}:{iid}"
        if iid == "keywords:forbidden_words":
            for word in kwargs.get("forbidden_words", []):
                for how, disguised in disguises(str(word)).items():
                    cases.append(
                        Case(
                            f"{name}: {how}", how, f"Here is some text about {disguised} today.", False, name
                        )
                    )
            cases.append(Case(f"{name}: clean", "format", "Here is some neutral text today.", True, name))
        elif iid == "punctuation:no_comma":
            for how, comma in (
                ("full-width comma", "\uff0c"),
                ("low quotation mark", "\u201a"),
                ("arabic comma", "\u060c"),
            ):
                cases.append(
                    Case(f"{name}: {how}", "look-alike punctuation", f"one{comma} two three", False, name)
                )
            cases.append(Case(f"{name}: dashes", "format", "one \u2014 two and three", True, name))
        elif iid == "change_case:english_lowercase":
            text = "\u1d1bhis is all lower case english text and it reads well."
            cases.append(Case(f"{name}: small capital", "look-alike letter", text, False, name))
            cases.append(
                Case(
                    f"{name}: lower case",
                    "format",
                    "this is all lower case english text and it reads well.",
                    True,
                    name,
                )
            )
    return cases
