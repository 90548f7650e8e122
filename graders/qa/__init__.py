"""Short-answer QA grading: SQuAD exact match and token F1, plus an answer-equivalence layer.

Usable without ``hub``::

    from graders.qa import check, QAGrader

    verdict = check("six geese a-laying", answers=["6 geese a-laying"])
    verdict.passed, verdict.em, verdict.f1, verdict.status, verdict.reason

``passed`` comes from the equivalence layer (:mod:`graders.qa.equivalence`), which accepts what
a careful rater would (number words, dates in other formats, a gold answer stated inside a short
answer with only allow-listed words around it, full vs short names, demonyms) and rejects hedges,
negations, lists of candidates and any other word beside the gold. Precision comes first: a false
pass is worse than a false fail.

Modules: :mod:`~graders.qa.normalize` (SQuAD and canonical forms), :mod:`~graders.qa.numbers`,
:mod:`~graders.qa.dates`, :mod:`~graders.qa.hedges`, :mod:`~graders.qa.lexicon` (closed word
classes), :mod:`~graders.qa.places` (countries, demonyms, regions), :mod:`~graders.qa.rules`
(one prediction against one alias), :mod:`~graders.qa.equivalence`, :mod:`~graders.qa.check`,
:mod:`~graders.qa.grader`.
"""

from graders.qa.check import DEFAULT_MAX_ANSWER_CHARS, QAVerdict, check, exact_match, extract_answer, token_f1
from graders.qa.equivalence import EquivalenceOptions
from graders.qa.grader import QAGrader
from graders.qa.judge import OpenAIJudge, QAJudgeGrader
from graders.qa.normalize import canonical_tokens, squad_normalize

__all__ = [
    "OpenAIJudge",
    "QAJudgeGrader",
    "DEFAULT_MAX_ANSWER_CHARS",
    "EquivalenceOptions",
    "QAGrader",
    "QAVerdict",
    "canonical_tokens",
    "check",
    "exact_match",
    "extract_answer",
    "squad_normalize",
    "token_f1",
]
