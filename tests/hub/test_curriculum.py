"""Difficulty spaces and the online curriculum: points, ids, moves, mixing, the gate, saving."""

from __future__ import annotations

import itertools
import json
import pickle
import zlib
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from graders.exact import ExactGrader
from hub import Axis, DifficultySpace, SingleTurnEnv, Task
from hub.env.difficulty import POINT_KEY, wilson_interval
from hub.env.errors import EnvironmentDefinitionError, UsageError
from hub.registry.entrypoints import load_environment
from hub.train import Curriculum, CurriculumConfig, CurriculumDataset, has_signal, reward_function


def two_axis_space() -> DifficultySpace:
    return DifficultySpace.of([Axis("digits", (1, 2, 3)), Axis("ops", ("add", "mul", "mix"))])


def toy_tasks(point: Mapping[str, Any], split: str, seed: int) -> Iterator[Task]:
    """Tasks whose answer is their level: a scripted model can be right per point."""
    level = point["level"]
    return (
        Task(id=f"{split}-{seed}-{i}", prompt=f"L{level} #{i}", answer=str(level)) for i in itertools.count()
    )


def toy_env() -> SingleTurnEnv:
    space = DifficultySpace.of([Axis("level", (1, 2, 3, 4))])
    plain = {split: [Task(id="t0", prompt="p", answer="1")] for split in ("train", "test")}
    return SingleTurnEnv(
        id="toy", tasks=plain, grader=ExactGrader(), difficulty=space, point_source=toy_tasks
    )


# -- the difficulty space ------------------------------------------------------------------------


def test_points_are_completed_checked_and_labelled() -> None:
    space = two_axis_space()
    assert space.point({}) == {"digits": 1, "ops": "add"}
    assert space.point({"digits": "2"}) == {"digits": 2, "ops": "add"}  # CLI text maps to the level
    assert space.label({"ops": "mul"}) == "digits=1,ops=mul"
    assert space.parse("digits=3,ops=mix") == {"digits": 3, "ops": "mix"}
    with pytest.raises(UsageError, match="not a level"):
        space.point({"digits": 4})
    with pytest.raises(UsageError, match="no difficulty axis 'colour'"):
        space.point({"colour": 1})


def test_default_ladder_raises_the_least_advanced_axis_one_rung_at_a_time() -> None:
    ladder = [two_axis_space().label(p) for p in two_axis_space().ladder()]
    assert ladder == [
        "digits=1,ops=add",
        "digits=2,ops=add",
        "digits=2,ops=mul",
        "digits=3,ops=mul",
        "digits=3,ops=mix",
    ]


def test_bad_spaces_are_refused_at_definition() -> None:
    with pytest.raises(EnvironmentDefinitionError):
        Axis("level", ())
    with pytest.raises(EnvironmentDefinitionError):
        Axis("level", (1, 1))
    with pytest.raises(EnvironmentDefinitionError):
        DifficultySpace.of([Axis("level", (1, 2))], start={"level": 3})
    with pytest.raises(EnvironmentDefinitionError, match="together"):
        SingleTurnEnv(tasks=[Task(id="a", prompt="p")], grader=ExactGrader(), difficulty=two_axis_space())


@pytest.mark.parametrize(("env_id", "levels"), [("arith", 5), ("textops", 3)])
def test_procedural_environments_declare_a_level_axis(env_id: str, levels: int) -> None:
    env = load_environment(env_id)
    space = env.difficulty_space()
    assert space.names == ("level",)
    assert [space.label(p) for p in space.ladder()] == [f"level={i}" for i in range(1, levels + 1)]
    assert space.start_point() == {"level": 1}
    assert load_environment(env_id, difficulty=2).difficulty_space().start_point() == {"level": 2}


