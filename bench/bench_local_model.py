"""Tokens per second of the embedded model: through verihub vs xllamacpp called directly.

Both sides serve the same prompts (the first N arith tasks) one at a time, greedy
(temperature 0, so both generate the same tokens), with the same server settings (one thread,
one slot). "Direct" calls ``xllamacpp.Server.handle_chat_completions`` in-process, with no
HTTP at all; "verihub" is the full runner path (HTTP client, environment, grading, JSON lines).
Each round runs both, the order alternating between rounds; the machine is noisy and drifts, so
the figure is the median of the per-round ratios (paired within a round), with the medians of
each side's rates beside it.

    python bench/bench_local_model.py --tasks 8 --rounds 3
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import statistics
import tempfile
import time
from pathlib import Path

from hub.env.types import Sampling
from hub.registry.entrypoints import load_environment
from hub.run.evaluate import EvalOptions, evaluate
from hub.run.local_model import local_model_path
from hub.run.rundir import RunDir


def prompts(n: int) -> list[list[dict[str, str]]]:
    env = load_environment("arith")
    return [[m.to_openai() for m in t.messages()] for t in itertools.islice(env.tasks("test"), n)]


def direct(n: int, max_tokens: int) -> tuple[int, float]:
    import xllamacpp

    params = xllamacpp.CommonParams()
    params.model.path = str(local_model_path("smollm2"))
    params.cpuparams.n_threads = 1
    params.cpuparams_batch.n_threads = 1
    params.n_parallel = 1
    params.n_ctx = 2048
    params.verbosity = -1
    params.hostnames = ["127.0.0.1"]
    params.port = 0
    server = xllamacpp.Server(params)
    tokens = 0
    t0 = time.perf_counter()
    for messages in prompts(n):
        out = server.handle_chat_completions(
            {"messages": messages, "max_tokens": max_tokens, "temperature": 0.0}
        )
        tokens += int(out["usage"]["completion_tokens"])
    elapsed = time.perf_counter() - t0
    del server
    return tokens, elapsed


def through_verihub(n: int, max_tokens: int) -> tuple[int, float]:
    out = Path(tempfile.mkdtemp(prefix="vh-local-")) / "run"
    t0 = time.perf_counter()
    started: list[float] = []
    asyncio.run(
        evaluate(
            "arith",
            model="local:smollm2",
            out=out,
            num_tasks=n,
            rollouts=1,
            sampling=Sampling(temperature=0.0, max_tokens=max_tokens),
            options=EvalOptions(
                concurrency=1, on_start=lambda total, done: started.append(time.perf_counter())
            ),
        )
    )
    elapsed = time.perf_counter() - (started[0] if started else t0)
    tokens = sum(r.usage.completion_tokens for r in RunDir(out).iter_rollouts())
    return tokens, elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--tasks", type=int, default=8)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--max-tokens", type=int, default=64)
    args = parser.parse_args()
    rates: dict[str, list[float]] = {"direct": [], "verihub": []}
    sides = (("direct", direct), ("verihub", through_verihub))
    for i in range(args.rounds):
        for name, fn in sides if i % 2 == 0 else sides[::-1]:
            tokens, elapsed = fn(args.tasks, args.max_tokens)
            rates[name].append(tokens / elapsed)
            rate = tokens / elapsed
            print(
                f"  round {i + 1} {name:8s} {tokens:5d} tokens in {elapsed:6.2f} s = {rate:6.1f} tok/s",
                flush=True,
            )
    d, v = statistics.median(rates["direct"]), statistics.median(rates["verihub"])
    paired = statistics.median(vr / dr for vr, dr in zip(rates["verihub"], rates["direct"], strict=True))
    print(
        f"median tokens/s: direct {d:.1f}, verihub {v:.1f}; "
        f"median per-round ratio verihub/direct {paired:.3f}"
    )


if __name__ == "__main__":
    main()
