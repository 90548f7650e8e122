"""Framework overhead of the verihub runner against a loopback stub server.

Measures, for ``verihub eval`` run as a child process against ``hub.run.fake_server`` (its own
process, answering instantly):

- CPU per rollout: user + system CPU of the verihub process / rollouts (start-up included);
- throughput: rollouts per second of wall time at concurrency 256;
- peak RSS of the verihub process (``--big`` runs 100,000 rollouts for the memory target).

    python bench/bench_runner.py                 # 3 rounds of 20,000 rollouts, medians
    python bench/bench_runner.py --big           # plus 100,000 rollouts (10k x 10 and 100k x 1) for peak RSS
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def free_port() -> int:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port: int = s.getsockname()[1]
    s.close()
    return port


def start_server() -> tuple[subprocess.Popen[bytes], str]:
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "hub.run.fake_server", "--port", str(port)], stdout=subprocess.DEVNULL
    )
    deadline = time.time() + 15
    while time.time() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return proc, f"http://127.0.0.1:{port}/v1"
        except OSError:
            time.sleep(0.05)
    proc.kill()
    raise RuntimeError("stub server did not start")


def run_once(base_url: str, *, tasks: int, rollouts: int, concurrency: int) -> dict[str, float]:
    out = Path(tempfile.mkdtemp(prefix="vh-bench-")) / "run"
    cmd = [
        sys.executable,
        "-m",
        "hub",
        "eval",
        "arith",
        "--model",
        "fake",
        "--base-url",
        base_url,
        "-n",
        str(tasks),
        "-r",
        str(rollouts),
        "-c",
        str(concurrency),
        "--no-progress",
        "--max-tokens",
        "16",
        "--out",
        str(out),
    ]
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    if status != 0:
        raise RuntimeError(f"verihub eval failed: {proc.stderr.read().decode() if proc.stderr else status}")
    summary = json.loads((out / "summary.json").read_text())
    n = tasks * rollouts
    assert summary["n_rollouts"] == n and summary["n_errors"] == 0, summary["n_errors"]
    shutil.rmtree(out.parent)
    cpu = usage.ru_utime + usage.ru_stime
    return {
        "rollouts": n,
        "wall_s": wall,
        "rollouts_per_s": n / wall,
        "cpu_ms_per_rollout": 1000 * cpu / n,
        "peak_rss_mb": usage.ru_maxrss / 1024,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--rollouts", type=int, default=20_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--concurrency", type=int, default=256)
    parser.add_argument(
        "--big", action="store_true", help="also run 100,000 rollouts (two shapes) for peak RSS"
    )
    args = parser.parse_args()
    server, url = start_server()
    try:
        results = [
            run_once(url, tasks=args.rollouts, rollouts=1, concurrency=args.concurrency)
            for _ in range(args.rounds)
        ]
        med = {k: statistics.median(r[k] for r in results) for k in results[0]}
        print(
            f"verihub eval, {args.rollouts} single-turn rollouts, concurrency {args.concurrency}, "
            f"{args.rounds} rounds (medians)"
        )
        print(f"  rollouts/s          {med['rollouts_per_s']:10.0f}")
        print(f"  CPU ms per rollout  {med['cpu_ms_per_rollout']:10.3f}")
        print(f"  peak RSS MB         {med['peak_rss_mb']:10.1f}")
        if args.big:
            for tasks, rollouts in ((10_000, 10), (100_000, 1)):  # 100k distinct tasks: the worst case
                big = run_once(url, tasks=tasks, rollouts=rollouts, concurrency=args.concurrency)
                print(
                    f"100,000 rollouts ({tasks:,} tasks x {rollouts}): {big['wall_s']:.1f} s, "
                    f"{big['rollouts_per_s']:.0f}/s, CPU {big['cpu_ms_per_rollout']:.3f} ms/rollout, "
                    f"peak RSS {big['peak_rss_mb']:.1f} MB"
                )
    finally:
        server.kill()
        server.wait()


if __name__ == "__main__":
    main()
