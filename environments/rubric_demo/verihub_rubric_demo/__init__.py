"""rubric_demo: short product descriptions graded by a rubric with deterministic and judge checks.

The environment owns its judge (a :class:`hub.run.judge.LazyJudge`): nothing starts when it is
built; the judge model starts on the first grade. Close it with ``await env.aclose()`` or
``async with load_environment() as env:`` (see README.md for what happens if nobody does).
"""

from __future__ import annotations

from importlib.resources import as_file, files
from typing import Literal

from graders.rubric import Rubric, RubricSpec, load_rubric_spec
from hub import SingleTurnEnv, Task
from hub.run.judge import JudgeOptions, LazyJudge

__all__ = ["PRODUCTS", "RubricDemoEnv", "load_environment", "make_tasks", "rubric_spec"]

__version__ = "0.1.0"

SYSTEM_PROMPT = "You write short product descriptions for an online shop."
PROMPT = (
    "Write a short description (two or three sentences, at most 60 words) of this product for an "
    "online shop: {product}. Use the word '{keyword}'. Write plain prose, not a list."
)

PRODUCTS: tuple[tuple[str, str], ...] = (
    ("a stainless steel water bottle that keeps drinks cold for 24 hours", "insulated"),
    ("a wool beanie knitted by hand in Scotland", "warm"),
    ("a solar-powered garden lamp", "sunlight"),
    ("a cast-iron frying pan", "durable"),
    ("noise-cancelling headphones for travel", "quiet"),
    ("a bamboo cutting board", "sustainable"),
    ("a waterproof hiking jacket", "breathable"),
    ("a ceramic pour-over coffee dripper", "aroma"),
    ("a foldable electric bicycle", "commute"),
    ("a set of beeswax food wraps", "reusable"),
    ("a mechanical keyboard with tactile switches", "typing"),
    ("a children's picture book about the ocean", "whales"),
)


def make_tasks() -> list[Task]:
    """The test split: one task per product (the reference names the product and keyword)."""
    return [
        Task(
            id=f"blurb-{i:02d}",
            prompt=PROMPT.format(product=product, keyword=keyword),
            answer={"product": product, "keyword": keyword},
            metadata={"split": "test", "keyword": keyword},
        )
        for i, (product, keyword) in enumerate(PRODUCTS)
    ]


def rubric_spec() -> RubricSpec:
    """The validated rubric shipped with the package (``rubric.yaml``)."""
    with as_file(files(__name__) / "rubric.yaml") as path:
        return load_rubric_spec(path)


class RubricDemoEnv(SingleTurnEnv):
    """A single-turn environment graded by :attr:`rubric`, owning its :attr:`judge`.

    Use ``async with env:`` or ``await env.aclose()`` to stop the judge model.
    """

    def __init__(self, *, rubric: Rubric, judge: LazyJudge) -> None:
        super().__init__(
            id="rubric_demo",
            version=__version__,
            tasks=make_tasks(),
            grader=rubric,
            system_prompt=SYSTEM_PROMPT,
        )
        self.rubric = rubric
        self.judge = judge

    async def aclose(self) -> None:
        """Close the judge's client and stop its model server, if they were started."""
        await self.judge.aclose()

    async def __aenter__(self) -> RubricDemoEnv:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()


def load_environment(
    *,
    judge_model: str = "local:smollm2",
    judge_base_url: str | None = None,
    judge_samples: int | None = None,
    judge_max_tokens: int | None = None,
    on_judge_error: Literal["error", "zero"] | None = None,
) -> RubricDemoEnv:
    """Build the environment; the judge starts lazily on the first grade.

    ``judge_model``: ``local:smollm2`` (embedded, CPU) or a model name served at
    ``judge_base_url``. ``judge_samples`` / ``judge_max_tokens`` override the rubric's settings.
    ``on_judge_error``: ``error`` (the rubric's default: a failed judge makes the grade an error)
    or ``zero`` (the judge check scores 0 and the grade cannot pass; useful with weak judges).
    """
    spec = rubric_spec()
    update: dict[str, int] = {}
    if judge_samples is not None:
        update["samples"] = judge_samples
    if judge_max_tokens is not None:
        update["max_tokens"] = judge_max_tokens
    if update:
        settings = spec.judge.model_validate({**spec.judge.model_dump(), **update})
        spec = spec.model_copy(update={"judge": settings})
    if on_judge_error is not None:
        if on_judge_error not in ("error", "zero"):
            raise ValueError(f"on_judge_error must be 'error' or 'zero', got {on_judge_error!r}")
        spec = spec.model_copy(update={"on_error": on_judge_error})
    judge = LazyJudge(judge_model, base_url=judge_base_url, options=JudgeOptions())
    return RubricDemoEnv(rubric=Rubric(spec, judge=judge), judge=judge)
