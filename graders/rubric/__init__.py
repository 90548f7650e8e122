"""Rubric grading: weighted checks from a JSON/YAML file, with hardened LLM judges.

Public surface::

    load_rubric(path, judge=...) -> Rubric      # validated on load; a Rubric is a Grader
    Rubric(spec, judge=..., pool=...)           # from an already validated RubricSpec
    rubric_points(grade) -> (earned, total)     # e.g. (120.0, 183.0)
    JudgeModel, JudgeSampling                   # what a judge model must provide (see hub.run.judge)
    register_grader(name, factory)              # graders that `kind: grader` checks may name
    build_judge_messages -> JudgePrompt         # the judge hardening (nonce, secret verdict codes)
    parse_verdict(answer, prompt)               #   and its strict parser, exposed for tests and audits

Errors: :class:`RubricError` (bad rubric; :class:`RubricFormatError` lists each bad field) and
:class:`JudgeError` (a judge call failed; inside a rubric it becomes an ``error`` check). This
package never imports ``hub``. The format is documented in ``docs/rubrics.md``.
"""

from graders.rubric.errors import JudgeError, RubricError, RubricFormatError, UnknownGraderError, VerdictError
from graders.rubric.judge import (
    JudgeModel,
    JudgeSampling,
    JudgeVerdict,
    Vote,
    aggregate_votes,
    parse_verdict,
)
from graders.rubric.load import load_rubric_spec, parse_rubric_spec
from graders.rubric.prompt import JudgePrompt, build_judge_messages, make_code, make_nonce
from graders.rubric.registry import register_grader, registered_graders
from graders.rubric.rubric import Rubric, load_rubric, rubric_points
from graders.rubric.spec import (
    ContainsCheck,
    FunctionCheck,
    GraderCheck,
    JudgeCheck,
    JudgeSettings,
    LengthCheck,
    RegexCheck,
    RubricSpec,
)

__all__ = [
    "ContainsCheck",
    "FunctionCheck",
    "GraderCheck",
    "JudgeCheck",
    "JudgeError",
    "JudgeModel",
    "JudgePrompt",
    "JudgeSampling",
    "JudgeSettings",
    "JudgeVerdict",
    "LengthCheck",
    "RegexCheck",
    "Rubric",
    "RubricError",
    "RubricFormatError",
    "RubricSpec",
    "UnknownGraderError",
    "VerdictError",
    "Vote",
    "aggregate_votes",
    "build_judge_messages",
    "load_rubric",
    "load_rubric_spec",
    "make_code",
    "make_nonce",
    "parse_rubric_spec",
    "parse_verdict",
    "register_grader",
    "registered_graders",
    "rubric_points",
]
