"""hub.train.rewards: the environment as a TRL GRPOTrainer reward function, and the training dataset."""

from __future__ import annotations

import asyncio
import json
import logging
from typing import Any

import pytest

from graders.exact import ExactGrader
from hub import SingleTurnEnv, Task
from hub.env.errors import UsageError
from hub.train.rewards import completion_text, reward_function, to_dataset


def _tasks(n: int) -> list[Task]:
    return [Task(id=f"t{i}", prompt=f"What is {i} + 1?", answer=str(i + 1)) for i in range(n)]


class RaisingGrader:
    async def __call__(self, response: str, *, reference: Any) -> Any:
        raise RuntimeError("grader bug")


class HangingGrader:
    async def __call__(self, response: str, *, reference: Any) -> Any:
        await asyncio.sleep(3600)


def trainer_call(reward: Any, dataset: Any, completions: list[Any], *, generations: int) -> list[Any]:
    """Call ``reward`` the way GRPOTrainer._calculate_rewards does: every dataset column except
    prompt/completion, repeated per generation, as keyword lists; plus completion_ids,
    trainer_state and (TRL 1.x) the logging hooks log_extra and log_metric."""
    inputs = [row for row in dataset for _ in range(generations)]
    prompts = [x["prompt"] for x in inputs]
    keys = [k for k in inputs[0] if k not in ("prompt", "completion")]
    reward_kwargs = {k: [x[k] for x in inputs] for k in keys}
    return list(
        reward(
            prompts=prompts,
            completions=completions,
            completion_ids=[[1, 2, 3] for _ in completions],
            trainer_state=None,
            log_extra=lambda column, values: None,
            log_metric=lambda name, value: None,
            **reward_kwargs,
        )
    )


def test_to_dataset_has_chat_prompt_and_reward_columns() -> None:
    env = SingleTurnEnv(id="toy", tasks=_tasks(5), grader=ExactGrader(), system_prompt="Be brief.")
    ds = to_dataset(env, "test", 3, seed=0)
    assert len(ds) == 3
    assert set(ds.column_names) == {"prompt", "task_id", "answer", "metadata"}
    row = ds[1]
    assert row["prompt"] == [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "What is 1 + 1?"},
    ]
    assert row["task_id"] == "t1" and json.loads(row["answer"]) == "2"
    assert "2" not in json.dumps(row["prompt"])  # the reference is never in the prompt


def test_to_dataset_takes_the_first_tasks_of_a_split() -> None:
    env = SingleTurnEnv(id="toy", tasks=_tasks(5), grader=ExactGrader(), system_prompt="Be brief.")
    ds = to_dataset(env, "test", 3, seed=0)
    assert [row["task_id"] for row in ds] == ["t0", "t1", "t2"]
    with pytest.raises(UsageError, match="no split 'train'"):
        to_dataset(env)  # the default split is train


def test_reward_function_options_and_grades(toy_env: SingleTurnEnv) -> None:
    from hub.train.rewards import EnvReward

    reward = reward_function(toy_env, error_value=None, timeout_s=5.0, concurrency=2, name="mine")
    assert isinstance(reward, EnvReward) and reward.env is toy_env
    assert (reward.__name__, reward.error_value, reward.timeout_s, reward.concurrency) == (
        "mine",
        None,
        5.0,
        2,
    )
    ds = to_dataset(toy_env, "test", 2)
    assert trainer_call(reward, ds, ["Answer: 1", "no", "Answer: 2", "Answer: 2"], generations=2) == [
        1.0,
        0.0,
        1.0,
        1.0,
    ]
    assert reward_function(toy_env).__name__ == "verihub_toy"
    reward.close()


def test_to_dataset_rejects_unknown_split(toy_env: SingleTurnEnv) -> None:
    with pytest.raises(UsageError, match="no split 'train'"):
        to_dataset(toy_env, "train", 2)


def test_reward_called_as_grpo_trainer_calls_it(toy_env: SingleTurnEnv) -> None:
    ds = to_dataset(toy_env, "test", 2)
    reward = reward_function(toy_env)
    assert reward.__name__ == "verihub_toy"
    # task t0 (answer 1) and t1 (answer 2), two generations each, standard (string) format
    completions = ["Answer: 1", "Answer: 7", "Answer: 2", "no idea"]
    assert trainer_call(reward, ds, completions, generations=2) == [1.0, 0.0, 1.0, 0.0]
    assert reward.stats.graded == 4 and reward.stats.failed == 0
    reward.close()


def test_conversational_completions(toy_env: SingleTurnEnv) -> None:
    ds = to_dataset(toy_env, "test", 1)
    reward = reward_function(toy_env)
    completions = [
        [{"role": "assistant", "content": "Answer: 1"}],
        [{"role": "assistant", "content": [{"type": "text", "text": "Answer: 3"}]}],
    ]
    assert trainer_call(reward, ds, completions, generations=2) == [1.0, 0.0]
    assert completion_text([{"role": "user", "content": "x"}, {"role": "assistant", "content": "y"}]) == "y"


