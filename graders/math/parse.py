"""Reading one extracted answer: literal forms first, then a LaTeX grammar.

:func:`read_answer` turns an answer string into an :class:`Answer`: its cleaned text and, when
the text is a literal, the number, choice letter or word it denotes (no parser involved).
:func:`latex_objects` parses the text with Math-Verify's LaTeX extraction, which goes through
``latex2sympy2_extended``'s ANTLR grammar; it is used only when the literal forms do not apply.

Safety: only :class:`math_verify.LatexExtractionConfig` is used, never ``ExprExtractionConfig``
(which calls ``sympy.parse_expr``). The grammar path reaches ``sympify`` only on number tokens
the lexer has already matched (digits, commas, a point), which cannot run code. Parsing can still
be slow or memory-hungry on hostile input (``10^{10^{10}}``), so it runs inside the worker pool
(:mod:`graders.pool`) with a hard timeout.
"""

from __future__ import annotations

import functools
import logging
from dataclasses import dataclass
from typing import Any

from graders.math.normalize import (
    BasedNumber,
    LiteralNumber,
    clean_answer,
    read_based,
    read_letter,
    read_number,
    read_text,
)

__all__ = ["Answer", "latex_objects", "read_answer", "read_reference", "reference_objects", "warm_up"]


@dataclass(frozen=True)
class Answer:
    """One answer, read.

    ``raw``: as extracted. ``text``: cleaned (see :func:`~graders.math.normalize.clean_answer`).
    ``number``/``letter``/``words``: set when the text is a literal number, a choice letter or a
    ``\\text{...}`` word answer; ``based`` for a numeral with a base subscript.
    ``is_text_answer``: the text is wrapped in ``\\text{}`` (for a reference, word comparison
    then decides).
    """

    raw: str
    text: str
    number: LiteralNumber | None
    letter: str | None
    words: str | None
    is_text_answer: bool
    based: BasedNumber | None = None


def read_answer(raw: str) -> Answer:
    """Read ``raw`` (an answer from a response: not cached, so hostile input cannot fill memory)."""
    text = clean_answer(raw)
    number = read_number(text)
    letter = read_letter(text) if number is None else None
    is_text = text.startswith(("\\text", "\\mbox", "\\textbf", "\\mathrm", "\\textrm")) and text.endswith("}")
    words = read_text(text) if number is None else None
    based = read_based(text) if number is None else None
    return Answer(
        raw=raw, text=text, number=number, letter=letter, words=words, is_text_answer=is_text, based=based
    )


@functools.lru_cache(maxsize=4096)
def read_reference(raw: str) -> Answer:
    """:func:`read_answer` for a reference answer, cached: read once per worker process."""
    return read_answer(raw)


_QUIETED = False


def _quiet_math_verify() -> None:
    """Math-Verify warns once that its own (signal-based) timeout is off: ours is the pool's."""
    global _QUIETED
    if _QUIETED:
        return
    import math_verify.grader
    import math_verify.parser

    math_verify.grader.TIMEOUT_WARNING_SHOWN = True
    math_verify.parser.TIMEOUT_WARNING_SHOWN = True
    logging.getLogger("math_verify").setLevel(logging.ERROR)
    _QUIETED = True


def latex_objects(text: str) -> tuple[Any, ...]:
    """sympy objects (and Math-Verify's string fallback) for the LaTeX answer ``text``.

    Empty when the grammar cannot read it.
    """
    from math_verify import LatexExtractionConfig, parse

    _quiet_math_verify()
    config = [LatexExtractionConfig(boxed_match_priority=0, try_extract_without_anchor=False)]
    return tuple(parse("\\boxed{" + text + "}", extraction_config=config, parsing_timeout=None))


@functools.lru_cache(maxsize=4096)
def reference_objects(text: str) -> tuple[Any, ...]:
    """:func:`latex_objects` for a reference answer, cached: parsed once per worker process."""
    return latex_objects(text)


def warm_up() -> None:
    """Import and exercise the parser once (a pool worker's initializer)."""
    for sample in ("\\frac{\\sqrt{3}}{2}", "[1, 2)", "x = 5", "\\begin{pmatrix}1\\\\2\\end{pmatrix}"):
        latex_objects(sample)
    from math_verify import verify

    verify(list(latex_objects("\\frac{1}{2}")), list(latex_objects("0.5")), timeout_seconds=None)
