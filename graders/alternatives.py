"""Alternatives offered after the answer: a later line that opens with a hedge or calls another
value possible too ("Answer: 7" then "or 8", "Alternatively, 8.", "Maybe 8 though.", "8 is also
possible"). Every grader that reads a committed answer treats such a line as one more commitment
(math, exact) or as doubt about the answer (QA), so an answer cannot hide among alternatives.
"""

from __future__ import annotations

import re

__all__ = ["HEDGE_LINE", "alternative_lines"]

HEDGE_LINE = re.compile(
    r"^[ \t*_>(\[-]*(?:or|alternatively|alternately|maybe|perhaps|possibly|otherwise|either|else|unless)"
    r"(?![A-Za-z])|(?<![A-Za-z])(?:also|equally|might|could)(?![A-Za-z])[^\n]{0,40}?"
    r"(?<![A-Za-z])(?:possible|valid|correct|acceptable|plausible|right)(?![A-Za-z])",
    re.IGNORECASE,
)
"""A line offering an alternative: it opens with a hedge, or calls a value possible too."""


def alternative_lines(text: str) -> list[str]:
    """The lines of ``text`` that offer an alternative (see :data:`HEDGE_LINE`)."""
    return [line for line in text.splitlines() if line.strip() and HEDGE_LINE.search(line)]