def test_a_grader_that_raises_rewards_zero_and_is_counted(caplog: pytest.LogCaptureFixture) -> None:
    """A grader bug met on a response is a counted 0 (grader_failed), never error_value: a
    response that crashes the grader must not score better than a wrong one."""
    env = SingleTurnEnv(id="bad", tasks=_tasks(2), grader=RaisingGrader())
    ds = to_dataset(env, "test", 2)
    reward = reward_function(env, error_value=-1.0)
    with caplog.at_level(logging.WARNING, logger="verihub.rl"):
        assert trainer_call(reward, ds, ["a", "b"], generations=1) == [0.0, 0.0]
    assert reward.stats.errors == 0 and reward.stats.graded == 2 and reward.stats.grader_failures == 2
    assert "the grader raised on 2 of 2 completions" in caplog.text
    assert "grader bug" in caplog.text
    none_reward = reward_function(env, error_value=None)
    assert trainer_call(none_reward, ds, ["a", "b"], generations=1) == [0.0, 0.0]


class UnavailableGrader:
    async def __call__(self, response: str, *, reference: Any) -> Any:
        raise ConnectionError("judge endpoint down")


def test_an_infrastructure_failure_maps_to_error_value(caplog: pytest.LogCaptureFixture) -> None:
    env = SingleTurnEnv(id="down", tasks=_tasks(2), grader=UnavailableGrader())
    ds = to_dataset(env, "test", 2)
    reward = reward_function(env, error_value=-1.0)
    with caplog.at_level(logging.WARNING, logger="verihub.rl"):
        assert trainer_call(reward, ds, ["a", "b"], generations=1) == [-1.0, -1.0]
    assert reward.stats.errors == 2 and reward.stats.graded == 0
    assert "2 of 2 completions could not be graded" in caplog.text


def test_grader_timeout_is_counted() -> None:
    env = SingleTurnEnv(id="slow", tasks=_tasks(1), grader=HangingGrader())
    reward = reward_function(env, timeout_s=0.2)
    ds = to_dataset(env, "test", 1)
    assert trainer_call(reward, ds, ["Answer: 1"], generations=1) == [0.0]
    # the response's failure: rewarded 0 like a wrong answer, never error_value
    assert reward.stats.timed_out_responses == 1 and reward.stats.failed == 0
    none_on_error = reward_function(env, timeout_s=0.2, error_value=None)
    assert trainer_call(none_on_error, ds, ["Answer: 1"], generations=1) == [0.0]


async def test_sync_reward_works_inside_a_running_event_loop(toy_env: SingleTurnEnv) -> None:
    # e.g. a trainer driven from a notebook or an async orchestrator: no asyncio.run() clash
    ds = to_dataset(toy_env, "test", 2)
    reward = reward_function(toy_env)
    assert trainer_call(reward, ds, ["Answer: 1", "Answer: 2"], generations=1) == [1.0, 1.0]
    # and from a worker thread while this loop runs
    out = await asyncio.to_thread(trainer_call, reward, ds, ["Answer: 0", "Answer: 2"], generations=1)
    assert out == [0.0, 1.0]


def test_reward_survives_pickling(toy_env: SingleTurnEnv) -> None:
    import pickle

    reward = reward_function(toy_env)
    ds = to_dataset(toy_env, "test", 1)
    assert trainer_call(reward, ds, ["Answer: 1"], generations=1) == [1.0]
    copy = pickle.loads(pickle.dumps(reward))
    assert trainer_call(copy, ds, ["Answer: 1"], generations=1) == [1.0]
    assert copy.stats.calls == 2 and copy.__name__ == reward.__name__


def test_missing_columns_say_what_to_do(toy_env: SingleTurnEnv) -> None:
    reward = reward_function(toy_env)
    with pytest.raises(UsageError, match="to_dataset"):
        reward(prompts=["x"], completions=["y"])


def test_with_trl_reward_convention(toy_env: SingleTurnEnv) -> None:
    trl_rewards = pytest.importorskip("trl.rewards", reason="trl is not installed (it pulls torch)")
    ds = to_dataset(toy_env, "test", 1)
    completions = [[{"role": "assistant", "content": "<think>\nok\n</think>\nAnswer: 1"}]]
    # TRL's own reward function and ours take the very same keyword call
    theirs = trainer_call(trl_rewards.think_format_reward, ds, completions, generations=1)
    ours = trainer_call(reward_function(toy_env), ds, completions, generations=1)
    assert len(theirs) == len(ours) == 1 and ours == [1.0]