@pytest.mark.parametrize("env_id", ["arith", "textops"])
def test_tasks_at_a_point_keep_ids_stable_unique_and_splits_disjoint(env_id: str) -> None:
    env = load_environment(env_id)
    at2 = list(itertools.islice(env.tasks_at({"level": 2}, "train", seed=3), 50))
    again = list(itertools.islice(load_environment(env_id).tasks_at({"level": 2}, "train", seed=3), 50))
    assert [t.id for t in at2] == [t.id for t in again] and [t.prompt for t in at2] == [
        t.prompt for t in again
    ]
    assert all(t.id.endswith("@level=2") and t.metadata[POINT_KEY] == {"level": 2} for t in at2)
    assert all(t.metadata["difficulty"] == 2 and t.metadata["split"] == "train" for t in at2)
    at3 = list(itertools.islice(env.tasks_at({"level": 3}, "train", seed=3), 50))
    assert not {t.id for t in at2} & {t.id for t in at3}  # points mixed in one batch never collide
    test2 = list(itertools.islice(env.tasks_at({"level": 2}, "test", seed=3), 200))
    assert not {t.prompt for t in test2} & {t.prompt for t in at2}  # content-hash split kept
    # the environment's own tasks (no point) are unchanged
    plain = next(iter(load_environment(env_id, difficulty=2).tasks("train", seed=3)))
    assert plain.id == "train-3-0" and plain.prompt == at2[0].prompt and POINT_KEY not in plain.metadata


def test_an_environment_without_a_space_has_one_point() -> None:
    env = SingleTurnEnv(id="plain", tasks=[Task(id="a", prompt="p", answer="1")], grader=ExactGrader())
    assert env.difficulty_space().ladder() == [{}]
    (task,) = env.tasks_at(None, "test")
    assert task.id == "a" and task.metadata[POINT_KEY] == {}
    with pytest.raises(UsageError, match="no difficulty axis"):
        env.tasks_at({"level": 1}, "test")


def test_wilson_interval_matches_the_calibration_one() -> None:
    from hub.review.calibrate import LEARNABLE_BAND
    from hub.review.calibrate import wilson_interval as calibrate_wilson
    from hub.train.curriculum import DEFAULT_BAND

    assert DEFAULT_BAND == LEARNABLE_BAND  # the curriculum's default band is calibrate's
    for passed, n in [(0, 0), (0, 16), (5, 16), (16, 16), (40, 64)]:
        assert wilson_interval(passed, n) == calibrate_wilson(passed, n)


# -- the curriculum ------------------------------------------------------------------------------


def test_no_outcomes_yet_means_the_declared_start() -> None:
    space = DifficultySpace.of([Axis("level", (1, 2, 3))], start={"level": 2})
    cur = Curriculum(space)
    assert cur.level == "level=2" and cur.pass_rates() == {"level=1": None, "level=2": None, "level=3": None}
    assert cur.flat_share() is None
    assert set(cur.weights()) == {"level=1", "level=2", "level=3"}


def test_moves_up_above_the_band_and_down_below_it_only_when_the_interval_is_clear() -> None:
    space = DifficultySpace.of([Axis("level", (1, 2, 3))])
    cur = Curriculum(space, CurriculumConfig(band=(0.2, 0.7), min_samples=16))
    for _ in range(3):
        cur.observe({"level": 1}, [1.0] * 4)
    assert cur.level == "level=1"  # 12 outcomes: not yet min_samples
    cur.observe({"level": 1}, [1.0] * 4)
    assert cur.level == "level=2"  # 16/16: Wilson lower bound 0.81 > 0.7
    cur.observe({"level": 1}, [0.0] * 4)  # outcomes at another rung do not move it
    for _ in range(4):
        cur.observe({"level": 2}, [1.0, 0.0, 1.0, 0.0])
    assert cur.level == "level=2"  # 50% sits inside the band
    for _ in range(8):
        cur.observe({"level": 2}, [0.0] * 4)
    assert cur.level == "level=2"  # 8 passes in 48: Wilson upper bound 0.30 still reaches the band
    groups = 0
    while cur.level == "level=2" and groups < 40:
        cur.observe({"level": 2}, [0.0] * 4)
        groups += 1
    assert cur.level == "level=1" and 0 < groups < 40  # the old passes leave the 64-outcome window
    (up, down) = cur.moves
    assert (up.src, up.dst, down.src, down.dst) == ("level=1", "level=2", "level=2", "level=1")
    assert down.interval[1] < 0.2 < up.interval[0]


def test_moves_stop_at_the_ends_of_the_ladder() -> None:
    cur = Curriculum(DifficultySpace.of([Axis("level", (1, 2))]), CurriculumConfig(min_samples=4, window=16))
    for _ in range(10):
        cur.observe(cur.point(), [1.0, 1.0])
    assert cur.level == "level=2" and len(cur.moves) == 1


