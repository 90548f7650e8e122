"""Environment-declared summary metrics: IFEval's four standard numbers, as lm-eval computes them."""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from graders.exact import ExactGrader
from hub import Rollout, SingleTurnEnv, Task
from hub.env.grading import with_metrics
from hub.env.types import Message, Timing
from hub.run.evaluate import evaluate
from hub.run.fake_server import FakeChatServer
from hub.run.metrics import SummaryBuilder
from hub.run.rundir import RunDir

SHARED = Path(os.environ.get("VERIHUB_SHARED_DATA", Path(__file__).resolve().parents[3] / "shared" / "data"))
GPT4 = SHARED / "ifeval" / "gpt4_responses_with_reference_verdicts.jsonl"


def _reference_numbers(rows: list[dict[str, Any]]) -> dict[str, float]:
    """The four numbers from the reference implementation's per-instruction verdicts."""
    out: dict[str, float] = {}
    for mode in ("strict", "loose"):
        out[f"prompt_level_{mode}_acc"] = sum(all(r[mode]) for r in rows) / len(rows)
        out[f"inst_level_{mode}_acc"] = sum(sum(r[mode]) for r in rows) / sum(len(r[mode]) for r in rows)
    return out


def test_ifeval_reports_the_four_standard_numbers_like_the_reference(tmp_path: Path) -> None:
    if not GPT4.exists():
        pytest.skip(f"shared data not found at {GPT4}")
    rows = [json.loads(line) for line in GPT4.read_text().splitlines()][:120]
    data = tmp_path / "ifeval.jsonl"
    data.write_text(
        "".join(
            json.dumps({k: r[k] for k in ("key", "prompt", "instruction_id_list", "kwargs")}) + "\n"
            for r in rows
        )
    )
    answers = {r["prompt"]: r["response"] for r in rows}

    async def go() -> Any:
        async with FakeChatServer(responder=lambda req: answers[req["messages"][-1]["content"]]) as server:
            return await evaluate(
                "ifeval", model="gpt-4", base_url=server.base_url, out=tmp_path / "run",
                env_args={"path": str(data)},
            )  # fmt: skip

    summary = asyncio.run(go())
    expected = _reference_numbers(rows)
    assert set(summary.metrics) == set(expected)
    for name, value in expected.items():
        assert summary.metrics[name] == pytest.approx(value), name  # agrees on all 270 (docs/graders-text.md)
    assert summary.metrics["inst_level_loose_acc"] >= summary.metrics["inst_level_strict_acc"]
    assert summary.metrics["prompt_level_strict_acc"] == pytest.approx(
        sum(t.n_passed for t in summary.per_task) / len(rows)
    )
    # the numbers come back from rollouts.jsonl alone (show --recompute, the leaderboard's check)
    rd = RunDir(tmp_path / "run")
    config = rd.load_config()
    rebuilt = (
        SummaryBuilder(
            env_id=config.env_id, env_version=config.env_version, model=config.model, rollouts_per_task=1
        )
        .extend(rd.iter_rollouts())
        .build()
    )
    assert rebuilt.metrics == pytest.approx(summary.metrics)
    from leaderboard.verify import verify_run

    verify_run(tmp_path / "run")  # raises RunRejected when summary.json does not match the rollouts


class _Broken(SingleTurnEnv):
    def metrics(self, task: Task, rollout: Rollout) -> Mapping[str, tuple[float, float]]:
        raise ZeroDivisionError("bad metric")


class _Counting(SingleTurnEnv):
    def metrics(self, task: Task, rollout: Rollout) -> Mapping[str, tuple[float, float]]:
        return {
            "long_answer": (float(len(rollout.completion) > 3), 1.0),
            "chars": (len(rollout.completion), 2.0),
        }


def _graded(text: str, error: bool = False) -> Rollout:
    from hub.env.types import RolloutError

    return Rollout(
        task_id="t", rollout_index=0, reward=None if error else 1.0, passed=not error,
        messages=[Message(role="assistant", content=text)], timing=Timing(started_at=0.0),
        error=RolloutError(kind="model", message="x") if error else None,
    )  # fmt: skip


def test_metrics_are_ratios_of_sums_and_skip_errors() -> None:
    env = _Counting(id="c", tasks=[Task(id="t", prompt="p", answer="a")], grader=ExactGrader())
    task = Task(id="t", prompt="p", answer="a")
    rollouts = [with_metrics(env, task, _graded(t)) for t in ("ab", "abcdef")]
    rollouts.append(with_metrics(env, task, _graded("abcdefgh", error=True)))
    assert "metrics" not in rollouts[2].extra
    summary = (
        SummaryBuilder(env_id="c", env_version="1", model="m", rollouts_per_task=1).extend(rollouts).build()
    )
    assert summary.metrics == {"chars": pytest.approx(8 / 4), "long_answer": pytest.approx(0.5)}


def test_a_failing_metric_is_recorded_not_fatal() -> None:
    env = _Broken(id="b", tasks=[Task(id="t", prompt="p", answer="a")], grader=ExactGrader())
    r = with_metrics(env, Task(id="t", prompt="p", answer="a"), _graded("x"))
    assert r.reward == 1.0 and "metrics" not in r.extra
    assert r.extra["metrics_error"] == "ZeroDivisionError: bad metric"
