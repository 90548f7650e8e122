"""Procedural string manipulation for verihub (see README.md).

Words are built from 490 syllables (onset consonant, vowel, optional coda), so a level with
``k``-syllable words has ``490**k`` of them. A seed visits a level's (operation, word, letter)
problems in a shuffled order without repeats (see :mod:`hub.env.procedural`), and a
problem's split is a hash of its content, so ``train`` and ``test`` never share a problem.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, Literal

from graders.exact import ExactGrader
from graders.grade import Grade
from hub import Axis, DifficultySpace, Rollout, SingleTurnEnv, Task
from hub.env.procedural import SPLITS, shuffled, split_of, stream_key

__all__ = [
    "LEVELS",
    "SYLLABLES",
    "Operation",
    "TextOpsEnv",
    "difficulty_space",
    "generate",
    "load_environment",
]

SYLLABLES: tuple[str, ...] = tuple(
    onset + vowel + coda for onset in "bdfgklmnprstvz" for vowel in "aeiou" for coda in ("", *"lmnrst")
)
"""Every syllable has one onset consonant, one vowel and at most one coda consonant, so a word
splits into syllables in exactly one way: distinct syllable sequences are distinct words."""

_SUFFIX = " Reply with the final answer as: Answer: <answer>"


@dataclass(frozen=True)
class Operation:
    """One kind of question about a word.

    ``template`` has ``{w}`` (the word) and ``{c}`` (a letter of it, for ``uses_letter``);
    ``answer(word, letter)`` is the reference. ``case_sensitive`` applies to text answers
    (a letter is right in either case; a capitalised word is not).
    """

    name: str
    template: str
    answer: Callable[[str, str], str]
    kind: Literal["integer", "text"] = "text"
    case_sensitive: bool = True
    uses_letter: bool = False


UPPER = Operation("upper", "Write the word '{w}' in capital letters.", lambda w, c: w.upper())
FIRST = Operation(
    "first", "What is the first letter of the word '{w}'?", lambda w, c: w[0], case_sensitive=False
)
LAST = Operation(
    "last", "What is the last letter of the word '{w}'?", lambda w, c: w[-1], case_sensitive=False
)
LENGTH = Operation("length", "How many letters are in the word '{w}'?", lambda w, c: str(len(w)), "integer")
COUNT = Operation(
    "count",
    "How many times does the letter '{c}' appear in '{w}'?",
    lambda w, c: str(w.count(c)),
    "integer",
    uses_letter=True,
)
REVERSE = Operation("reverse", "Write the word '{w}' backwards.", lambda w, c: w[::-1])
SORT = Operation("sort", "Write the letters of '{w}' in alphabetical order.", lambda w, c: "".join(sorted(w)))

LEVELS: Mapping[int, tuple[int, tuple[Operation, ...]]] = MappingProxyType(
    {1: (2, (UPPER, FIRST, LAST)), 2: (3, (LENGTH, COUNT)), 3: (4, (REVERSE, SORT))}
)
"""Level -> (syllables per word, operations)."""

_GRADERS: Mapping[tuple[str, bool], ExactGrader] = MappingProxyType(
    {
        (kind, case): ExactGrader(kind=kind, case_sensitive=case, statements=True)
        for kind in ("integer", "text")
        for case in (True, False)
    }
)


@dataclass(frozen=True)
class _Problem:
    operation: Operation
    word: str
    letter: str

    @property
    def content(self) -> str:
        return f"{self.operation.name}:{self.word}:{self.letter}"


def _slots(op: Operation, n_syllables: int) -> int:
    """Letter choices of ``op``: a word has at most three letters per syllable (slots past its
    distinct letters are skipped)."""
    return 3 * n_syllables if op.uses_letter else 1


def _decode(level: int, index: int) -> _Problem | None:
    n_syllables, operations = LEVELS[level]
    words = len(SYLLABLES) ** n_syllables
    for op in operations:
        size = words * _slots(op, n_syllables)
        if index < size:
            break
        index -= size
    else:
        raise IndexError(index)
    slot, index = divmod(index, words)
    parts = []
    for _ in range(n_syllables):
        index, r = divmod(index, len(SYLLABLES))
        parts.append(SYLLABLES[r])
    word = "".join(parts)
    letters = sorted(set(word))
    if op.uses_letter and slot >= len(letters):
        return None
    return _Problem(op, word, letters[slot] if op.uses_letter else "")


def _problems(split: str, seed: int, level: int) -> Iterator[_Problem]:
    """The problems of ``level`` in ``split``, shuffled by ``seed``, without end (a new pass in
    a new order starts only once the whole level, hundreds of thousands of problems, is used)."""
    n_syllables, operations = LEVELS[level]
    size = sum(len(SYLLABLES) ** n_syllables * _slots(op, n_syllables) for op in operations)
    epoch = 0
    while True:
        for index in shuffled(size, stream_key("textops", seed, level, epoch)):
            problem = _decode(level, index)
            if problem is not None and split_of(problem.content) == split:
                yield problem
        epoch += 1


def generate(split: str, seed: int, *, difficulty: int = 0) -> Iterator[Task]:
    """Tasks of ``split`` for ``seed``, without end and deterministic.

    ``difficulty`` 0 cycles through the levels (task ``i`` is at level ``i % 3 + 1``). Ids are
    ``{split}-{seed}-{index}``.
    """
    if split not in SPLITS:
        raise ValueError(f"textops has splits {SPLITS}, not {split!r}")
    levels = [difficulty] if difficulty else sorted(LEVELS)
    streams = {level: _problems(split, seed, level) for level in levels}
    index = 0
    while True:
        level = levels[index % len(levels)]
        p = next(streams[level])
        op = p.operation
        yield Task(
            id=f"{split}-{seed}-{index}",
            prompt=op.template.format(w=p.word, c=p.letter) + _SUFFIX,
            answer=op.answer(p.word, p.letter),
            metadata={
                "difficulty": level,
                "operation": op.name,
                "kind": op.kind,
                "case_sensitive": op.case_sensitive,
                "split": split,
            },
        )
        index += 1


class TextOpsEnv(SingleTurnEnv):
    """Grades each task with the exact grader its metadata asks for: integers as integers,
    text case-sensitively unless the task says otherwise (a letter is right in either case)."""

    async def grade(self, task: Task, rollout: Rollout) -> Grade:
        kind = "integer" if task.metadata.get("kind") == "integer" else "text"
        case_sensitive = bool(task.metadata.get("case_sensitive", True))
        return _GRADERS[kind, case_sensitive].verdict(rollout.completion, task.answer)


def difficulty_space(start: int = 1) -> DifficultySpace:
    """One axis, ``level`` 1..3: longer words and harder operations (see :data:`LEVELS`)."""
    axis = Axis(
        "level",
        tuple(sorted(LEVELS)),
        "1: capitals, first and last letter of 2-syllable words; 2: length and letter count, "
        "3 syllables; 3: reversal and sorted letters, 4 syllables",
    )
    return DifficultySpace.of([axis], start={"level": start})


def _at_point(point: Mapping[str, Any], split: str, seed: int) -> Iterator[Task]:
    return generate(split, seed, difficulty=int(point["level"]))


def load_environment(*, difficulty: int = 0) -> TextOpsEnv:
    """Build the environment. ``difficulty``: 1 (easiest) to 3, or 0 for a mix.

    The environment declares its difficulty space (``level`` 1..3, starting at ``difficulty`` or
    1), so a curriculum can ask for tasks at any level whatever ``difficulty`` is.
    """
    if difficulty not in range(0, 4):
        raise ValueError(f"difficulty must be 0 (mixed) or 1..3, got {difficulty}")
    return TextOpsEnv(
        id="textops",
        tasks=lambda split, seed: generate(split, seed, difficulty=difficulty),
        grader=_GRADERS["text", True],
        difficulty=difficulty_space(difficulty or 1),
        point_source=_at_point,
    )