def test_the_advantage_gate_and_flat_neighbours_are_down_weighted() -> None:
    assert not has_signal([1.0, 1.0, 1.0]) and not has_signal([0.0, 0.0]) and not has_signal([1.0])
    assert not has_signal([0.5, 0.52, 0.48]) and has_signal([0.0, 1.0]) and has_signal([1.0, None, 0.0])
    space = DifficultySpace.of([Axis("level", (1, 2, 3))], start={"level": 2})
    cfg = CurriculumConfig(mix=(0.2, 0.6, 0.2), flat_weight=0.25, flat_groups=2)
    cur = Curriculum(space, cfg)
    assert cur.weights() == pytest.approx({"level=1": 0.2, "level=2": 0.6, "level=3": 0.2})
    assert cur.observe({"level": 3}, [0.0, 0.0]) is False
    cur.observe({"level": 3}, [0.0, 0.0])
    assert cur.weights()["level=3"] == pytest.approx(0.05 / 0.85)  # two flat groups: a quarter weight
    assert cur.observe({"level": 3}, [0.0, 1.0]) is True
    assert cur.weights()["level=3"] == pytest.approx(0.2)  # a group with signal restores it
    assert cur.flat_share() == pytest.approx(2 / 3)


def test_points_are_mixed_by_the_weights() -> None:
    space = DifficultySpace.of([Axis("level", (1, 2, 3))], start={"level": 2})
    cur = Curriculum(space, CurriculumConfig(mix=(0.1, 0.8, 0.1)), seed=1)
    drawn = [space.label(p) for p in cur.next_points(2000)]
    assert 0.75 < drawn.count("level=2") / 2000 < 0.85
    assert drawn.count("level=1") > 100 and drawn.count("level=3") > 100


def test_bad_rules_are_refused() -> None:
    for bad in [dict(band=(0.7, 0.2)), dict(min_samples=0), dict(mix=(0.1, 0.0, 0.1)), dict(flat_weight=2.0)]:
        with pytest.raises(UsageError):
            CurriculumConfig(**bad)  # type: ignore[arg-type]


def scripted(level_pass: dict[int, float]) -> Callable[[Task, int], float]:
    """A deterministic model: rollout ``i`` of a task passes with its level's rate (by a hash)."""

    def outcome(task: Task, i: int) -> float:
        level = int(task.metadata[POINT_KEY]["level"])
        return 1.0 if zlib.crc32(f"{task.id}:{i}".encode()) % 100 < 100 * level_pass[level] else 0.0

    return outcome


def drive(
    cur: Curriculum, env: SingleTurnEnv, steps: int, outcome: Callable[[Task, int], float]
) -> list[str]:
    trace = []
    for _ in range(steps):
        for task in cur.next_tasks(env, 4, split="train"):
            cur.observe(task.metadata[POINT_KEY], [outcome(task, i) for i in range(4)])
            trace.append(f"{task.id} {cur.level}")
    return trace


def test_a_scripted_model_climbs_to_the_edge_of_what_it_can_do() -> None:
    env = toy_env()
    cur = Curriculum(env.difficulty_space(), CurriculumConfig(band=(0.1, 0.7)), seed=0)
    drive(cur, env, 30, scripted({1: 1.0, 2: 0.95, 3: 0.4, 4: 0.0}))
    assert cur.level == "level=3"
    assert [m.dst for m in cur.moves][:2] == ["level=2", "level=3"]
    rates = cur.pass_rates()
    assert rates["level=3"] is not None and 0.2 < rates["level=3"] < 0.6


def test_pickled_and_json_restored_curricula_continue_identically() -> None:
    env = toy_env()
    outcome = scripted({1: 0.9, 2: 0.6, 3: 0.3, 4: 0.0})
    cfg = CurriculumConfig(band=(0.1, 0.5), min_samples=8)
    whole = Curriculum(env.difficulty_space(), cfg, seed=7)
    full = drive(whole, env, 20, outcome)

    half = Curriculum(env.difficulty_space(), cfg, seed=7)
    first = drive(half, env, 10, outcome)
    restored = pickle.loads(pickle.dumps(half))
    from_json = Curriculum(env.difficulty_space(), cfg, seed=999)
    from_json.load_state_dict(json.loads(json.dumps(half.state_dict())))
    assert first + drive(restored, env, 10, outcome) == full
    assert first + drive(from_json, env, 10, outcome) == full
    assert len(set(full)) == len(full)  # no task repeats across the restore
    assert whole.moves == restored.moves == from_json.moves and whole.moves

    other_rules = Curriculum(env.difficulty_space(), CurriculumConfig(min_samples=9), seed=7)
    with pytest.raises(UsageError, match="other rules"):
        other_rules.load_state_dict(half.state_dict())


