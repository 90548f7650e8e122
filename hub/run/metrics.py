"""Run statistics: unbiased pass@k, pass^k, confidence intervals, per-task pass rates.

:class:`SummaryBuilder` accumulates finished rollouts one at a time (constant memory per task,
nothing per rollout) and produces the :class:`Summary` written to ``summary.json``. Errored
rollouts (model, environment or grader failures) are counted in ``n_errors`` and left out of
rewards and pass rates: an error is never a wrong answer.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from math import comb

from pydantic import BaseModel, Field

from hub.env import Rollout

__all__ = ["PerTask", "Summary", "SummaryBuilder", "ks_for", "pass_all_k", "pass_at_k"]


def pass_at_k(n: int, c: int, k: int) -> float:
    """Unbiased estimate of P(at least one of k samples passes) from n samples with c passes."""
    if k > n:
        raise ValueError(f"k={k} exceeds n={n}")
    if n - c < k:
        return 1.0
    return 1.0 - comb(n - c, k) / comb(n, k)


def pass_all_k(n: int, c: int, k: int) -> float:
    """Unbiased estimate of P(all k samples pass) (pass^k) from n samples with c passes."""
    if k > n:
        raise ValueError(f"k={k} exceeds n={n}")
    return comb(c, k) / comb(n, k)


def ks_for(rollouts: int) -> list[int]:
    """The k values reported for R rollouts per task: 1, 2, 4, ... and R itself."""
    ks: list[int] = []
    k = 1
    while k <= rollouts:
        ks.append(k)
        k *= 2
    if rollouts >= 1 and ks[-1] != rollouts:
        ks.append(rollouts)
    return ks


class PerTask(BaseModel):
    task_id: str
    n: int = Field(description="Graded rollouts (errors excluded).")
    n_passed: int
    n_errors: int = 0
    pass_rate: float | None = Field(description="n_passed / n, or None when n == 0.")
    mean_reward: float | None = None


class Summary(BaseModel):
    """Contents of ``summary.json``."""

    env_id: str
    env_version: str = ""
    model: str
    n_tasks: int
    rollouts_per_task: int
    n_rollouts: int = Field(description="Rollouts recorded, errors included.")
    n_errors: int = Field(description="Rollouts without a verdict (model/environment/grader failure).")
    errors_by_kind: dict[str, int] = Field(default_factory=dict)
    grader_failures: int = Field(
        default=0,
        description="Graded rollouts the grader raised on: scored 0 and counted in the mean, "
        "counted here so that grader bugs are visible (reason grader_failed).",
    )
    mean_reward: float | None = Field(description="Mean over graded rollouts (errors excluded).")
    ci95: tuple[float, float] | None = Field(description="95% interval of mean_reward, clustered by task.")
    pass_at_k: dict[str, float] = Field(description="Unbiased pass@k, k = 1, 2, 4, ..., R.")
    pass_all_k: dict[str, float] = Field(description="pass^k: all k samples pass.")
    usage: dict[str, int] = Field(default_factory=dict, description="Token totals.")
    zero_variance_fraction: float | None = Field(
        default=None,
        description="Share of tasks (with >= 2 graded rollouts) whose rewards are all equal: "
        "groups that give GRPO-style training no signal.",
    )
    metrics: dict[str, float] = Field(
        default_factory=dict,
        description="Metrics the environment declares (e.g. IFEval's prompt/instruction-level strict "
        "and loose accuracy): sum of numerators / sum of denominators over graded rollouts.",
    )
    per_task: list[PerTask]


class _TaskAcc:
    __slots__ = ("n", "passed", "errors", "reward", "rmin", "rmax")

    def __init__(self) -> None:
        self.n = 0
        self.passed = 0
        self.errors = 0
        self.reward = 0.0
        self.rmin = float("inf")
        self.rmax = float("-inf")


class SummaryBuilder:
    """Streaming accumulator of rollouts into a :class:`Summary`."""

    def __init__(self, *, env_id: str, env_version: str, model: str, rollouts_per_task: int) -> None:
        self.env_id = env_id
        self.env_version = env_version
        self.model = model
        self.rollouts_per_task = rollouts_per_task
        self._tasks: dict[str, _TaskAcc] = {}
        self._errors_by_kind: dict[str, int] = {}
        self._prompt_tokens = 0
        self._completion_tokens = 0
        self.n_rollouts = 0
        self.n_errors = 0
        self.n_grader_failures = 0
        self.n_passed = 0
        self._reward_sum = 0.0
        self._metrics: dict[str, list[float]] = {}

    def add_task(self, task_id: str) -> None:
        """Register a selected task (so tasks with no rollout yet still count)."""
        if task_id not in self._tasks:
            self._tasks[task_id] = _TaskAcc()

    def add(self, rollout: Rollout) -> None:
        acc = self._tasks.get(rollout.task_id)
        if acc is None:
            acc = self._tasks[rollout.task_id] = _TaskAcc()
        self.n_rollouts += 1
        usage = rollout.usage
        self._prompt_tokens += usage.prompt_tokens
        self._completion_tokens += usage.completion_tokens
        reward = rollout.reward
        if rollout.error is not None or reward is None:
            kind = rollout.error.kind if rollout.error is not None else "grader"
            self._errors_by_kind[kind] = self._errors_by_kind.get(kind, 0) + 1
            acc.errors += 1
            self.n_errors += 1
            return
        acc.n += 1
        grade = rollout.grade
        if grade is not None and grade.reason and grade.grader_failed:  # no reason: not a failure
            self.n_grader_failures += 1
        acc.reward += reward
        if reward < acc.rmin:
            acc.rmin = reward
        if reward > acc.rmax:
            acc.rmax = reward
        self._reward_sum += reward
        if rollout.extra:
            self._add_metrics(rollout.extra.get("metrics"))
        if rollout.passed:
            acc.passed += 1
            self.n_passed += 1

    def _add_metrics(self, values: object) -> None:
        """Accumulate a rollout's ``extra.metrics`` ({name: [numerator, denominator]})."""
        if not isinstance(values, dict):
            return
        for name, pair in values.items():
            if not (isinstance(pair, (list, tuple)) and len(pair) == 2):
                continue
            num, den = pair
            if not all(
                isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x) for x in pair
            ):
                continue
            acc = self._metrics.setdefault(str(name), [0.0, 0.0])
            acc[0] += float(num)
            acc[1] += float(den)

    def extend(self, rollouts: Iterable[Rollout]) -> SummaryBuilder:
        for r in rollouts:
            self.add(r)
        return self

    @property
    def running_mean(self) -> float | None:
        graded = self.n_rollouts - self.n_errors
        return self._reward_sum / graded if graded else None

    def build(self) -> Summary:
        per_task = [  # plain rows: the Summary validates them all at once (a PerTask each)
            {
                "task_id": tid,
                "n": a.n,
                "n_passed": a.passed,
                "n_errors": a.errors,
                "pass_rate": (a.passed / a.n) if a.n else None,
                "mean_reward": (a.reward / a.n) if a.n else None,
            }
            for tid, a in self._tasks.items()
        ]
        ks = ks_for(self.rollouts_per_task)
        at_k: dict[str, float] = {}
        all_k: dict[str, float] = {}
        for k in ks:
            eligible = [a for a in self._tasks.values() if a.n >= k]
            if not eligible:
                continue
            at_k[str(k)] = sum(pass_at_k(a.n, a.passed, k) for a in eligible) / len(eligible)
            all_k[str(k)] = sum(pass_all_k(a.n, a.passed, k) for a in eligible) / len(eligible)
        return Summary(
            env_id=self.env_id,
            env_version=self.env_version,
            model=self.model,
            n_tasks=len(self._tasks),
            rollouts_per_task=self.rollouts_per_task,
            n_rollouts=self.n_rollouts,
            n_errors=self.n_errors,
            errors_by_kind=dict(sorted(self._errors_by_kind.items())),
            grader_failures=self.n_grader_failures,
            mean_reward=self.running_mean,
            ci95=_clustered_ci95(list(self._tasks.values()), self.running_mean),
            pass_at_k=at_k,
            pass_all_k=all_k,
            usage={
                "prompt_tokens": self._prompt_tokens,
                "completion_tokens": self._completion_tokens,
                "total_tokens": self._prompt_tokens + self._completion_tokens,
            },
            zero_variance_fraction=_zero_variance(list(self._tasks.values())),
            metrics={name: num / den for name, (num, den) in sorted(self._metrics.items()) if den > 0},
            per_task=per_task,  # type: ignore[arg-type]  # rows, validated into PerTask here
        )


