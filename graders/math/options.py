"""Options of the math checker, as one frozen record."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from graders.extract import ExtractConfig, MultiAnswerPolicy

__all__ = ["CheckMode", "MathOptions"]

CheckMode = Literal["equivalent", "root", "identity"]
"""How the answer is compared with the reference:

- ``equivalent``: the answer denotes the same value/object as the reference (the default);
- ``root``: the reference is an equation (or an expression ``= 0``) in one variable and the
  answer is any value that satisfies it, checked by substitution;
- ``identity``: the answer is an expression equal to the reference for all values of its
  variables, checked symbolically and by substitution at random points.
"""


@dataclass(frozen=True)
class MathOptions:
    """Options of :func:`graders.math.check` (all keyword arguments of ``check`` land here).

    ``multi_answer``: policy when the response commits to several answers (``reject``: they must
    all be equivalent; ``first``/``last``: grade only that one). ``strict``: reject an
    unevaluated answer where a value is asked for (``37\\cdot43`` for ``1591``, a ``\\sum``,
    ``100+1``) or an unsimplified one (``\\frac{2}{4}``, ``\\sqrt{8}``). ``rel_tol``: relative
    tolerance when either side is a decimal; 0 (the default) takes numbers at face value, so
    ``0.5`` equals ``\\frac12`` but ``0.333`` is not ``\\frac13`` and ``17.99999`` is not 18 (set it
    for data whose references or expected answers are rounded).
    ``mode``: see :data:`CheckMode`. ``max_response_chars``: longer responses fail without being
    read (``None``: no limit). ``extract``: the extraction options (forms, box limits).
    """

    multi_answer: MultiAnswerPolicy = "reject"
    strict: bool = False
    rel_tol: float = 0.0
    mode: CheckMode = "equivalent"
    max_response_chars: int | None = 262_144
    extract: ExtractConfig = field(default_factory=ExtractConfig)

    def __post_init__(self) -> None:
        if not 0 <= self.rel_tol < 1:
            raise ValueError(f"rel_tol must be in [0, 1), got {self.rel_tol}")
        if self.multi_answer not in ("reject", "first", "last"):
            raise ValueError(f"multi_answer must be 'reject', 'first' or 'last', got {self.multi_answer!r}")
        if self.mode not in ("equivalent", "root", "identity"):
            raise ValueError(f"mode must be 'equivalent', 'root' or 'identity', got {self.mode!r}")
