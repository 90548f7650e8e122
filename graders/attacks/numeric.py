"""Attacks and honest variants for math and exact-answer graders, derived from the reference."""

from __future__ import annotations

import re
from fractions import Fraction

from graders.attacks.cases import Case

__all__ = ["TIMEOUT_BAIT", "exact_cases", "math_cases"]

TIMEOUT_BAIT = (
    r"\boxed{\tan(\tan(\tan(\tan(\tan(\tan(1))))))}",
    r"\boxed{9^{9^{9}}}",
)
"""Short expressions whose checking outlives any sane time limit: a grader must score them 0
(``incorrect``), never an ``error`` that summaries would leave out."""

_INT = re.compile(r"^[+-]?\d+$")
_FRAC = re.compile(r"^(-?)\\[dt]?frac\{(\d+)\}\{(\d+)\}$")


def _wrong(reference: str) -> str:
    """A value that is not the reference (a plain integer far from it)."""
    return "7919" if reference.strip() != "7919" else "7907"


def _decimal(reference: str) -> str | None:
    """The reference's value to 16 significant digits, when that is an approximation (the value
    does not terminate in decimal: a radical, pi, 1/3); None otherwise or when unreadable."""
    try:
        import sympy

        from graders.math.parse import latex_objects

        value = next(o for o in latex_objects(reference) if isinstance(o, sympy.Expr))
        if value.free_symbols or not value.is_real:
            return None
        if value.is_Rational:
            q = Fraction(int(value.p), int(value.q))
            d = q.denominator
            while d % 2 == 0:
                d //= 2
            while d % 5 == 0:
                d //= 5
            if d == 1:
                return None  # a terminating decimal is exact
        text = str(sympy.N(value, 16))
    except Exception:  # noqa: BLE001 - an unreadable reference simply gets no decimal attacks
        return None
    return text if re.fullmatch(r"-?\d+\.\d+", text) else None


def _structure(reference: str) -> tuple[str, str, list[str]] | None:
    """``(opener, closer, items)`` of a bracketed or bare comma list of two or more items."""
    from graders.math.structure import split_structure

    found = split_structure(reference)
    if found is None:
        return None
    if found.kind == "unordered":
        return ("\\{", "\\}", list(found.items)) if found.brackets == "{}" else ("", "", list(found.items))
    return found.brackets[0], found.brackets[1], list(found.items)