# -- the TRL path ------------------------------------------------------------------------------


def test_the_reward_function_teaches_the_curriculum_and_the_dataset_follows_it() -> None:
    env = toy_env()
    cur = Curriculum(env.difficulty_space(), CurriculumConfig(band=(0.1, 0.7), min_samples=8), seed=0)
    data = CurriculumDataset(env, cur, size=10_000)
    reward = reward_function(env, curriculum=cur)
    try:
        levels = []
        for step in range(6):
            rows = [data[step * 4 + k] for k in range(4)]
            assert [data[step * 4 + k]["task_id"] for k in range(4)] == [
                r["task_id"] for r in rows
            ]  # repeats
            # GRPO: 4 generations per prompt; this scripted model solves levels 1 and 2 only
            prompts = [r["prompt"] for r in rows for _ in range(4)]
            cols = {c: [r[c] for r in rows for _ in range(4)] for c in ("task_id", "answer", "metadata")}
            solved = [json.loads(a) if json.loads(m)[POINT_KEY]["level"] <= 2 else "no" for a, m in
                      zip(cols["answer"], cols["metadata"], strict=True)]  # fmt: skip
            values = reward(prompts=prompts, completions=[f"Answer: {s}" for s in solved], **cols)
            assert all(v in (0.0, 1.0) for v in values)
            levels.append(cur.level)
        assert [m.dst for m in cur.moves][:2] == ["level=2", "level=3"]
        assert "level=4" not in [m.dst for m in cur.moves] and set(levels[2:]) <= {"level=2", "level=3"}
        assert json.loads(data[0]["metadata"])[POINT_KEY] in ({"level": 1}, {"level": 2})  # the start
        assert cur.observed == 6 * 16
        pickle.loads(pickle.dumps(reward))  # the reward (and its curriculum) still pickles
    finally:
        reward.close()


def test_the_reward_logs_the_curriculum_rung_through_the_trainer_hook() -> None:
    env = toy_env()
    cur = Curriculum(env.difficulty_space(), CurriculumConfig(band=(0.1, 0.7), min_samples=8), seed=0)
    data = CurriculumDataset(env, cur, size=100)
    reward = reward_function(env, curriculum=cur)
    logged: list[tuple[str, float]] = []
    try:
        for step in range(4):
            rows = [data[step * 2 + k] for k in range(2)]
            cols = {c: [r[c] for r in rows for _ in range(4)] for c in ("task_id", "answer", "metadata")}
            completions = [f"Answer: {json.loads(a)}" for a in cols["answer"]]  # all solved: it climbs
            reward(completions=completions, log_metric=lambda n, v: logged.append((n, v)), **cols)
            assert logged[-1] == ("curriculum/rung", float(cur.current))
        assert len(logged) == 4 and logged[0][1] == 0.0 and logged[-1][1] >= 1.0  # it moved up
        reward(completions=completions, **cols)  # no hook (a loop of one's own): nothing logged
        assert len(logged) == 4
    finally:
        reward.close()


def teach_from_stream(rows: Iterator[dict[str, Any]], reward: Any, batches: int, prompts: int) -> list[str]:
    """Read a stream as GRPO does (``prompts`` rows a batch, 4 generations each) and reward a
    scripted model that solves levels 1 and 2; returns the tasks' levels in reading order."""
    seen = []
    for _ in range(batches):
        batch = [next(rows) for _ in range(prompts)]
        cols = {c: [r[c] for r in batch for _ in range(4)] for c in ("task_id", "answer", "metadata")}
        levels = [json.loads(m)[POINT_KEY]["level"] for m in cols["metadata"]]
        answers = [json.loads(a) if lv <= 2 else "no" for a, lv in zip(cols["answer"], levels, strict=True)]
        reward(prompts=[r["prompt"] for r in batch for _ in range(4)],
               completions=[f"Answer: {a}" for a in answers], **cols)  # fmt: skip
        seen += [f"level={lv}" for lv in levels[::4]]
    return seen


