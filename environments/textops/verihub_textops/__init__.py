"""Procedural string manipulation for verihub (see README.md)."""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator
from typing import Any

from graders.exact import ExactGrader
from graders.grade import Grade
from hub import Rollout, SingleTurnEnv, Task

__all__ = ["generate", "load_environment"]

_SYLLABLES = ("ka", "lo", "mi", "ne", "ru", "sa", "to", "vi", "be", "do", "fa", "gu", "pe", "zo")
_SPLIT_SALT = {"train": 7_000_001, "test": 9_000_011}
_SUFFIX = " Reply with the final answer as: Answer: <answer>"

# (name, level, prompt template, answer function, answer kind)
_Op = tuple[str, int, str, Callable[[str, str], str], str]
_OPS: tuple[_Op, ...] = (
    ("upper", 1, "Write the word '{w}' in capital letters.", lambda w, c: w.upper(), "text"),
    ("first", 1, "What is the first letter of the word '{w}'?", lambda w, c: w[0], "text"),
    ("length", 2, "How many letters are in the word '{w}'?", lambda w, c: str(len(w)), "integer"),
    (
        "count",
        2,
        "How many times does the letter '{c}' appear in '{w}'?",
        lambda w, c: str(w.count(c)),
        "integer",
    ),
    ("reverse", 3, "Write the word '{w}' backwards.", lambda w, c: w[::-1], "text"),
    ("sort", 3, "Write the letters of '{w}' in alphabetical order.", lambda w, c: "".join(sorted(w)), "text"),
)


def generate(split: str, seed: int, *, difficulty: int = 0) -> Iterator[Task]:
    """Tasks of ``split`` for ``seed``, without end and deterministic."""
    index = 0
    while True:
        rng = random.Random(f"{_SPLIT_SALT[split]}:{seed}:{index}")
        level = difficulty if difficulty else index % 3 + 1
        name, _, template, fn, kind = rng.choice([op for op in _OPS if op[1] == level])
        word = "".join(rng.choice(_SYLLABLES) for _ in range(level + 1))
        letter = rng.choice(word)
        yield Task(
            id=f"{split}-{seed}-{index}",
            prompt=template.format(w=word, c=letter) + _SUFFIX,
            answer=fn(word, letter),
            metadata={"difficulty": level, "operation": name, "kind": kind, "split": split},
        )
        index += 1


class TextOpsEnv(SingleTurnEnv):
    """Grades integers as integers and text case-sensitively, by the task's kind."""

    _by_kind: dict[str, ExactGrader] = {
        "integer": ExactGrader(kind="integer"),
        "text": ExactGrader(kind="text", case_sensitive=True),
    }

    async def grade(self, task: Task, rollout: Rollout) -> Grade:
        kind: Any = task.metadata.get("kind", "text")
        return self._by_kind[kind].verdict(rollout.completion, task.answer)


def load_environment(*, difficulty: int = 0) -> TextOpsEnv:
    """Build the environment. ``difficulty``: 1 (easiest) to 3, or 0 for a mix."""
    if difficulty not in range(0, 4):
        raise ValueError(f"difficulty must be 0 (mixed) or 1..3, got {difficulty}")
    return TextOpsEnv(
        id="textops",
        tasks=lambda split, seed: generate(split, seed, difficulty=difficulty),
        grader=ExactGrader(kind="text"),
    )
