"""pass@k / pass^k against brute-force enumeration, and summary bookkeeping."""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable

import pytest

from graders.grade import Grade
from hub.env.grading import with_grade
from hub.env.types import Rollout, RolloutError
from hub.run.metrics import Summary, SummaryBuilder, ks_for, pass_all_k, pass_at_k


def brute(n: int, c: int, k: int, *, all_: bool) -> float:
    outcomes = [True] * c + [False] * (n - c)
    subsets = list(itertools.combinations(range(n), k))
    hits = sum((all if all_ else any)(outcomes[i] for i in s) for s in subsets)
    return hits / len(subsets)


@pytest.mark.parametrize("n", [1, 2, 3, 5, 8])
def test_estimators_match_enumeration(n: int) -> None:
    for c in range(n + 1):
        for k in range(1, n + 1):
            assert pass_at_k(n, c, k) == pytest.approx(brute(n, c, k, all_=False))
            assert pass_all_k(n, c, k) == pytest.approx(brute(n, c, k, all_=True))


def test_k_larger_than_n_is_an_error() -> None:
    with pytest.raises(ValueError):
        pass_at_k(2, 1, 3)


def test_ks() -> None:
    assert ks_for(1) == [1]
    assert ks_for(4) == [1, 2, 4]
    assert ks_for(6) == [1, 2, 4, 6]


def test_errors_are_not_wrong_answers(rollout_factory: Callable[..., Rollout]) -> None:
    b = SummaryBuilder(env_id="e", env_version="1", model="m", rollouts_per_task=2)
    b.add(rollout_factory("a", 0, reward=1.0, passed=True))
    b.add(rollout_factory("a", 1, reward=None, passed=False, error=RolloutError(kind="model", message="x")))
    b.add(rollout_factory("b", 0, reward=0.0, passed=False))
    b.add(rollout_factory("b", 1, reward=0.0, passed=False))
    s = b.build()
    assert s.n_rollouts == 4 and s.n_errors == 1
    assert s.errors_by_kind == {"model": 1}
    assert s.mean_reward == pytest.approx(1 / 3)  # the error is excluded, not counted as 0
    per = {t.task_id: t for t in s.per_task}
    assert per["a"].n == 1 and per["a"].pass_rate == 1.0 and per["a"].n_errors == 1
    assert per["b"].pass_rate == 0.0
    assert s.pass_at_k["1"] == pytest.approx(0.5)
    # pass@2 only over tasks with 2 graded rollouts
    assert s.pass_at_k["2"] == pytest.approx(0.0)
    assert s.ci95 is not None and s.ci95[0] <= 0.5 <= s.ci95[1]


def test_a_grader_that_raised_counts_as_a_zero_and_apart(rollout_factory: Callable[..., Rollout]) -> None:
    """Appending a character that crashes the grader to a wrong answer must not lift the mean."""
    b = SummaryBuilder(env_id="e", env_version="1", model="m", rollouts_per_task=1)
    b.add(rollout_factory("a", 0, reward=1.0, passed=True))
    for task in ("b", "c", "d"):
        crashed = with_grade(rollout_factory(task, 0), Grade.failed("ValueError: bad digit"), 0.0)
        b.add(crashed)
    s = b.build()
    assert s.n_errors == 0 and s.errors_by_kind == {}
    assert s.grader_failures == 3
    assert s.mean_reward == pytest.approx(0.25)
    assert Summary.model_validate({**s.model_dump(), "grader_failures": 3}).grader_failures == 3
    old = s.model_dump()
    del old["grader_failures"]  # a summary written before the field reads as none
    assert Summary.model_validate(old).grader_failures == 0


def test_task_without_rollouts_is_counted(rollout_factory: Callable[..., Rollout]) -> None:
    b = SummaryBuilder(env_id="e", env_version="1", model="m", rollouts_per_task=1)
    b.add_task("x")
    s = b.build()
    assert s.n_tasks == 1 and s.mean_reward is None and s.per_task[0].pass_rate is None


def test_ci95_is_centred_on_the_rollout_mean(rollout_factory: Callable[..., Rollout]) -> None:
    """Errors spread unevenly over tasks make task means and the rollout mean differ; the interval
    is the cluster-robust one around the reported mean, checked against a hand computation."""
    b = SummaryBuilder(env_id="e", env_version="1", model="m", rollouts_per_task=4)
    rewards = {"a": [1.0, 1.0, 1.0, 1.0], "b": [0.0, None, None, None], "c": [1.0, 0.0, 0.0, 0.0]}
    for tid, rs in rewards.items():
        for i, r in enumerate(rs):
            err = RolloutError(kind="model", message="x") if r is None else None
            b.add(rollout_factory(tid, i, reward=r, passed=r == 1.0, error=err))
    s = b.build()
    mean = 5 / 9  # graded rollouts: 4 + 1 + 4
    assert s.mean_reward == pytest.approx(mean)
    resid = (4 - 4 * mean) ** 2 + (0 - 1 * mean) ** 2 + (1 - 4 * mean) ** 2
    half = 1.96 * math.sqrt(3 / 2 * resid) / 9
    assert s.ci95 is not None
    assert s.ci95 == pytest.approx((max(0.0, mean - half), min(1.0, mean + half)))
    assert s.ci95[0] <= s.mean_reward <= s.ci95[1]


def test_ci95_needs_two_tasks(rollout_factory: Callable[..., Rollout]) -> None:
    b = SummaryBuilder(env_id="e", env_version="1", model="m", rollouts_per_task=2)
    b.add(rollout_factory("a", 0, reward=1.0, passed=True))
    b.add(rollout_factory("a", 1, reward=0.0, passed=False))
    assert b.build().ci95 is None
