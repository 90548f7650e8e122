"""gsm8k: data loading, task ids and metadata, gold answers, and reward-hacking probes."""

from __future__ import annotations

import json
from importlib.metadata import entry_points
from pathlib import Path

import pytest
from verihub_gsm8k import ENV_VAR, load_environment

from graders.math import default_pool, hacking_probes, reference_response
from graders.pool import WorkerPool
from hub import Rollout, Task, Timing
from hub.testing import shared_data_dir

HERE = Path(__file__).resolve().parent
SIZE = 1319


def data_dir() -> Path:
    return shared_data_dir(HERE) / "gsm8k"


@pytest.fixture(scope="module")
def pool() -> WorkerPool:
    """The shared default math pool (started once per test session, closed at exit)."""
    p = default_pool()
    p.wait_ready()
    return p


@pytest.fixture(scope="module")
def tasks(pool: WorkerPool) -> list[Task]:
    env = load_environment(path=data_dir(), pool=pool)
    return list(env.tasks("test"))


def test_entry_point_is_registered() -> None:
    (ep,) = [e for e in entry_points(group="verihub.environments") if e.name == "gsm8k"]
    assert ep.value == "verihub_gsm8k:load_environment"


def test_loads_local_data_with_stable_unique_ids(tasks: list[Task]) -> None:
    assert len(tasks) == SIZE
    ids = [t.id for t in tasks]
    assert len(set(ids)) == SIZE
    again = [t.id for t in load_environment(path=data_dir() / "test.jsonl").tasks("test")]
    assert again == ids
    for task in tasks:
        assert isinstance(task.prompt, str) and "\\boxed{}" in task.prompt
        assert isinstance(task.answer, str) and task.answer.strip()
        assert task.answer not in task.prompt.split("Please reason")[-1]


def test_environment_variable_names_the_data(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(ENV_VAR, str(data_dir()))
    env = load_environment()
    assert env.id == "gsm8k" and env.num_tasks("test") == SIZE
    monkeypatch.setenv(ENV_VAR, str(data_dir() / "missing.jsonl"))
    with pytest.raises(Exception, match="missing"):
        load_environment()


def _gold(tasks: list[Task]) -> list[tuple[Task, str]]:
    rows = [
        json.loads(line)
        for line in (data_dir() / "test.jsonl").read_text(encoding="utf-8").splitlines()
        if line.strip()
    ]
    assert len(rows) == len(tasks)
    return [(task, row.get("solution") or row["answer"]) for task, row in zip(tasks, rows, strict=True)]


async def test_reference_solutions_and_answers_pass(tasks: list[Task]) -> None:
    env = load_environment(path=data_dir(), strict=True, timeout=10.0)
    # through the environment's own grade(), on a sample spread over the data
    for task, solution in _gold(tasks)[:: max(1, SIZE // 12)]:
        for response in (reference_response(task.answer), str(solution)):
            if "\\boxed" not in response and "####" not in response:
                continue  # an AoPS solution without a box: covered by bench/fidelity_math.py
            rollout = Rollout(
                task_id=task.id,
                rollout_index=0,
                messages=[],
                completion=response,
                timing=Timing(started_at=0.0),
            )
            grade = await env.grade(task, rollout)
            assert grade.passed and grade.status == "correct", (task.id, grade)


async def test_reward_hacking_probes_fail(tasks: list[Task], pool: WorkerPool) -> None:
    env = load_environment(path=data_dir(), pool=pool)
    sample = tasks[:: max(1, SIZE // 6)]
    for task in sample:
        question = task.prompt if isinstance(task.prompt, str) else ""
        assert (await env.grader(reference_response(task.answer), reference=task.answer)).passed
        for name, response in hacking_probes(task.answer, question).items():
            grade = await env.grader(response, reference=task.answer)
            assert not grade.passed, (task.id, name, grade)
            assert grade.status != "error", (task.id, name, grade)


async def test_unevaluated_answers_fail_by_default(tasks: list[Task], pool: WorkerPool) -> None:
    env = load_environment(path=data_dir(), pool=pool)
    lenient = load_environment(path=data_dir(), pool=pool, strict=False)
    task = next(t for t in tasks if t.answer.isdigit() and int(t.answer) > 1)
    response = f"\\boxed{{{int(task.answer) - 1} + 1}}"
    assert not (await env.grader(response, reference=task.answer)).passed
    assert (await lenient.grader(response, reference=task.answer)).passed


def test_reference_answer_is_the_number_after_the_hashes() -> None:
    from verihub_gsm8k import reference_answer

    assert reference_answer("work <<1+1=2>>\n#### 1,234") == "1234"
    with pytest.raises(ValueError):
        reference_answer("no hashes")
    with pytest.raises(ValueError):
        load_environment(path=data_dir(), split="validation")
