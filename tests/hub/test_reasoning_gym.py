"""reasoning-gym datasets as environments: tasks, splits, difficulty spaces, scorers as graders,
and the curriculum over them (five datasets)."""

from __future__ import annotations

import asyncio
import itertools
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from hub.env.difficulty import POINT_KEY
from hub.env.errors import UsageError
from hub.env.types import Rollout, Task, Timing

pytest.importorskip(
    "reasoning_gym", reason="reasoning-gym is not installed (pip install 'verihub[reasoning-gym]')"
)

from hub.train import Curriculum, CurriculumConfig, CurriculumDataset, reward_function  # noqa: E402
from hub.train.reasoning_gym import extract_answer, load_environment  # noqa: E402

DATASETS = ["leg_counting", "chain_sum", "spell_backward", "word_sorting", "gcd"]


def rollout(task: Task, text: str) -> Rollout:
    return Rollout(
        task_id=task.id,
        rollout_index=0,
        messages=[],
        completion=text,
        timing=Timing(started_at=time.time()),
        turns=1,
    )


@pytest.mark.parametrize("name", DATASETS)
def test_a_dataset_is_an_environment_with_stable_disjoint_splits(name: str) -> None:
    env = load_environment(dataset=name)
    train = list(itertools.islice(env.tasks("train", seed=0), 40))
    again = list(itertools.islice(load_environment(dataset=name).tasks("train", seed=0), 40))
    assert [(t.id, t.prompt, t.answer) for t in train] == [(t.id, t.prompt, t.answer) for t in again]
    assert [t.id for t in train[:2]] == ["train-0-0", "train-0-1"]
    test = list(itertools.islice(env.tasks("test", seed=0), 40))
    assert not {t.prompt for t in train} & {t.prompt for t in test}
    other_seed = list(itertools.islice(env.tasks("train", seed=1), 40))
    assert [t.prompt for t in other_seed] != [t.prompt for t in train]
    assert all(str(t.prompt).endswith("Answer: <answer>") for t in train)


@pytest.mark.parametrize("name", DATASETS)
def test_the_scorer_grades_gold_right_and_wrong_answers_wrong(name: str) -> None:
    env = load_environment(dataset=name)
    ladder = env.difficulty_space().ladder()
    tasks = [*itertools.islice(env.tasks("test"), 5), *itertools.islice(env.tasks_at(ladder[-1], "test"), 5)]

    async def grades(text: str) -> list[float]:
        return [(await env.grade(t, rollout(t, text.format(a=t.answer)))).score for t in tasks]

    assert asyncio.run(grades("Let me think.\nAnswer: {a}")) == [1.0] * 10
    assert asyncio.run(grades("<answer>{a}</answer>")) == [1.0] * 10
    assert max(asyncio.run(grades("Answer: definitely not it"))) < 1.0
    assert asyncio.run(grades("")) == [0.0] * 10


@pytest.mark.parametrize("name", DATASETS)
def test_the_curriculum_attributes_are_the_difficulty_space(name: str) -> None:
    from reasoning_gym import factory

    env = load_environment(dataset=name)
    space = env.difficulty_space()
    attrs = factory.CURRICULA[name]().attributes
    assert space.names == tuple(attrs)
    assert space.start_point() == {k: a.default_level for k, a in attrs.items()}
    top = space.ladder()[-1]
    assert top == {k: len(a.levels) - 1 for k, a in attrs.items()}
    easy = next(iter(env.tasks_at(space.start_point(), "train", seed=0)))
    hard = next(iter(env.tasks_at(top, "train", seed=0)))
    assert easy.id.endswith("@" + space.label(space.start_point())) and hard.metadata[POINT_KEY] == top
    assert easy.prompt != hard.prompt


def test_a_curriculum_learns_from_reasoning_gym_rewards() -> None:
    """TRL's path: rows from the curriculum, graded through the reward (metadata as JSON)."""
    env = load_environment(dataset="chain_sum")
    cur = Curriculum(env.difficulty_space(), CurriculumConfig(min_samples=8), seed=0)
    data = CurriculumDataset(env, cur, size=1000)
    reward = reward_function(env, curriculum=cur)
    try:
        for step in range(4):
            rows = [data[step * 2 + k] for k in range(2)]
            cols = {c: [r[c] for r in rows for _ in range(4)] for c in ("task_id", "answer", "metadata")}
            right = [f"Answer: {json.loads(a)}" for a in cols["answer"]]  # a model that always solves it
            assert (
                reward(prompts=[r["prompt"] for r in rows for _ in range(4)], completions=right, **cols)
                == [1.0] * 8
            )
        assert len(cur.moves) >= 2 and cur.current >= 2  # always right: it climbs
    finally:
        reward.close()


def test_extraction_and_bad_input() -> None:
    assert extract_answer("x\nAnswer: 12\nAnswer: 14 ") == "14"
    assert extract_answer("<answer>a</answer> then <answer> b </answer>") == "b"
    assert extract_answer("  plain ") == "plain"
    with pytest.raises(UsageError, match="no dataset 'no_such_thing'"):
        load_environment(dataset="no_such_thing")
    with pytest.raises(UsageError, match="--env-arg dataset=NAME"):
        load_environment()


@pytest.mark.slow
def test_verihub_eval_runs_a_dataset_by_entry_point(tmp_path: Path) -> None:
    """``verihub eval reasoning-gym --env-arg dataset=NAME``; the entry point is declared in
    pyproject.toml, and given here by a stand-in distribution (this checkout is not installed)."""
    info = tmp_path / "site" / "verihub_rg_probe-0.0.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: verihub-rg-probe\nVersion: 0.0.0\n")
    (info / "entry_points.txt").write_text(
        "[verihub.environments]\nreasoning-gym = hub.train.reasoning_gym:load_environment\n"
    )
    env = {**os.environ, "VERIHUB_CONFIG": "/nonexistent/verihub.toml", "COLUMNS": "200"}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [env.get("PYTHONPATH"), str(tmp_path / "site")]))
    server = subprocess.Popen(
        [sys.executable, "-m", "hub.run.fake_server", "--port", "0"], stdout=subprocess.PIPE, text=True
    )
    try:
        assert server.stdout is not None
        url = server.stdout.readline().split()[-1].rstrip("/")
        url = url if url.endswith("/v1") else url + "/v1"
        out = tmp_path / "run"
        proc = subprocess.run(
            [sys.executable, "-m", "hub", "eval", "reasoning-gym", "--env-arg", "dataset=gcd", "-n", "3",
             "--model", "m", "--base-url", url, "--out", str(out), "--no-progress"],
            capture_output=True, text=True, timeout=180, env=env,
        )  # fmt: skip
    finally:
        server.kill()
        server.wait()
    assert proc.returncode == 0, proc.stderr
    rows = [json.loads(x) for x in (out / "rollouts.jsonl").read_text().splitlines()]
    assert len(rows) == 3 and all(r["grade"]["status"] in ("incorrect", "correct", "partial") for r in rows)
