"""CPU per rollout of a sandboxed single-turn evaluation against the in-process one.

Both run ``evaluate("arith", ...)`` against ``hub.run.fake_server`` (its own process, answering
instantly), alternating, each round in a fresh child process (``--one MODE``) that reports:

- CPU of the evaluating process (user + system, start-up included), plus
- for ``sandbox``, the CPU of every process in the sandbox (bubblewrap, its init and the
  environment server), read by the supervisor just before the sandbox ends (bubblewrap does
  not reap its init, so ``wait4`` would miss it).

    python bench/bench_sandbox.py --rollouts 10000 --rounds 3

Prints one JSON object with the medians and the ratio sandbox / in-process.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_runner import start_server  # noqa: E402


def one(mode: str, base_url: str, rollouts: int, concurrency: int) -> dict[str, float]:
    from hub.run.evaluate import EvalOptions, evaluate
    from hub.sandbox import process

    sandbox_cpu: list[float] = []
    close = process.SandboxProcess.close

    def counting_close(self: process.SandboxProcess) -> None:
        close(self)
        sandbox_cpu.append(self.cpu_s)

    process.SandboxProcess.close = counting_close  # type: ignore[method-assign]
    out = Path(tempfile.mkdtemp(prefix="vh-bench-sbx-")) / "run"
    from hub.env.types import Sampling

    t0 = time.perf_counter()
    summary = asyncio.run(
        evaluate(
            "arith",
            model="fake",
            base_url=base_url,
            out=out,
            num_tasks=rollouts,
            sampling=Sampling(max_tokens=16),
            options=EvalOptions(concurrency=concurrency, sandbox=mode == "sandbox"),
        )
    )
    wall = time.perf_counter() - t0
    me = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    own = me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime
    return {
        "rollouts": summary.n_rollouts,
        "wall_s": wall,
        "cpu_s": own + sum(sandbox_cpu),
        "sandbox_cpu_s": sum(sandbox_cpu),
        "peak_rss_mb": me.ru_maxrss / 1024,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rollouts", type=int, default=10000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--concurrency", type=int, default=256)
    parser.add_argument("--one", choices=["inprocess", "sandbox"])
    parser.add_argument("--base-url")
    args = parser.parse_args()
    if args.one:
        print(json.dumps(one(args.one, args.base_url, args.rollouts, args.concurrency)))
        return
    server, base_url = start_server()
    runs: dict[str, list[dict[str, float]]] = {"inprocess": [], "sandbox": []}
    try:
        for _ in range(args.rounds):
            for mode in runs:
                cmd = [sys.executable, __file__, "--one", mode, "--base-url", base_url]
                cmd += ["--rollouts", str(args.rollouts), "--concurrency", str(args.concurrency)]
                res = subprocess.run(cmd, capture_output=True, text=True, check=True)
                runs[mode].append(json.loads(res.stdout.strip().splitlines()[-1]))
    finally:
        server.kill()
    out: dict[str, object] = {"rollouts": args.rollouts, "rounds": args.rounds}
    for mode, rs in runs.items():
        out[mode] = {
            "cpu_ms_per_rollout": round(statistics.median(r["cpu_s"] / r["rollouts"] * 1000 for r in rs), 3),
            "rollouts_per_s": round(statistics.median(r["rollouts"] / r["wall_s"] for r in rs)),
            "sandbox_cpu_s": round(statistics.median(r["sandbox_cpu_s"] for r in rs), 2),
            "peak_rss_mb": round(statistics.median(r["peak_rss_mb"] for r in rs)),
        }
    cpu = {m: statistics.median(r["cpu_s"] / r["rollouts"] for r in rs) for m, rs in runs.items()}
    out["cpu_ratio_sandbox_over_inprocess"] = round(cpu["sandbox"] / cpu["inprocess"], 2)
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
