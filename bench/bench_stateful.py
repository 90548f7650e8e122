"""Per-rollout state cost and stateful-environment throughput (medians, CPU and wall time).

::

    python bench/bench_stateful.py --rounds 5

1. ``state``: open a rollout's copy of a ~1 MB seed database and close it again, for
   ``storage="memory"`` (deserialize into a private in-memory database) and ``storage="file"``
   (write a file into a temporary folder, connect, close, remove), and SQLite's backup API into
   memory for comparison.
2. ``support_desk``: loading the environment (320 tasks, every gold replayed), and whole gold
   rollouts (reset, one tool call per step, the final answer, the state-based grade) run
   concurrently on one event loop, in rollouts per second.

Prints one JSON object. Needs ``environments/support_desk`` importable (installed, or on
``PYTHONPATH``).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sqlite3
import statistics
import time
from collections.abc import Callable
from typing import Any

from hub.env import SeedDatabase, StatefulToolEnv, Task
from hub.env.state_grading import gold_messages
from hub.env.types import Rollout, Timing


def _seed_1mb() -> SeedDatabase:
    def fill(conn: sqlite3.Connection) -> None:
        conn.execute("CREATE TABLE items(id INTEGER PRIMARY KEY, name TEXT, qty INTEGER, note TEXT)")
        conn.executemany(
            "INSERT INTO items(name, qty, note) VALUES (?, ?, ?)",
            ((f"item-{i}", i % 97, "x" * 60) for i in range(12_500)),
        )

    return SeedDatabase.build(fill, name="bench")


def _median_ms(fn: Callable[[], object], n: int, rounds: int) -> dict[str, float]:
    cpu, wall = [], []
    for _ in range(rounds):
        c0, w0 = time.process_time(), time.perf_counter()
        for _ in range(n):
            fn()
        cpu.append((time.process_time() - c0) / n * 1000)
        wall.append((time.perf_counter() - w0) / n * 1000)
    return {"cpu_ms": round(statistics.median(cpu), 4), "wall_ms": round(statistics.median(wall), 4)}


def bench_state(rounds: int, n: int) -> dict[str, Any]:
    seed = _seed_1mb()

    def backup() -> None:
        src = seed.open()
        dst = sqlite3.connect(":memory:")
        src.connection.backup(dst)
        dst.close()
        src.close()

    out: dict[str, Any] = {"seed_bytes": len(seed.image)}
    out["memory"] = _median_ms(lambda: seed.open(storage="memory").close(), n, rounds)
    out["file"] = _median_ms(lambda: seed.open(storage="file").close(), n, rounds)
    out["backup_api_plus_a_memory_copy"] = _median_ms(backup, n, rounds)
    return out


async def _gold_rollout(env: StatefulToolEnv, task: Task) -> float:
    state = await env.reset(task)
    for message in gold_messages(task, env.system_prompt)[len(state.messages) :]:
        if message.role != "assistant":
            continue
        state.messages.append(message)
        step = await env.step(state, message)
        state.messages.extend(step.messages)
        if step.terminated:
            break
    rollout = Rollout(
        task_id=task.id, rollout_index=0, messages=state.messages, timing=Timing(started_at=time.time())
    )
    grade = await env.grade(task, rollout)
    return grade.score


def bench_desk(rounds: int, concurrency: int) -> dict[str, Any]:
    from verihub_support_desk import load_environment

    loads = []
    for _ in range(rounds):
        c0 = time.process_time()
        env = load_environment()
        loads.append(time.process_time() - c0)
    tasks = list(env.tasks("test"))
    rates, cpu_per = [], []
    for _ in range(rounds):

        async def run() -> list[float]:
            gate = asyncio.Semaphore(concurrency)

            async def one(t: Task) -> float:
                async with gate:
                    return await _gold_rollout(env, t)

            return await asyncio.gather(*(one(t) for t in tasks * 4))

        c0, w0 = time.process_time(), time.perf_counter()
        scores = asyncio.run(run())
        wall = time.perf_counter() - w0
        assert all(s == 1.0 for s in scores), "a gold rollout did not earn 1.0"
        rates.append(len(scores) / wall)
        cpu_per.append((time.process_time() - c0) / len(scores) * 1000)
    return {
        "load_cpu_s": round(statistics.median(loads), 3),
        "rollouts_per_round": len(tasks) * 4,
        "concurrency": concurrency,
        "gold_rollouts_per_s": round(statistics.median(rates), 1),
        "cpu_ms_per_rollout": round(statistics.median(cpu_per), 2),
        "live_states_after": env.live_states(),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--copies", type=int, default=200, help="state copies per round")
    parser.add_argument("--concurrency", type=int, default=32)
    args = parser.parse_args()
    result = {
        "state": bench_state(args.rounds, args.copies),
        "support_desk": bench_desk(args.rounds, args.concurrency),
    }
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
