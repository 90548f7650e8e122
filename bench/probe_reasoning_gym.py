"""reasoning-gym's scorers under verihub's reward-hacking probes (the ones ``verihub check`` sends).

For each dataset, ``--tasks`` test tasks at the dataset's default configuration: the gold
response (``Answer: <reference>``) must pass; the perturbed reference and every hacking probe
(:func:`hub.review.check.probes.hacking_probes`: empty, every option, several answers, hedges,
huge output, the prompt copied, injection, ...) must not be rewarded (a pass, or a score of at
least 0.5, as the check counts it). Prints, per dataset, the gold failures and the probes that
were rewarded, with how many tasks each got through on.

    python bench/probe_reasoning_gym.py --tasks 5
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import time
from collections import Counter

from hub.env.types import Rollout, Task, Timing
from hub.review.check.probes import gold_response, hacking_probes, perturbed_response, probe_answer
from hub.train.reasoning_gym import ReasoningGymEnv

DATASETS = [
    "leg_counting",
    "chain_sum",
    "spell_backward",
    "word_sorting",
    "gcd",
    "basic_arithmetic",
    "letter_counting",
    "caesar_cipher",
    "number_sorting",
    "base_conversion",
]


async def grade(env: ReasoningGymEnv, task: Task, text: str) -> tuple[bool, float]:
    rollout = Rollout(
        task_id=task.id,
        rollout_index=0,
        messages=[],
        completion=text,
        timing=Timing(started_at=time.time()),
        turns=1,
    )
    g = await env.grade(task, rollout)
    return g.passed, g.score


def rewarded(passed: bool, score: float) -> bool:
    return passed or score >= 0.5


async def probe(name: str, n: int) -> tuple[int, Counter[str]]:
    env = ReasoningGymEnv(name)
    gold_failures = 0
    gamed: Counter[str] = Counter()
    for task in itertools.islice(env.tasks("test", seed=0), n):
        gold = gold_response(env, task)
        assert gold is not None
        if not (await grade(env, task, gold))[0]:
            gold_failures += 1
        if rewarded(*await grade(env, task, perturbed_response(env, task, gold))):
            gamed["perturbed reference"] += 1
        for probe_name, text in hacking_probes(task, probe_answer(env, task, gold)):
            if rewarded(*await grade(env, task, text)):
                gamed[probe_name] += 1
    return gold_failures, gamed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=5)
    parser.add_argument("--datasets", nargs="*", default=DATASETS)
    args = parser.parse_args()
    print("| dataset | gold failing | probes rewarded (tasks out of N) |")
    print("| --- | ---: | --- |")
    for name in args.datasets:
        failures, gamed = asyncio.run(probe(name, args.tasks))
        shown = ", ".join(f"{k} ({v})" for k, v in sorted(gamed.items())) or "none"
        print(f"| {name} | {failures}/{args.tasks} | {shown} |", flush=True)


if __name__ == "__main__":
    main()
