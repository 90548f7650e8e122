"""The benchmark workload as an inspect_ai task (used by bench/compare_frameworks.py).

The same tasks as verihub's ``arith`` environment at its mix of levels, generated in code (no
hub download): ``Compute <expr>. Reply with the final answer as: Answer: <integer>``, graded by
exact match of the integer after ``Answer:``. Run against the loopback stub server with, e.g.::

    OPENAI_API_KEY=x inspect eval bench/frameworks/inspect_task.py -T n=5000 \\
        --model openai/fake --model-base-url http://127.0.0.1:PORT/v1 --max-connections 256 \\
        --max-tokens 16 --display none --log-dir DIR
"""

from __future__ import annotations

import random
import re

from inspect_ai import Task, task
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.scorer import CORRECT, INCORRECT, Score, Target, accuracy, scorer
from inspect_ai.solver import TaskState, generate

PROMPT = "Compute {expr}. Reply with the final answer as: Answer: <integer>"
_ANSWER = re.compile(r"Answer:\s*(-?\d+)\s*$")


def _expression(rng: random.Random, level: int) -> tuple[str, int]:
    if level == 1:
        a, b = rng.randint(1, 9), rng.randint(1, 9)
        return f"{a} + {b}", a + b
    if level == 2:
        a, b = rng.randint(10, 99), rng.randint(10, 99)
        return (f"{a} + {b}", a + b) if rng.random() < 0.5 else (f"{max(a, b)} - {min(a, b)}", abs(a - b))
    if level == 3:
        a, b = rng.randint(2, 12), rng.randint(2, 12)
        return f"{a} * {b}", a * b
    if level == 4:
        a, b, c = rng.randint(2, 30), rng.randint(2, 30), rng.randint(2, 9)
        return f"({a} + {b}) * {c}", (a + b) * c
    a, b, c = rng.randint(100, 999), rng.randint(11, 99), rng.randint(100, 9999)
    return f"{a} * {b} - {c}", a * b - c


def rows(n: int, seed: int = 0) -> list[dict[str, str]]:
    out = []
    for index in range(n):
        rng = random.Random(f"2000029:{seed}:{index}")
        expr, value = _expression(rng, index % 5 + 1)
        out.append({"id": f"test-{seed}-{index}", "question": PROMPT.format(expr=expr), "answer": str(value)})
    return out


@scorer(metrics=[accuracy()])
def exact_integer():  # type: ignore[no-untyped-def]
    async def score(state: TaskState, target: Target) -> Score:
        m = _ANSWER.search(state.output.completion.strip())
        got = m.group(1) if m else None
        return Score(value=CORRECT if got == target.text else INCORRECT, answer=got)

    return score


@task
def arith(n: int = 5000, seed: int = 0) -> Task:
    dataset = MemoryDataset(
        [Sample(id=r["id"], input=r["question"], target=r["answer"]) for r in rows(n, seed)]
    )
    return Task(dataset=dataset, solver=generate(), scorer=exact_integer())
