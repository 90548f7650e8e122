"""Text clean-up of one extracted answer, and the literal forms read without any parser.

Everything here is string work with linear regexes; nothing is evaluated. :func:`read_number`
recognises integers, decimals, thousands separators, scientific notation, fractions, mixed
numbers and percentages, with optional ``$``, units and ``x =`` around them, and returns exact
rationals (:class:`fractions.Fraction`).
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from fractions import Fraction

from graders.math.units import unit_scale

__all__ = [
    "BasedNumber",
    "LiteralNumber",
    "clean_answer",
    "fold_unicode_math",
    "read_based",
    "read_letter",
    "read_number",
    "read_text",
]

_DROP = re.compile(
    r"(?<!\\)\\(?:displaystyle|textstyle|left|right|bigl|bigr|Bigl|Bigr|big|Big|!|,|;|:|quad|qquad)(?![a-zA-Z])"
    r"|(?<!\\)\\ |~"
)
_DEGREES = re.compile(r"\^\s*\{?\s*\\circ\s*\}?|°|\\degree")
_FRAC_ALIASES = re.compile(r"\\[dt]frac(?![a-zA-Z])")
_DOLLAR = re.compile(r"\\\$|\$")

# words after a number ("5 cm", "18 dollars", "3 \\text{ apples}", "5 million"): see units.py
_TRAILING_WORDS = re.compile(
    r"^(?P<body>.*?\S)\s*(?:\\(?:text|mbox|mathrm|textrm)\s*\{\s*(?P<w1>[A-Za-z][A-Za-z .^0-9/-]{0,30}?)\s*\}"
    r"(?P<p1>\s*\^\s*\{?\s*[23]\s*\}?)?"
    r"|(?P<w2>(?:[A-Za-z]{1,20})(?:\s+[A-Za-z]{1,20}){0,2}(?:\^\{?[23]\}?)?))$"
)
_ASSIGN = re.compile(r"^[A-Za-z](?:_\{?\w+\}?)?\s*=\s*(?=[^=]+$)")

_INT = r"(?:\d{1,3}(?:,\d{3})+(?!\d)|\d+)"
_NUMBER = re.compile(
    rf"^(?P<sign>[+-]?)\s*(?P<int>{_INT})?(?:\.(?P<frac>\d+))?"
    r"(?:\s*(?:[eE](?P<exp>[+-]?\d{1,4})|(?:\\times|\\cdot|\*|x)\s*10\s*\^\s*\{?\s*(?P<exp2>[+-]?\d{1,4})\s*\}?))?$"
)
_FRACTION = re.compile(
    r"^(?P<sign>[+-]?)\s*(?:(?P<whole>\d+)\s+)??"
    r"(?:\\frac\s*(?:\{\s*(?P<n1>[+-]?\d+)\s*\}|(?P<n2>\d))\s*(?:\{\s*(?P<d1>[+-]?\d+)\s*\}|(?P<d2>\d))"
    r"|(?P<n3>\d+)\s*/\s*(?P<d3>\d+))$"
)
_MIXED = re.compile(r"^(?P<sign>[+-]?)\s*(?P<whole>\d+)\s*(?P<rest>\\frac.*)$")
_PERCENT = re.compile(r"^(?P<body>.*?)\s*(?:\\%|%|\s+percent)$")
_LETTER = re.compile(
    r"^(?:\\(?:text|textbf|mathrm|mathbf)\s*\{\s*)?(?:\((?P<p>[A-Ea-e])\)|(?P<b>[A-E]))\s*\}?$"
)
# \textbf{(113) } (AoPS style) or (113): a number in a font command and/or parentheses
# (a parenthesised comma list is a tuple: ``(1,592)`` is not 1592)
_WRAPPED_NUMBER = re.compile(
    r"^(?:\\(?:textbf|text|mathbf|mathrm)\s*\{\s*)?"
    r"(?:\(\s*(?P<paren>[+-]?\d[\d.]*)\s*\)|(?P<body>[+-]?\d[\d,.]*))\s*\}?$"
)
_TEXT = re.compile(r"^\\(?:text|textbf|mathrm|mbox|textrm)\s*\{(?P<body>[^{}]*)\}$")


_BASED = re.compile(r"^(?P<digits>[0-9A-Za-z]+)\s*_\s*\{?\s*(?P<base>\d{1,2})\s*\}?$")


@dataclass(frozen=True)
class BasedNumber:
    """A numeral with a base subscript, ``52_8``: compared digit for digit, base included."""

    digits: str
    base: int


def read_based(text: str) -> BasedNumber | None:
    """``52_8`` / ``1A_{16}`` -> :class:`BasedNumber`; None otherwise (or digits invalid)."""
    m = _BASED.match(_strip_units(text.strip())[0])
    if m is None:
        return None
    base = int(m.group("base"))
    digits = m.group("digits").upper().lstrip("0") or "0"
    if not 2 <= base <= 36:
        return None
    try:
        int(digits, base)
    except ValueError:
        return None
    return BasedNumber(digits, base)


@dataclass(frozen=True)
class LiteralNumber:
    """A number written as a literal. ``inexact``: written as a decimal (an approximation may
    be meant). ``percent``: written with ``%``."""

    value: Fraction
    inexact: bool = False
    percent: bool = False


_SYMBOLS = {
    "\u221e": "\\infty ",
    "\u03c0": "\\pi ",
    "\u03b8": "\\theta ",
    "\u00d7": "\\times ",
    "\u00f7": "\\div ",
    "\u22c5": "\\cdot ",
    "\u00b7": "\\cdot ",
    "\u2264": "\\le ",
    "\u2266": "\\le ",
    "\u2265": "\\ge ",
    "\u2267": "\\ge ",
    "\u2260": "\\ne ",
    "\u00b1": "\\pm ",
    "\u2213": "\\mp ",
    "\u222a": "\\cup ",
    "\u2229": "\\cap ",
}
_SYMBOL_RE = re.compile("[" + "".join(_SYMBOLS) + "]")
_SUPERSCRIPTS = str.maketrans(
    "\u2070\u00b9\u00b2\u00b3\u2074\u2075\u2076\u2077\u2078\u2079\u207b", "0123456789-"
)
_SUPERSCRIPT_RUN = re.compile("[\u2070\u00b9\u00b2\u00b3\u2074-\u2079\u207b]+")
_VULGAR = re.compile("(\\d?)([\u00bc-\u00be\u2150-\u215e])")
_ROOT = re.compile(r"\u221a[ \t]*(\d+(?:\.\d+)?|[A-Za-z]|\([^()]{1,80}\)|\{[^{}]{1,80}\})")
_UPRIGHT_CONSTANT = re.compile(r"\\(?:mathrm|mathit|rm|text|operatorname)[ \t]*\{[ \t]*([ie])[ \t]*\}")
_UNICODE_MATH = frozenset("\u221a\u00bc\u00bd\u00be\u2070\u00b9\u00b2\u00b3\u207b") | frozenset(_SYMBOLS)


def _vulgar(match: re.Match[str]) -> str:
    parts = unicodedata.decomposition(match.group(2)).split()[1:]  # "<fraction> 0031 2044 0032"
    slash = parts.index("2044") if "2044" in parts else -1
    if slash <= 0:
        return match.group(0)
    numerator = "".join(chr(int(p, 16)) for p in parts[:slash])
    denominator = "".join(chr(int(p, 16)) for p in parts[slash + 1 :])
    whole = f"{match.group(1)} " if match.group(1) else ""
    return f"{whole}\\frac{{{numerator}}}{{{denominator}}}"


def fold_unicode_math(text: str) -> str:
    """Unicode mathematics as LaTeX: ``\u221a3`` is ``\\sqrt{3}``, ``\u221e`` ``\\infty``,
    ``\u00bd`` ``\\frac{1}{2}`` (``1\u00bd`` the mixed number), ``\u00d7`` ``\\times``, ``x\u00b2``
    ``x^{2}``; and the upright constants ``\\mathrm{i}``/``\\mathrm{e}`` as ``i``/``e``."""
    if "\\" in text and ("{i" in text or "{e" in text or "{ i" in text or "{ e" in text):
        text = _UPRIGHT_CONSTANT.sub(r"\1", text)
    if text.isascii() or not any(ch in _UNICODE_MATH or "\u2150" <= ch <= "\u215e" for ch in text):
        return text
    text = _ROOT.sub(lambda m: "\\sqrt{" + m.group(1).strip("(){}") + "}", text)
    text = _VULGAR.sub(_vulgar, text)
    text = _SUPERSCRIPT_RUN.sub(lambda m: "^{" + m.group(0).translate(_SUPERSCRIPTS) + "}", text)
    return _SYMBOL_RE.sub(lambda m: _SYMBOLS[m.group(0)], text)


def clean_answer(text: str) -> str:
    """Drop presentation-only LaTeX (``\\left``, spacing, ``$``, ``\\dfrac``, degrees, a final
    period) from an extracted answer."""
    t = fold_unicode_math(text.strip())
    if t.startswith("\\(") and t.endswith("\\)"):
        t = t[2:-2]
    if t.startswith("\\[") and t.endswith("\\]"):
        t = t[2:-2]
    t = _DOLLAR.sub("", t)
    t = _DROP.sub(" ", t)
    t = _FRAC_ALIASES.sub(r"\\frac", t)
    t = _DEGREES.sub("", t)
    t = t.replace("{,}", ",").replace("\\infty", "\\infty ")
    t = re.sub(r"\s+", " ", t).strip()
    while t.endswith((".", ";")) and not t.endswith(".."):
        t = t[:-1].rstrip()
    return t


def _strip_units(text: str) -> tuple[str, int]:
    """``text`` without trailing unit words, and the factor of a magnitude word among them
    (``5 million dollars`` -> ``("5", 10**6)``). Words off the allow-list are kept (factor 1),
    so the number is not read (see :mod:`graders.math.units`)."""
    m = _TRAILING_WORDS.match(text)
    if m is None:
        return text, 1
    in_text = m.group("w1") is not None
    scale = unit_scale(m.group("w1") or m.group("w2") or "", in_text=in_text)
    if scale is None:
        return text, 1
    return m.group("body").strip(), scale


def read_number(text: str) -> LiteralNumber | None:
    """The value of ``text`` when it is a literal number (see module docstring), else None."""
    t = _ASSIGN.sub("", text.strip())
    t, scale = _strip_units(t)
    t = _ASSIGN.sub("", t)
    if t.startswith("\\$"):
        t = t[2:].strip()
    percent = False
    pm = _PERCENT.match(t)
    if pm is not None:
        percent, t = True, pm.group("body").strip()
    wrapped = _WRAPPED_NUMBER.match(t.strip())
    if wrapped is not None:
        t = wrapped.group("body") or wrapped.group("paren")
    t = t.strip()
    if t.startswith("{") and t.endswith("}") and t.count("{") == 1:
        t = t[1:-1].strip()
    value = _read_plain(t)
    if value is not None:
        return LiteralNumber(value[0] * scale, inexact=value[1], percent=percent)
    return None


def _read_plain(t: str) -> tuple[Fraction, bool] | None:
    m = _NUMBER.match(t)
    if m is not None and (m.group("int") or m.group("frac")):
        whole = (m.group("int") or "0").replace(",", "")
        frac = m.group("frac") or ""
        value = Fraction(int(whole + frac), 10 ** len(frac))
        exp = m.group("exp") or m.group("exp2")
        if exp is not None:
            value *= Fraction(10) ** int(exp)
        if m.group("sign") == "-":
            value = -value
        return value, bool(frac) or (exp is not None and int(exp) < 0)
    m = _FRACTION.match(t)
    if m is not None:
        num = int(m.group("n1") or m.group("n2") or m.group("n3"))
        den = int(m.group("d1") or m.group("d2") or m.group("d3"))
        if den == 0:
            return None
        value = Fraction(num, den)
        if m.group("whole") is not None:
            if num < 0 or den < 0:
                return None
            value += int(m.group("whole"))
        return (-value if m.group("sign") == "-" else value), False
    m = _MIXED.match(t)
    if m is not None:
        rest = _FRACTION.match(m.group("rest"))
        if rest is not None and not rest.group("sign") and rest.group("whole") is None:
            num = int(rest.group("n1") or rest.group("n2") or rest.group("n3"))
            den = int(rest.group("d1") or rest.group("d2") or rest.group("d3"))
            if den > 0 and num >= 0:
                value = int(m.group("whole")) + Fraction(num, den)
                return (-value if m.group("sign") == "-" else value), False
    return None


def read_letter(text: str) -> str | None:
    """``B``, ``(B)``, ``\\text{(B)}`` -> ``"B"``: a multiple-choice letter, else None."""
    m = _LETTER.match(text.strip())
    if m is None:
        return None
    return (m.group("p") or m.group("b")).upper()


def read_text(text: str) -> str | None:
    """``\\text{Evelyn}`` -> ``"evelyn"``: a word answer, compared case- and space-insensitively."""
    m = _TEXT.match(text.strip())
    body = m.group("body") if m is not None else text
    if m is None and not re.fullmatch(r"[A-Za-z][A-Za-z ,'-]*", body.strip()):
        return None
    key = re.sub(r"[^a-z0-9]", "", body.lower())
    return key or None
