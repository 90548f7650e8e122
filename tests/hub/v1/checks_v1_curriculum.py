"""hub.train.v1_curriculum, run INSIDE the verifiers 0.4.x venv (tests/hub/test_curriculum_v1.py
starts pytest on this file there): an infinite v1 taskset whose tasks a curriculum chooses."""

from __future__ import annotations

import json

import pytest

vf = pytest.importorskip("verifiers.v1")
if not hasattr(vf, "Taskset"):
    pytest.skip("needs verifiers 0.4.x", allow_module_level=True)

from hub.env.errors import UsageError  # noqa: E402
from hub.env.types import Message  # noqa: E402
from hub.train.v1_curriculum import curriculum_of, to_v1_curriculum_taskset  # noqa: E402
from hub.train.verifiers_v1 import v1_trace  # noqa: E402


async def test_the_taskset_is_infinite_and_climbs_as_its_traces_are_scored() -> None:
    taskset = to_v1_curriculum_taskset("arith", group_size=2, min_samples=8, band=(0.1, 0.7), seed=5)
    assert taskset.bounded is False
    with pytest.raises(ValueError, match="infinite"):
        taskset.shuffle()
    ids = []
    tasks = iter(taskset)
    for _ in range(12):
        task = next(tasks)  # drawn now, from what the curriculum has learned so far
        ids.append(task.data.id)
        answer = json.loads(task.data.answer)
        msgs = [Message(role=m.role, content=m.content) for m in task.data.prompt]
        for _ in range(2):  # a group of two rollouts, both right
            trace = v1_trace(task, [*msgs, Message(role="assistant", content=f"Answer: {answer}")], len(msgs))
            await task.score(trace, None)
            assert trace.rewards["verihub_reward"].score == 1.0
    cur = curriculum_of("arith", seed=5)
    assert cur.observed == 24 and cur.moves and cur.moves[0].dst == "level=2"
    assert ids[0].endswith("@level=1") and any(i.endswith("@level=2") for i in ids[4:])
    assert len(set(ids)) == len(ids)
    assert [t.data.id for t in taskset.take(3)] != ids[:3]  # the same curriculum goes on drawing


def test_an_environment_without_a_difficulty_space_is_refused() -> None:
    with pytest.raises(UsageError, match="declares no difficulty space"):
        list(to_v1_curriculum_taskset("guess_fixture").take(1))