def _zero_variance(tasks: list[_TaskAcc]) -> float | None:
    groups = [a for a in tasks if a.n >= 2]
    if not groups:
        return None
    return sum(1 for a in groups if a.rmax - a.rmin < 1e-12) / len(groups)


def _clustered_ci95(tasks: list[_TaskAcc], mean: float | None) -> tuple[float, float] | None:
    """Normal-approximation 95% interval of ``mean`` (the mean over graded rollouts), with a
    cluster-robust standard error: rollouts of one task are correlated, so the task is the unit.

    Var(mean) = G / (G - 1) * sum_i (S_i - n_i * mean)^2 / N^2 over the G tasks with graded
    rollouts, where S_i is task i's reward sum over its n_i graded rollouts and N = sum n_i. The
    interval is centred on the reported mean (so it always contains it, whatever the errors per
    task), clipped to [0, 1], and ``None`` with fewer than two tasks (no spread to estimate).
    """
    graded = [a for a in tasks if a.n]
    if mean is None or len(graded) < 2:
        return None
    g = len(graded)
    total = sum(a.n for a in graded)
    resid = sum((a.reward - a.n * mean) ** 2 for a in graded)
    half = 1.96 * math.sqrt(g / (g - 1) * resid) / total
    return (max(0.0, mean - half), min(1.0, mean + half))
