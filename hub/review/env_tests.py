"""A test kit for dataset-backed math environment packages (requires pytest).

Subclass :class:`MathDatasetEnvContract` as a ``Test*`` class with the class attributes set and
pytest runs the shared checks: the entry point, the local data (stable unique ids, named by the
environment variable), references and solutions passing the environment's own ``grade``, every
reward-hacking probe and copy of a question failing, unevaluated answers failing unless
``strict=False``. Package-specific checks stay plain tests beside it::

    class TestAime(MathDatasetEnvContract):
        env_id = "aime"
        data_folder = "aime24"
        size = 30
        env_var = ENV_VAR
        load = staticmethod(load_environment)
"""

from __future__ import annotations

import json
from collections.abc import Callable
from importlib.metadata import entry_points
from pathlib import Path
from typing import Any, ClassVar

import pytest

from graders.math import default_pool, hacking_probes, reference_response
from graders.pool import WorkerPool
from hub.env import Environment, GradedEnv, Rollout, Task, Timing
from hub.review.testing import shared_data_dir

__all__ = ["MathDatasetEnvContract"]


class MathDatasetEnvContract:
    """Shared tests of a math environment built on a dataset file (see the module docstring)."""

    env_id: ClassVar[str]
    data_folder: ClassVar[str]
    size: ClassVar[int]
    env_var: ClassVar[str]
    load: ClassVar[Callable[..., Environment]]

    def data_dir(self) -> Path:
        return shared_data_dir(Path(__file__).resolve().parent) / self.data_folder

    def env(self, **kwargs: Any) -> GradedEnv:
        env = type(self).load(path=self.data_dir(), **kwargs)
        assert isinstance(env, GradedEnv)
        return env

    @pytest.fixture
    def pool(self) -> WorkerPool:
        """The shared default math pool (a process-wide singleton: started once, closed at exit)."""
        p = default_pool()
        p.wait_ready()
        return p

    @pytest.fixture
    def tasks(self, pool: WorkerPool) -> list[Task]:
        return list(self.env(pool=pool).tasks("test"))

    def test_entry_point_is_registered(self) -> None:
        (ep,) = [e for e in entry_points(group="verihub.environments") if e.name == self.env_id]
        assert ep.value == f"verihub_{self.env_id}:load_environment"

    def test_loads_local_data_with_stable_unique_ids(self, tasks: list[Task]) -> None:
        assert len(tasks) == self.size
        ids = [t.id for t in tasks]
        assert len(set(ids)) == self.size
        again = [t.id for t in type(self).load(path=self.data_dir() / "test.jsonl").tasks("test")]
        assert again == ids
        for task in tasks:
            assert isinstance(task.prompt, str) and "\\boxed{}" in task.prompt
            assert isinstance(task.answer, str) and task.answer.strip()
            assert task.answer not in task.prompt.split("Please reason")[-1]

    def test_environment_variable_names_the_data(self, monkeypatch: pytest.MonkeyPatch) -> None:
        monkeypatch.setenv(self.env_var, str(self.data_dir()))
        env = type(self).load()
        assert env.id == self.env_id and env.num_tasks("test") == self.size
        monkeypatch.setenv(self.env_var, str(self.data_dir() / "missing.jsonl"))
        with pytest.raises(Exception, match="missing"):
            type(self).load()

    def rows(self, tasks: list[Task]) -> list[dict[str, Any]]:
        """The data rows behind ``tasks``, in the same order."""
        lines = (self.data_dir() / "test.jsonl").read_text(encoding="utf-8").splitlines()
        rows = [json.loads(line) for line in lines if line.strip()]
        assert len(rows) == len(tasks)
        return rows

    def gold(self, tasks: list[Task]) -> list[tuple[Task, str]]:
        """Each task with the reference solution text of its data row (or its answer)."""
        rows = self.rows(tasks)
        return [(task, row.get("solution") or row["answer"]) for task, row in zip(tasks, rows, strict=True)]

    def questions(self, tasks: list[Task]) -> list[str]:
        """Each task's raw question text, as in its data row (the prompt adds an instruction)."""
        return [str(row.get("problem") or row.get("question") or "") for row in self.rows(tasks)]

    async def test_reference_solutions_and_answers_pass(self, tasks: list[Task]) -> None:
        env = self.env(strict=True, timeout=10.0)
        # through the environment's own grade(), on a sample spread over the data
        for task, solution in self.gold(tasks)[:: max(1, self.size // 12)]:
            for response in (reference_response(task.answer), str(solution)):
                if "\\boxed" not in response and "####" not in response:
                    continue  # a solution without a box: covered by bench/fidelity_math.py
                rollout = Rollout(
                    task_id=task.id,
                    rollout_index=0,
                    messages=[],
                    completion=response,
                    timing=Timing(started_at=0),
                )
                grade = await env.grade(task, rollout)
                assert grade.passed and grade.status == "correct", (task.id, grade)

    async def test_reward_hacking_probes_fail(self, tasks: list[Task], pool: WorkerPool) -> None:
        env = self.env(pool=pool)
        step = max(1, self.size // 6)
        for task, question in zip(tasks[::step], self.questions(tasks)[::step], strict=True):
            assert (await env.grader(reference_response(task.answer), reference=task.answer)).passed
            for name, response in hacking_probes(task.answer, question).items():
                grade = await env.grader(response, reference=task.answer)
                assert not grade.passed, (task.id, name, grade)
                assert grade.status != "error", (task.id, name, grade)

    async def test_attack_generator(self, tasks: list[Task], pool: WorkerPool) -> None:
        """graders.attacks on a sample of the tasks: every attack refused (timeout bait on one
        task, scored 0 rather than an error), every honest variant accepted."""
        from graders.attacks import math_cases, run_cases

        env = self.env(pool=pool)
        sample = tasks[:: max(1, self.size // 8)]
        batches = [(t.answer, math_cases(t.answer, bait=i == 0)) for i, t in enumerate(sample)]
        report = await run_cases(env.grader, batches)
        wrong = [(c.name, c.response[:60], g.status, g.reason[:80]) for c, g in report.failures]
        assert not wrong, (report.summary(), wrong[:10])

    async def test_a_copy_of_the_question_fails(self, tasks: list[Task], pool: WorkerPool) -> None:
        """Every task's raw question and full prompt, as the whole response, strict or not."""
        graders = [self.env(pool=pool).grader, self.env(pool=pool, strict=False).grader]
        passed: list[str] = []
        for task, question in zip(tasks, self.questions(tasks), strict=True):
            prompt = task.prompt if isinstance(task.prompt, str) else ""
            for grader in graders:
                for copy in (question, prompt):
                    grade = await grader(copy, reference=task.answer)
                    assert grade.status != "error", (task.id, grade)
                    if grade.passed:
                        passed.append(task.id)
        assert passed == []

    async def test_unevaluated_answers_fail_by_default(self, tasks: list[Task], pool: WorkerPool) -> None:
        env = self.env(pool=pool)
        lenient = self.env(pool=pool, strict=False)
        task = next(t for t in tasks if t.answer.isdigit() and int(t.answer) > 1)
        response = f"\\boxed{{{int(task.answer) - 1} + 1}}"
        assert not (await env.grader(response, reference=task.answer)).passed
        assert (await lenient.grader(response, reference=task.answer)).passed