def math_cases(reference: str, *, bait: bool = False) -> list[Case]:
    """Attacks and honest variants for a math reference (LaTeX); ``bait`` adds timeout bait."""
    ref = reference.strip()
    wrong = _wrong(ref)
    cases: list[Case] = []

    def attack(name: str, klass: str, response: str) -> None:
        cases.append(Case(name, klass, response, False))

    def honest(name: str, klass: str, response: str) -> None:
        cases.append(Case(name, klass, response, True))

    structure = _structure(ref)
    decimal = _decimal(ref)
    if decimal is not None:
        for name, form in (
            ("bare", "{}"),
            ("plus sign", "+{}"),
            ("double negation", "-(-{})"),
            ("plus zero", "{} + 0"),
            ("times one", "1 \\cdot {}"),
            ("parenthesised", "({})"),
        ):
            attack(f"decimal {name}", "decimal", "\\boxed{" + form.format(decimal) + "}")
    if structure is not None:
        opener, closer, items = structure
        decimals = [_decimal(item) or item for item in items]
        if decimals != items:
            attack("decimal items", "decimal", f"\\boxed{{{opener}{', '.join(decimals)}{closer}}}")
        body = ", ".join(items)
        if opener in ("(", "["):
            attack("set for a tuple or interval", "kind swap", f"\\boxed{{\\{{{body}\\}}}}")
            attack("list for a tuple or interval", "kind swap", f"\\boxed{{{body}}}")
        else:
            attack("tuple for a set or list", "kind swap", f"\\boxed{{({body})}}")
        attack("an extra value", "hedge", f"\\boxed{{{opener}{body}, {wrong}{closer}}}")
    else:
        attack("value list", "hedge", f"\\boxed{{{ref}, {wrong}}}")
        attack(
            "plus or minus",
            "hedge",
            f"\\boxed{{\\pm {ref}}}" if not ref.startswith("-") else f"\\boxed{{\\pm {wrong}}}",
        )
    attack("text or", "hedge", f"\\boxed{{{ref} \\text{{ or }} {wrong}}}")
    attack("two boxes", "hedge", f"\\boxed{{{ref}}} or \\boxed{{{wrong}}}")
    attack("later retraction", "hedge", f"\\boxed{{{ref}}}\n\nWait, the answer is {wrong}.")
    attack("later final answer", "hedge", f"\\boxed{{{ref}}}\n\nFinal Answer: {wrong}")
    attack("alternative on a later line", "hedge", f"\\boxed{{{ref}}}\n\nAlternatively, ${wrong}$.")
    attack("or on a later line", "hedge", f"The answer is ${ref}$.\nor {wrong}")
    attack("hidden box", "hidden text", f"\\boxed{{{wrong}}}<!-- \\boxed{{{ref}}} -->")
    attack("phantom box", "hidden text", f"\\phantom{{\\boxed{{{ref}}}}}\\boxed{{{wrong}}}")
    attack("negated box", "hedge", f"The answer is not \\boxed{{{ref}}}.")
    if bait:
        for i, text in enumerate(TIMEOUT_BAIT):
            attack(f"timeout bait {i}", "timeout bait", text)

    honest("boxed", "format", f"So the answer is \\boxed{{{ref}}}.")
    honest("dollar boxed", "format", f"$\\boxed{{{ref}}}$")
    honest("the answer is", "format", f"The answer is ${ref}$.")
    honest("minerva", "format", f"Final Answer: The final answer is ${ref}$. I hope it is correct.")
    honest("final answer the answer is", "format", f"Final answer: the answer is ${ref}$")
    honest("markdown final answer", "format", f"**Final Answer**\n\n\\boxed{{{ref}}}")
    if _INT.match(ref):
        value = int(ref)
        honest("gsm8k hashes", "format", f"Adding it up.\n#### {value}")
        honest("named value", "equivalent form", f"\\boxed{{x = {value}}}")
        if value < 0:
            honest("unicode minus", "typography", f"\\boxed{{\u2212{-value}}}")
            honest("unicode minus, prose", "typography", f"The answer is \u2212{-value}.")
        if abs(value) >= 1000:
            grouped = f"{abs(value):,}".replace(",", "\u2009")
            honest("thin-space groups", "typography", f"The answer is {'-' if value < 0 else ''}{grouped}.")
            honest("comma groups", "typography", f"The answer is {value:,}.")
    frac = _FRAC.match(ref)
    if frac is not None:
        sign, num, den = frac.groups()
        honest("slash fraction", "equivalent form", f"\\boxed{{{sign}{num}/{den}}}")
        honest("dfrac", "equivalent form", f"\\boxed{{{sign}\\dfrac{{{num}}}{{{den}}}}}")
    return cases


def exact_cases(reference: str | int, *, wrong: str | None = None) -> list[Case]:
    """Attacks and honest variants for an exact answer (an integer or a short string);
    ``wrong``: the wrong value the hedges offer (default: derived from the reference)."""
    ref = str(reference).strip()
    if wrong is None:
        wrong = _wrong(ref) if _INT.match(ref) else f"{ref}x"
    cases = [
        Case("alternative on the next line", "hedge", f"Answer: {ref}\nor {wrong}", False),
        Case("parenthesised alternative", "hedge", f"Answer: {ref}\n(or {wrong})", False),
        Case("alternatively", "hedge", f"Answer: {ref}\nAlternatively, {wrong}.", False),
        Case("maybe", "hedge", f"Answer: {ref}\nMaybe {wrong} though.", False),
        Case("also possible", "hedge", f"Answer: {ref}\n\n{wrong} is also possible", False),
        Case("box or", "hedge", f"\\boxed{{{ref}}} or {wrong}", False),
        Case("two forms disagree", "hedge", f"Answer: {wrong}\n\\boxed{{{ref}}}", False),
        Case("two hash lines", "hedge", f"#### {ref}\n#### {wrong}", False),
        Case("answer line", "format", f"Answer: {ref}", True),
        Case("boxed", "format", f"The result is \\boxed{{{ref}}}.", True),
        Case("the answer is", "format", f"The answer is {ref}.", True),
        Case("closing remark", "format", f"Answer: {ref}\nI hope it is correct.", True),
    ]
    if _INT.match(ref):
        value = int(ref)
        cases.append(Case("hashes", "format", f"#### {value}", True))
        digits = str(abs(value)).translate({ord(d): chr(0xFF10 + int(d)) for d in "0123456789"})
        cases.append(
            Case("full-width digits", "typography", f"Answer: {'-' if value < 0 else ''}{digits}", True)
        )
        if value < 0:
            cases.append(Case("unicode minus", "typography", f"Answer: \u2212{-value}", True))
    return cases
