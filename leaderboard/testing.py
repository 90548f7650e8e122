"""Synthetic run directories for tests and examples: real files, no model.

:func:`write_run` writes ``config.json``, ``rollouts.jsonl`` and ``summary.json`` exactly as the
runner does (through :class:`hub.run.rundir.RunDir` and :class:`hub.run.metrics.SummaryBuilder`), with
rewards chosen by the caller.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Sequence
from pathlib import Path

from graders.grade import Grade
from hub.env import Message, Rollout, RolloutError, Sampling, Timing, Usage
from hub.run import RunConfig, RunDir, SummaryBuilder

__all__ = ["fake_env_hash", "write_run"]


def fake_env_hash(env_id: str, env_version: str) -> str:
    """A well-formed, deterministic ``sha256:`` environment hash."""
    return "sha256:" + hashlib.sha256(f"{env_id}=={env_version}".encode()).hexdigest()


def write_run(
    path: str | os.PathLike[str],
    *,
    env_id: str = "toy",
    env_version: str = "1.0.0",
    model: str = "model-a",
    rewards: Sequence[Sequence[float | None]] = ((1.0, 0.0), (1.0, 1.0), (0.0, 0.0), (0.5, 1.0)),
    completion: str = "Answer: 42",
    seed: int = 0,
    task_ids: Sequence[str] | None = None,
    env_hash: str | None = None,
) -> Path:
    """Write a finished run: ``rewards[t][i]`` is task ``t``'s rollout ``i`` (None = model error,
    1.0 = passed). Task ids default to ``t0, t1, ...``; ``env_hash`` to :func:`fake_env_hash`.
    Rollouts are written in a shuffled but deterministic order, as a concurrent
    runner would. Returns the run directory."""
    if not rewards or len({len(r) for r in rewards}) != 1:
        raise ValueError("rewards must be a non-empty rectangle (tasks x rollouts)")
    n_rollouts = len(rewards[0])
    config = RunConfig(
        env_id=env_id,
        env_version=env_version,
        env_hash=env_hash or fake_env_hash(env_id, env_version),
        model=model,
        base_url="http://127.0.0.1:8000/v1",
        sampling=Sampling(temperature=0.7, max_tokens=64),
        seed=seed,
        split="test",
        num_tasks=len(rewards),
        rollouts_per_task=n_rollouts,
        max_turns=1,
        verihub_version="0.1.0",
        created_at=1_790_000_000.0 + seed,
    )
    rundir = RunDir(path)
    rundir.create(config)
    builder = SummaryBuilder(
        env_id=env_id, env_version=env_version, model=model, rollouts_per_task=n_rollouts
    )
    task_ids = list(task_ids) if task_ids is not None else [f"t{t}" for t in range(len(rewards))]
    if len(task_ids) != len(rewards):
        raise ValueError("task_ids must have one id per row of rewards")
    for tid in task_ids:
        builder.add_task(tid)
    keys = [(t, i) for t in range(len(rewards)) for i in range(n_rollouts)]
    keys = keys[1::2] + keys[0::2]
    with rundir.open_writer() as writer:
        for t, i in keys:
            rollout = _rollout(task_ids[t], i, rewards[t][i], completion)
            writer.write(rollout)
            builder.add(rollout)
    rundir.write_summary(builder.build())
    return rundir.path


def _rollout(task_id: str, index: int, reward: float | None, completion: str) -> Rollout:
    messages = [
        Message(role="user", content=f"Solve task {task_id}."),
        Message(role="assistant", content=completion),
    ]
    if reward is None:
        return Rollout(
            task_id=task_id,
            rollout_index=index,
            messages=messages[:1],
            timing=Timing(started_at=1_790_000_000.0),
            error=RolloutError(kind="model", message="HTTP 503 after 5 retries"),
        )
    grade = Grade.from_score(reward, extracted="42", reason="compared with the reference")
    return Rollout(
        task_id=task_id,
        rollout_index=index,
        messages=messages,
        completion=completion,
        reward=grade.score,
        passed=grade.passed,
        grade=grade,
        usage=Usage(prompt_tokens=10, completion_tokens=5),
        timing=Timing(started_at=1_790_000_000.0, total_s=0.1),
        turns=1,
    )
