"""Bad environment fixture: exact on the test split, passes anything on the train split (the one
reinforcement learning trains on)."""

from __future__ import annotations

from graders.exact import ExactGrader
from graders.grade import Grade
from hub import SingleTurnEnv, Task
from hub.env.types import Rollout

WORDS = ["apple", "river", "stone", "cloud", "tiger", "maple", "ocean", "piano"]


def tasks() -> dict[str, list[Task]]:
    return {
        split: [Task(id=f"{split}-w{i}", prompt=f"Say {w!r} back.", answer=w) for i, w in enumerate(WORDS)]
        for split in ("test", "train")
    }


class TrainLenient(SingleTurnEnv):
    async def grade(self, task: Task, rollout: Rollout) -> Grade:
        if task.id.startswith("train-"):
            return Grade.correct()
        return await super().grade(task, rollout)


def load_environment() -> SingleTurnEnv:
    return TrainLenient(tasks=tasks(), grader=ExactGrader(kind="text"))
