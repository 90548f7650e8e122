"""The benchmark workload as a ``verifiers`` environment (classic ``vf-eval`` API, verifiers 0.1.x).

``vf-eval verifiers_env`` imports this package (``bench/frameworks`` on ``PYTHONPATH``) and calls
``load_environment``. The tasks are those of verihub's ``arith`` environment at its mix of
levels, built in code with ``datasets.Dataset.from_list`` (no hub download): ``Compute <expr>.
Reply with the final answer as: Answer: <integer>``, graded by exact match of the integer after
``Answer:``. See bench/compare_frameworks.py for the command line.
"""

from __future__ import annotations

import random
import re
from typing import Any

import verifiers as vf
from datasets import Dataset

__all__ = ["load_environment"]

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
        out.append({"question": PROMPT.format(expr=expr), "answer": str(value)})
    return out


def _completion_text(completion: Any) -> str:
    if isinstance(completion, str):
        return completion
    for message in reversed(completion or []):
        content = message.get("content") if isinstance(message, dict) else getattr(message, "content", None)
        if isinstance(content, str):
            return content
    return ""


def exact_integer(completion: Any, answer: str, **kwargs: Any) -> float:
    m = _ANSWER.search(_completion_text(completion).strip())
    return 1.0 if m and m.group(1) == answer else 0.0


def load_environment(n: int = 5000, seed: int = 0, **kwargs: Any) -> vf.Environment:
    dataset = Dataset.from_list(rows(n, seed))
    return vf.SingleTurnEnv(eval_dataset=dataset, rubric=vf.Rubric(funcs=[exact_integer]), **kwargs)