def test_the_iterable_dataset_draws_each_row_when_read_so_rows_follow_the_rewards() -> None:
    import datasets

    env = toy_env()
    cur = Curriculum(env.difficulty_space(), CurriculumConfig(band=(0.1, 0.7), min_samples=8), seed=0)
    stream = CurriculumDataset(env, cur, size=40).to_iterable_dataset()
    assert isinstance(stream, datasets.IterableDataset)  # what GRPOTrainer accepts
    assert cur.state_dict()["drawn"] == {}  # nothing drawn before the trainer reads
    reward = reward_function(env, curriculum=cur)
    try:
        rows = iter(stream)
        first = next(rows)
        assert set(first) == {"prompt", "task_id", "answer", "metadata"}
        assert sum(cur.state_dict()["drawn"].values()) == 1  # one row read, one task drawn
        seen = teach_from_stream(itertools.chain([first], rows), reward, 8, 2)
        assert [m.dst for m in cur.moves][:2] == ["level=2", "level=3"]
        assert seen[0] in ("level=1", "level=2") and "level=3" in seen[4:]  # later rows follow
        assert len(set(seen)) > 1 and sum(1 for _ in rows) == 40 - 16  # size rows in all
    finally:
        reward.close()


@pytest.mark.slow
def test_trl_streams_the_curriculum_dataset_in_groups() -> None:
    """TRL's own stream transform (what GRPOTrainer does to an IterableDataset) over the curriculum."""
    trl_utils = pytest.importorskip("trl.trainer.utils", reason="trl is not installed (it pulls torch)")
    env = toy_env()
    cur = Curriculum(env.difficulty_space(), CurriculumConfig(band=(0.1, 0.7), min_samples=8), seed=0)
    stream = trl_utils.repeat_iterable_dataset(
        CurriculumDataset(env, cur, size=40).to_iterable_dataset(), mini_repeat_count=4, batch_size=2
    )
    reward = reward_function(env, curriculum=cur)
    try:
        records = iter(stream)
        levels = []
        for _ in range(8):
            batch = [next(records) for _ in range(8)]
            assert [r["task_id"] for r in batch[:4]] == [batch[0]["task_id"]] * 4  # a group: one task
            levels.append(cur.level)
            cols = {c: [r[c] for r in batch] for c in ("task_id", "answer", "metadata")}
            answers = [json.loads(a) if json.loads(m)[POINT_KEY]["level"] <= 2 else "no"
                       for a, m in zip(cols["answer"], cols["metadata"], strict=True)]  # fmt: skip
            completions = [f"Answer: {a}" for a in answers]
            reward(prompts=[r["prompt"] for r in batch], completions=completions, **cols)
        assert "level=3" in levels and cur.observed == 8 * 8
    finally:
        reward.close()


def test_the_checkpoint_callback_saves_with_the_trainer_and_restores(tmp_path: Path) -> None:
    from hub.train.curriculum_checkpoint import CurriculumCheckpoint, restore_curriculum

    env = toy_env()
    outcome = scripted({1: 0.9, 2: 0.6, 3: 0.3, 4: 0.0})
    cfg = CurriculumConfig(band=(0.1, 0.5), min_samples=8)
    cur = Curriculum(env.difficulty_space(), cfg, seed=3)
    callback = CurriculumCheckpoint(cur)
    args, control = SimpleNamespace(output_dir=str(tmp_path)), object()
    first = drive(cur, env, 8, outcome)
    # the trainer's events, as transformers calls them: every on_* event, on_save after a checkpoint
    assert callback.on_step_end(args, SimpleNamespace(global_step=8), control) is control
    assert callback.on_save(args, SimpleNamespace(global_step=8), control) is control
    assert (tmp_path / "checkpoint-8" / "curriculum.json").is_file()
    rest = drive(cur, env, 6, outcome)

    resumed = Curriculum(env.difficulty_space(), cfg, seed=3)
    restore_curriculum(resumed, tmp_path / "checkpoint-8")
    assert first and drive(resumed, env, 6, outcome) == rest
    with pytest.raises(UsageError, match="does not exist"):
        restore_curriculum(resumed, tmp_path / "checkpoint-9")
    with pytest.raises(AttributeError):
        callback.not_an_event  # noqa: B018
