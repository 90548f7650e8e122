"""The rubric file format, as frozen pydantic models (validated on load).

A rubric lists checks. Each check has an ``id``, a ``weight`` and a ``kind``:

- deterministic kinds: ``regex``, ``contains``, ``length``, ``grader`` (a registered grader by
  name) and ``function`` (a Python function by import path ``pkg.mod:func``);
- ``judge``: a question for an LLM judge with ordered ``choices``, worst to best.

See ``docs/rubrics.md`` for a full example.
"""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

__all__ = [
    "CHECK_KINDS",
    "CheckSpec",
    "ContainsCheck",
    "FunctionCheck",
    "GraderCheck",
    "JudgeCheck",
    "JudgeSettings",
    "LengthCheck",
    "RegexCheck",
    "RubricSpec",
]

CHECK_KINDS = ("regex", "contains", "length", "grader", "function", "judge")
_ID = r"^[A-Za-z0-9][A-Za-z0-9_.\-]{0,63}$"
_IMPORT_PATH = r"^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*:[A-Za-z_][A-Za-z0-9_]*$"


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class _CheckBase(_Frozen):
    id: str = Field(pattern=_ID, description="Stable id of the check (letters, digits, _ . -).")
    weight: float = Field(default=1.0, ge=0.0, description="Points of this check; 0 = reported only.")
    required: bool = Field(default=False, description="The grade cannot pass unless this check passes.")
    description: str = Field(default="", description="What the check is for (for humans).")


class RegexCheck(_CheckBase):
    """Passes when ``pattern`` matches the response (or does not, with ``expect: no_match``).

    The match runs in a worker process with a hard ``timeout_s``: a pattern that backtracks
    catastrophically (``(a+)+$``) makes the check a ``timeout``, never a hung grader.
    """

    kind: Literal["regex"]
    pattern: str = Field(min_length=1)
    mode: Literal["search", "fullmatch"] = "search"
    ignore_case: bool = False
    multiline: bool = False
    dotall: bool = False
    expect: Literal["match", "no_match"] = "match"
    timeout_s: float = Field(default=2.0, gt=0.0, le=60.0, description="Hard limit on one match.")

    @field_validator("pattern")
    @classmethod
    def _compiles(cls, value: str) -> str:
        try:
            re.compile(value)
        except re.error as exc:
            raise ValueError(f"invalid regular expression: {exc}") from None
        return value

    def flags(self) -> int:
        return (
            (re.IGNORECASE if self.ignore_case else 0)
            | (re.MULTILINE if self.multiline else 0)
            | (re.DOTALL if self.dotall else 0)
        )


