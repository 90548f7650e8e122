"""The runner's marginal CPU per rollout against a raw aiohttp client on the same stub server.

One loopback stub (``python -m hub.run.fake_server --port 0``, its own process, answering
instantly) serves three sides, each run as a fresh child process and measured the same way:

- ``floor``: a bare aiohttp client, ``concurrency`` coroutines posting one single-turn arith
  prompt each (``max_tokens`` 16), reading the body and taking the answer out of the JSON;
- ``floor+env``: the floor plus the environment's own work: arith's tasks, generated once, sent
  as the prompts, and each answer graded by arith's grader;
- ``verihub``: :func:`hub.run.evaluate` (what ``verihub eval`` runs, without the progress bar)
  on ``arith`` with the same concurrency, into a fresh run directory.

Each child reports the CPU time of its own process (``time.process_time``: every thread, user
and system) and the wall time of the run alone, imports and set-up excluded. Every round runs
every side at ``--small`` and ``--large`` rollouts (the order rotates each round); the marginal
CPU per rollout is (cpu(large) - cpu(small)) / (large - small), paired within a round, and the
figures are medians over rounds::

    python bench/bench_runner_floor.py                       # 5 rounds, 500 and 2,000 rollouts, c=64
    python bench/bench_runner_floor.py --rounds 3 --json out.json
    python bench/bench_runner_floor.py --before /tmp/old     # adds ``verihub@before``: the same run
                                                             # from another checkout, side by side

``--before DIR`` takes a checkout of an earlier commit (``git archive COMMIT | tar -x -C DIR``);
its side runs that tree's own copy of this script with ``DIR`` and ``DIR/environments/arith``
first on ``PYTHONPATH``, in the same rounds as the others.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

SIDES = ("floor", "floor+env", "verihub")
BEFORE = "verihub@before"


# -- the two sides (run in a child process) ---------------------------------------------------
async def _floor(url: str, n: int, concurrency: int) -> int:
    """Raw aiohttp: post ``n`` single-turn prompts, parse each answer; returns answers read."""
    import aiohttp

    prompts = iter(range(n))
    answered = 0

    async def worker(session: aiohttp.ClientSession) -> None:
        nonlocal answered
        for i in prompts:
            body = {
                "model": "fake",
                "messages": [{"role": "user", "content": f"Compute {i} + {i}. Reply as: Answer: <integer>"}],
                "max_tokens": 16,
            }
            async with session.post(url + "/chat/completions", data=json.dumps(body).encode()) as resp:
                raw = await resp.read()
            content = json.loads(raw)["choices"][0]["message"]["content"]
            if content:
                answered += 1

    connector = aiohttp.TCPConnector(limit=concurrency, limit_per_host=0)
    headers = {"Content-Type": "application/json"}
    async with aiohttp.ClientSession(connector=connector, headers=headers) as session:
        await asyncio.gather(*(worker(session) for _ in range(concurrency)))
    return answered


async def _floor_env(url: str, n: int, concurrency: int) -> int:
    """The floor plus the environment's own work: arith's tasks (generated once) and its grader."""
    import aiohttp

    from hub.env.grading import TaskSelection
    from hub.env.types import Message, Rollout, Timing
    from hub.registry.entrypoints import load_environment

    env = load_environment("arith")
    tasks = iter(TaskSelection(env, split="test", seed=0, num_tasks=n))
    graded = 0

    async def worker(session: aiohttp.ClientSession) -> None:
        nonlocal graded
        for task in tasks:
            messages = task.messages(env.system_prompt)
            body = {"model": "fake", "messages": [m.to_openai() for m in messages], "max_tokens": 16}
            async with session.post(url + "/chat/completions", data=json.dumps(body).encode()) as resp:
                raw = await resp.read()
            content = json.loads(raw)["choices"][0]["message"]["content"]
            answer = Message(role="assistant", content=content)
            rollout = Rollout(
                task_id=task.id, rollout_index=0, messages=[*messages, answer], timing=Timing(started_at=0.0)
            )
            grade = await env.grade(task, rollout)
            if grade.score is not None:
                graded += 1

    connector = aiohttp.TCPConnector(limit=concurrency, limit_per_host=0)
    headers = {"Content-Type": "application/json"}
    async with aiohttp.ClientSession(connector=connector, headers=headers) as session:
        await asyncio.gather(*(worker(session) for _ in range(concurrency)))
    return graded


async def _verihub(url: str, n: int, concurrency: int, out: Path) -> int:
    from hub.env.types import Sampling
    from hub.run.evaluate import EvalOptions, evaluate

    summary = await evaluate(
        "arith",
        model="fake",
        base_url=url,
        out=out,
        num_tasks=n,
        sampling=Sampling(max_tokens=16),
        options=EvalOptions(concurrency=concurrency, api_key_env=""),
    )
    if summary.n_errors:
        raise RuntimeError(f"{summary.n_errors} rollouts errored: {summary.errors_by_kind}")
    return summary.n_rollouts


def child(side: str, url: str, n: int, concurrency: int) -> dict[str, float]:
    """Run one side once in this process; CPU and wall time of the run alone."""
    from hub.env import aio

    work = Path(tempfile.mkdtemp(prefix="vh-floor-"))
    try:
        if side != "floor":
            import hub.run.evaluate  # noqa: F401  (imports are start-up, not the run)
            from hub.registry.entrypoints import load_environment

            load_environment("arith")  # the entry-point scan and the package import, once
        else:
            import aiohttp  # noqa: F401
        cpu0, wall0 = time.process_time(), time.perf_counter()
        if side == "floor":
            done = aio.run(_floor(url, n, concurrency))
        elif side == "floor+env":
            done = aio.run(_floor_env(url, n, concurrency))
        else:
            done = aio.run(_verihub(url, n, concurrency, work / "run"))
        cpu, wall = time.process_time() - cpu0, time.perf_counter() - wall0
    finally:
        shutil.rmtree(work, ignore_errors=True)
    if done != n:
        raise RuntimeError(f"{side}: {done} of {n} rollouts finished")
    return {"cpu_s": cpu, "wall_s": wall}


# -- the parent: the stub, the rounds, the medians --------------------------------------------
def start_stub() -> tuple[subprocess.Popen[str], str]:
    proc = subprocess.Popen(
        [sys.executable, "-m", "hub.run.fake_server", "--port", "0"], stdout=subprocess.PIPE, text=True
    )
    assert proc.stdout is not None
    line = proc.stdout.readline().strip()  # "listening on http://127.0.0.1:PORT/v1"
    if not line.startswith("listening on "):
        proc.kill()
        raise RuntimeError(f"the stub server did not start: {line!r}")
    return proc, line.removeprefix("listening on ")


def measure(side: str, url: str, n: int, concurrency: int, before: Path | None = None) -> dict[str, float]:
    script, env = Path(__file__), None
    if side == BEFORE:
        assert before is not None
        script, side = before / "bench" / Path(__file__).name, "verihub"
        paths = [str(before), str(before / "environments" / "arith"), os.environ.get("PYTHONPATH", "")]
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in paths if p)}
    cmd = [sys.executable, str(script), "--child", side, "--url", url, "--n", str(n), "-c", str(concurrency)]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=600, check=False, env=env)
    if done.returncode != 0:
        raise RuntimeError(f"{side} n={n} failed:\n{done.stderr[-2000:]}")
    result: dict[str, float] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--small", type=int, default=500)
    parser.add_argument("--large", type=int, default=2000)
    parser.add_argument("-c", "--concurrency", type=int, default=64)
    parser.add_argument("--json", type=Path, help="also write every run's figures here")
    parser.add_argument("--before", type=Path, help="a checkout of an earlier commit, run as a fourth side")
    parser.add_argument(
        "--child", choices=SIDES, help="run this side once against --url and print its CPU and wall time"
    )
    parser.add_argument("--url", help="with --child: the stub's base URL")
    parser.add_argument("--n", type=int, help="with --child: rollouts")
    args = parser.parse_args()
    if args.child:
        print(json.dumps(child(args.child, args.url, args.n, args.concurrency)))
        return
    if args.large <= args.small:
        parser.error("--large must exceed --small")
    sides = (*SIDES, BEFORE) if args.before else SIDES
    stub, url = start_stub()
    runs: list[dict[str, Any]] = []
    try:
        for r in range(args.rounds):
            order = sides[r % len(sides) :] + sides[: r % len(sides)]
            for side in order:
                for n in (args.small, args.large):
                    figures = measure(side, url, n, args.concurrency, args.before)
                    runs.append({"round": r, "side": side, "n": n, **figures})
    finally:
        stub.kill()
        stub.wait()
    report(runs, args, sides)


def report(runs: list[dict[str, Any]], args: argparse.Namespace, sides: tuple[str, ...]) -> None:
    def run_of(r: int, side: str, n: int) -> dict[str, Any]:
        return next(x for x in runs if x["round"] == r and x["side"] == side and x["n"] == n)

    span = args.large - args.small
    rows: dict[str, dict[str, float]] = {}
    for side in sides:
        marginal = [
            1000 * (run_of(r, side, args.large)["cpu_s"] - run_of(r, side, args.small)["cpu_s"]) / span
            for r in range(args.rounds)
        ]
        large = [run_of(r, side, args.large) for r in range(args.rounds)]
        rows[side] = {
            "marginal_cpu_ms": statistics.median(marginal),
            "cpu_ms_large": statistics.median(1000 * x["cpu_s"] / args.large for x in large),
            "rollouts_per_s": statistics.median(args.large / x["wall_s"] for x in large),
            "marginal_min": min(marginal),
            "marginal_max": max(marginal),
        }

    def ratios(side: str, base: str) -> list[float]:
        return [
            (run_of(r, side, args.large)["cpu_s"] - run_of(r, side, args.small)["cpu_s"])
            / (run_of(r, base, args.large)["cpu_s"] - run_of(r, base, args.small)["cpu_s"])
            for r in range(args.rounds)
        ]

    print(
        f"single-turn rollouts, concurrency {args.concurrency}, {args.rounds} rounds of {args.small} and "
        f"{args.large} (medians; load average {os.getloadavg()[0]:.1f} at the end)"
    )
    print(f"{'side':<15}{'marginal CPU ms':>17}{'(min-max)':>16}{'CPU ms @large':>15}{'rollouts/s':>12}")
    for side, row in rows.items():
        spread = f"{row['marginal_min']:.3f}-{row['marginal_max']:.3f}"
        print(
            f"{side:<15}{row['marginal_cpu_ms']:>17.3f}{spread:>16}{row['cpu_ms_large']:>15.3f}"
            f"{row['rollouts_per_s']:>12.0f}"
        )
    for side in sides[2:]:
        for base in ("floor", "floor+env"):
            print(
                f"{side} / {base}, marginal CPU: "
                f"{rows[side]['marginal_cpu_ms'] / rows[base]['marginal_cpu_ms']:.2f} (ratio of medians), "
                f"{statistics.median(ratios(side, base)):.2f} (median of per-round ratios)"
            )
    if args.json:
        args.json.write_text(json.dumps({"runs": runs, "medians": rows}, indent=2))


if __name__ == "__main__":
    main()