class ContainsCheck(_CheckBase):
    """Substring test: ``all`` of ``text`` present, ``any`` of them, or ``none`` (forbidden)."""

    kind: Literal["contains"]
    text: tuple[str, ...] = Field(min_length=1, description="One string or a list of strings.")
    mode: Literal["all", "any", "none"] = "all"
    ignore_case: bool = False

    @field_validator("text", mode="before")
    @classmethod
    def _one_or_many(cls, value: Any) -> Any:
        return (value,) if isinstance(value, str) else value

    @field_validator("text")
    @classmethod
    def _non_empty(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        if any(not t for t in value):
            raise ValueError("empty strings always match; remove them")
        return value


class LengthCheck(_CheckBase):
    """The response's length in ``unit`` lies within ``[min, max]`` (both inclusive)."""

    kind: Literal["length"]
    unit: Literal["chars", "words", "lines"] = "words"
    min: int | None = Field(default=None, ge=0)
    max: int | None = Field(default=None, ge=0)

    @model_validator(mode="after")
    def _bounds(self) -> LengthCheck:
        if self.min is None and self.max is None:
            raise ValueError("a length check needs min, max or both")
        if self.min is not None and self.max is not None and self.min > self.max:
            raise ValueError(f"min ({self.min}) is greater than max ({self.max})")
        return self


class GraderCheck(_CheckBase):
    """A registered grader by name (see :func:`graders.rubric.register_grader`).

    ``options`` are its constructor's keyword arguments. ``reference`` replaces the task's
    reference for this check; when absent, the task's reference is used.
    """

    kind: Literal["grader"]
    grader: str = Field(min_length=1)
    options: dict[str, Any] = Field(default_factory=dict)
    reference: Any = None


class FunctionCheck(_CheckBase):
    """A Python function ``pkg.mod:func`` of the rubric's author (trusted configuration).

    Called as ``func(response, reference=..., **options)``, sync or async; it returns a bool, a
    score in [0, 1], or a :class:`~graders.grade.Grade`.
    """

    kind: Literal["function"]
    function: str = Field(pattern=_IMPORT_PATH, description='Import path "package.module:function".')
    options: dict[str, Any] = Field(default_factory=dict)


class JudgeCheck(_CheckBase):
    """A question for the LLM judge, answered with one of ``choices`` (ordered worst to best).

    ``scores`` maps each choice to a score in [0, 1], strictly increasing; the default spaces
    them evenly from 0 to 1. The check passes only on the best (last) choice.
    """

    kind: Literal["judge"]
    question: str = Field(min_length=1)
    choices: tuple[str, ...] = Field(min_length=2, max_length=10)
    scores: tuple[float, ...] | None = None
    samples: int | None = Field(default=None, ge=1, le=15, description="Votes per judge (default: rubric's).")
    aggregate: Literal["majority", "min"] | None = None
    show_reference: bool = Field(default=False, description="Show the task's reference to the judge.")

    @field_validator("choices")
    @classmethod
    def _distinct(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        for choice in value:
            if not choice.strip() or choice != choice.strip() or len(choice) > 64 or "\n" in choice:
                raise ValueError(f"choice {choice!r} must be 1-64 characters, one line, no outer spaces")
        if len(set(value)) != len(value):
            raise ValueError("choices must be distinct")
        return value

    @model_validator(mode="after")
    def _scores(self) -> JudgeCheck:
        if self.scores is None:
            return self
        if len(self.scores) != len(self.choices):
            raise ValueError(f"scores has {len(self.scores)} entries but choices has {len(self.choices)}")
        if any(not 0.0 <= s <= 1.0 for s in self.scores):
            raise ValueError("scores must lie in [0, 1]")
        if any(b <= a for a, b in zip(self.scores[:-1], self.scores[1:], strict=True)):
            shown = ", ".join(f"{s:g}" for s in self.scores)
            raise ValueError(
                f"scores [{shown}] must increase strictly: choices are ordered worst to best, each "
                "better choice scores more, and only the best one passes"
            )
        return self

    def choice_scores(self) -> tuple[float, ...]:
        if self.scores is not None:
            return self.scores
        n = len(self.choices)
        return tuple(i / (n - 1) for i in range(n))


CheckSpec = Annotated[
    RegexCheck | ContainsCheck | LengthCheck | GraderCheck | FunctionCheck | JudgeCheck,
    Field(discriminator="kind"),
]


class JudgeSettings(_Frozen):
    """Defaults for every judge check of a rubric."""

    samples: int = Field(default=1, ge=1, le=15, description="Votes per judge model and check.")
    aggregate: Literal["majority", "min"] = Field(
        default="majority", description="majority: most votes, ties to the worse choice; min: worst vote."
    )
    temperature: float = Field(default=0.0, ge=0.0, le=2.0)
    vote_temperature: float = Field(
        default=0.7,
        gt=0.0,
        le=2.0,
        description="Used instead of a temperature of 0 when samples > 1 (greedy samples all agree).",
    )
    max_tokens: int = Field(default=256, ge=1)
    timeout_s: float = Field(default=120.0, gt=0.0, description="Per judge call.")
    max_output_chars: int = Field(default=4000, ge=64, description="Longer judge answers are errors.")

    def sample_temperature(self, samples: int) -> float:
        """The temperature of each of ``samples`` votes: ``temperature``, except that several
        votes at temperature 0 would be one vote repeated, so they use ``vote_temperature``."""
        return self.vote_temperature if samples > 1 and self.temperature == 0.0 else self.temperature


class RubricSpec(_Frozen):
    """A whole rubric file."""

    format: Literal[1] = Field(default=1, description="Version of the rubric file format.")
    id: str = Field(pattern=_ID)
    description: str = ""
    checks: tuple[CheckSpec, ...]
    pass_threshold: float = Field(default=1.0, ge=0.0, le=1.0, description="Score needed to pass.")
    on_error: Literal["error", "zero"] = Field(
        default="error",
        description="A check that errs makes the grade an error, or (zero) scores 0 and blocks the pass.",
    )
    max_response_chars: int = Field(
        default=50_000, ge=1, description="Longer responses are graded incorrect."
    )
    judge: JudgeSettings = Field(default_factory=JudgeSettings)

    @field_validator("checks")
    @classmethod
    def _some(cls, value: tuple[CheckSpec, ...]) -> tuple[CheckSpec, ...]:
        # not Field(min_length=1): pydantic would also report it whenever any check is invalid
        if not value:
            raise ValueError("a rubric needs at least one check")
        return value

    @model_validator(mode="after")
    def _ids_and_weights(self) -> RubricSpec:
        seen: set[str] = set()
        for check in self.checks:
            if check.id in seen:
                raise ValueError(f"duplicate check id {check.id!r}")
            seen.add(check.id)
        if sum(c.weight for c in self.checks) <= 0:
            raise ValueError("the weights of the checks sum to 0; give at least one check a positive weight")
        return self

    @property
    def total_weight(self) -> float:
        return sum(c.weight for c in self.checks)

    def judge_checks(self) -> tuple[JudgeCheck, ...]:
        return tuple(c for c in self.checks if isinstance(c, JudgeCheck))
