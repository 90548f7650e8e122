"""The runner's marginal CPU per rollout against a raw aiohttp client on the same stub server.

One loopback stub (``python -m hub.run.fake_server --port 0``, its own process, answering
instantly) serves every side, each run as a fresh child process and measured the same way:

- ``floor``: a bare aiohttp client, ``concurrency`` coroutines posting one single-turn prompt
  each (``max_tokens`` 16), reading the body and taking the answer out of the JSON, with
  aiohttp's defaults (a 5-minute timeout, kept by a timer per request); ``floor-untimed``, only
  when named in ``--sides``: the same with no request timeout at all;
- ``floor+static`` / ``floor+arith``: the floor plus an environment's own work: its tasks,
  selected once and sent as the prompts, and each answer graded by its grader. ``static`` is a
  minimal environment (tasks given as a list, graded by comparing two strings), so its own work
  is next to nothing; ``arith`` generates its tasks and grades with the exact integer grader;
- ``verihub+static`` / ``verihub+arith``: :func:`hub.run.evaluate` (what ``verihub eval`` runs,
  without the progress bar) on that environment with the same concurrency, into a fresh run
  directory.

The runner's own overhead is ``verihub+static`` over ``floor`` (and ``verihub+arith`` over
``floor+arith``); ``verihub+arith`` over ``floor`` also charges arith's generator and grader.

Each child reports the CPU time of its own process (``time.process_time``: every thread, user
and system) and the wall time of the run alone, imports and set-up excluded. Every round runs
every side at ``--small`` and ``--large`` rollouts (the order rotates each round); the marginal
CPU per rollout is (cpu(large) - cpu(small)) / (large - small), paired within a round, and the
figures are medians over rounds. ``--instructions`` counts instead the user-space instructions
of each child under ``valgrind --tool=cachegrind --cache-sim=no`` (start-up included, which the
difference removes): they do not move with the machine's load::

    python bench/bench_runner_floor.py                       # 5 rounds, 1,000 and 6,000 rollouts, c=64
    python bench/bench_runner_floor.py --rounds 3 --json out.json
    python bench/bench_runner_floor.py --before /tmp/old     # adds the verihub sides of another
                                                             # checkout (``...@before``), same rounds
    python bench/bench_runner_floor.py --instructions --rounds 1 --before /tmp/old

``--before DIR`` takes a checkout of an earlier commit (``git archive COMMIT | tar -x -C DIR``);
its sides run this script's child with ``DIR`` and ``DIR/environments/arith`` first on
``PYTHONPATH`` (so that tree's ``hub``), in the same rounds as the others.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

SIDES = ("floor", "floor+static", "verihub+static", "floor+arith", "verihub+arith")
BEFORE_SIDES = ("verihub+static@before", "verihub+arith@before")
EXTRA_SIDES = ("floor-untimed",)
"""Only when named in ``--sides``: the floor with aiohttp's per-request timer turned off
(``ClientTimeout(total=None)``; aiohttp's default keeps a 5-minute one), a stricter floor."""
STATIC_TASKS = 10_000
"""The static environment's list (longer when a run asks for more): the same for both sizes."""


# -- the sides (run in a child process) -------------------------------------------------------
def _prompt(i: int) -> str:
    return f"Compute {i} + {i}. Reply as: Answer: <integer>"


def static_env(n: int) -> Any:
    """A minimal single-turn environment: tasks given as a list, graded by comparing strings."""
    from hub.env import SingleTurnEnv, Task
    from hub.env.types import Grade

    right = Grade(score=1.0, passed=True, status="correct")
    wrong = Grade(score=0.0, passed=False, status="incorrect")

    async def same(response: str, *, reference: Any) -> Grade:
        return right if response.removeprefix("Answer: ") == reference else wrong

    tasks = [Task(id=f"t{i}", prompt=_prompt(i), answer=str(2 * i)) for i in range(max(n, STATIC_TASKS))]
    return SingleTurnEnv(id="static", tasks=tasks, grader=same)


def load(env_name: str, n: int) -> Any:
    if env_name == "static":
        return static_env(n)
    from hub.registry.entrypoints import load_environment

    return load_environment(env_name)


async def _floor(url: str, n: int, concurrency: int, *, timed: bool = True) -> int:
    """Raw aiohttp: post ``n`` single-turn prompts, parse each answer; returns answers read.
    ``timed``: aiohttp's default request timeout (a timer per request), else none."""
    import aiohttp

    prompts = iter(range(n))
    answered = 0

    async def worker(session: aiohttp.ClientSession) -> None:
        nonlocal answered
        for i in prompts:
            body = {"model": "fake", "messages": [{"role": "user", "content": _prompt(i)}], "max_tokens": 16}
            async with session.post(url + "/chat/completions", data=json.dumps(body).encode()) as resp:
                raw = await resp.read()
            content = json.loads(raw)["choices"][0]["message"]["content"]
            if content:
                answered += 1

    connector = aiohttp.TCPConnector(limit=concurrency, limit_per_host=0)
    headers = {"Content-Type": "application/json"}
    timeout = aiohttp.client.DEFAULT_TIMEOUT if timed else aiohttp.ClientTimeout(total=None)
    async with aiohttp.ClientSession(connector=connector, headers=headers, timeout=timeout) as session:
        await asyncio.gather(*(worker(session) for _ in range(concurrency)))
    return answered


async def _floor_env(env: Any, url: str, n: int, concurrency: int) -> int:
    """The floor plus the environment's own work: its tasks (selected once) and its grader."""
    import aiohttp

    from hub.env.grading import TaskSelection
    from hub.env.types import Message, Rollout, Timing

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


async def _verihub(env: Any, url: str, n: int, concurrency: int, out: Path) -> int:
    from hub.env.types import Sampling
    from hub.run.evaluate import EvalOptions, evaluate

    summary = await evaluate(
        env.id,
        model="fake",
        base_url=url,
        out=out,
        num_tasks=n,
        sampling=Sampling(max_tokens=16),
        options=EvalOptions(concurrency=concurrency, api_key_env=""),
        started=(env, "sha256:bench"),
    )
    if summary.n_errors:
        raise RuntimeError(f"{summary.n_errors} rollouts errored: {summary.errors_by_kind}")
    return summary.n_rollouts


def child(side: str, url: str, n: int, concurrency: int) -> dict[str, float]:
    """Run one side once in this process; CPU and wall time of the run alone."""
    from hub.env import aio

    kind, _, env_name = side.partition("+")
    work = Path(tempfile.mkdtemp(prefix="vh-floor-"))
    try:
        import aiohttp  # noqa: F401  (imports are start-up, not the run)

        env = None
        if env_name:
            import hub.run.evaluate  # noqa: F401

            env = load(env_name, n)  # the entry-point scan, the package import, the task list
        cpu0, wall0 = time.process_time(), time.perf_counter()
        if env is None:
            done = aio.run(_floor(url, n, concurrency, timed=side != "floor-untimed"))
        elif kind == "floor":
            done = aio.run(_floor_env(env, url, n, concurrency))
        else:
            done = aio.run(_verihub(env, url, n, concurrency, work / "run"))
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


def measure(
    side: str, url: str, n: int, concurrency: int, before: Path | None, instructions: bool
) -> dict[str, float]:
    env = dict(os.environ)
    if side.endswith("@before"):
        assert before is not None
        side = side.removesuffix("@before")
        paths = [str(before), str(before / "environments" / "arith"), os.environ.get("PYTHONPATH", "")]
        env["PYTHONPATH"] = os.pathsep.join(p for p in paths if p)
    cmd = [sys.executable, str(Path(__file__)), "--child", side, "--url", url, "--n", str(n)]
    cmd += ["-c", str(concurrency)]
    if instructions:
        cmd = ["valgrind", "--tool=cachegrind", "--cache-sim=no", "--cachegrind-out-file=/dev/null", *cmd]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=3600, check=False, env=env)
    if done.returncode != 0:
        raise RuntimeError(f"{side} n={n} failed:\n{done.stderr[-2000:]}")
    result: dict[str, float] = json.loads(done.stdout.strip().splitlines()[-1])
    if instructions:
        refs = re.search(r"I\s+refs:\s+([\d,]+)", done.stderr)
        if refs is None:
            raise RuntimeError(f"no instruction count from valgrind:\n{done.stderr[-2000:]}")
        result["instructions"] = float(refs.group(1).replace(",", ""))
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument(
        "--small", type=int, help="rollouts of the smaller run (default 1,000; 500 with --instructions)"
    )
    parser.add_argument(
        "--large", type=int, help="rollouts of the larger run (default 6,000; 2,000 with --instructions)"
    )
    parser.add_argument("-c", "--concurrency", type=int, default=64)
    parser.add_argument("--json", type=Path, help="also write every run's figures here")
    parser.add_argument("--before", type=Path, help="a checkout of an earlier commit: its verihub sides too")
    parser.add_argument(
        "--instructions", action="store_true", help="count instructions under valgrind (cachegrind) instead"
    )
    parser.add_argument(
        "--sides",
        help="comma-separated subset of the sides (default: all but floor-untimed, which must be named)",
    )
    parser.add_argument(
        "--child",
        choices=(*SIDES, *EXTRA_SIDES),
        help="run this side once against --url and print its CPU and wall time",
    )
    parser.add_argument("--url", help="with --child: the stub's base URL")
    parser.add_argument("--n", type=int, help="with --child: rollouts")
    args = parser.parse_args()
    if args.child:
        print(json.dumps(child(args.child, args.url, args.n, args.concurrency)))
        return
    if args.small is None:
        args.small = 500 if args.instructions else 1000
    if args.large is None:
        args.large = 2000 if args.instructions else 6000
    if args.large <= args.small:
        parser.error("--large must exceed --small")
    sides: tuple[str, ...] = (*SIDES, *BEFORE_SIDES) if args.before else SIDES
    if args.sides:
        sides = tuple(x for x in args.sides.split(",") if x)
        unknown = set(sides) - set(SIDES) - set(BEFORE_SIDES) - set(EXTRA_SIDES)
        if unknown or "floor" not in sides:
            parser.error(f"--sides: unknown {sorted(unknown)}, or no floor")
    stub, url = start_stub()
    runs: list[dict[str, Any]] = []
    try:
        for r in range(args.rounds):
            order = sides[r % len(sides) :] + sides[: r % len(sides)]
            for side in order:
                for n in (args.small, args.large):
                    figures = measure(side, url, n, args.concurrency, args.before, args.instructions)
                    runs.append({"round": r, "side": side, "n": n, **figures})
    finally:
        stub.kill()
        stub.wait()
    report(runs, args, sides)


def report(runs: list[dict[str, Any]], args: argparse.Namespace, sides: tuple[str, ...]) -> None:
    def run_of(r: int, side: str, n: int) -> dict[str, Any]:
        return next(x for x in runs if x["round"] == r and x["side"] == side and x["n"] == n)

    span = args.large - args.small
    key, scale, unit = ("instructions", 1e-3, "k instr") if args.instructions else ("cpu_s", 1e3, "CPU ms")

    def marginal(r: int, side: str) -> float:
        return float(scale * (run_of(r, side, args.large)[key] - run_of(r, side, args.small)[key]) / span)

    rows: dict[str, dict[str, float]] = {}
    for side in sides:
        per_round = [marginal(r, side) for r in range(args.rounds)]
        large = [run_of(r, side, args.large) for r in range(args.rounds)]
        rows[side] = {
            "marginal": statistics.median(per_round),
            "at_large": statistics.median(scale * x[key] / args.large for x in large),
            "rollouts_per_s": statistics.median(args.large / x["wall_s"] for x in large),
            "marginal_min": min(per_round),
            "marginal_max": max(per_round),
        }
    print(
        f"single-turn rollouts, concurrency {args.concurrency}, {args.rounds} rounds of {args.small} and "
        f"{args.large} (medians; load average {os.getloadavg()[0]:.1f} at the end)"
    )
    head = f"marginal {unit}"
    print(f"{'side':<24}{head:>20}{'(min-max)':>20}{unit + ' @large':>18}{'x floor':>9}{'rollouts/s':>12}")
    for side, row in rows.items():
        spread = f"{row['marginal_min']:.3f}-{row['marginal_max']:.3f}"
        print(
            f"{side:<24}{row['marginal']:>20.3f}{spread:>20}{row['at_large']:>18.3f}"
            f"{row['marginal'] / rows['floor']['marginal']:>9.2f}{row['rollouts_per_s']:>12.0f}"
        )
    for side in sides:
        if not side.startswith("verihub"):
            continue
        env_name = side.split("+")[1].removesuffix("@before")
        for base in ("floor", "floor-untimed", f"floor+{env_name}"):
            if base not in rows:
                continue
            ratios = [marginal(r, side) / marginal(r, base) for r in range(args.rounds)]
            print(
                f"{side} / {base}: {rows[side]['marginal'] / rows[base]['marginal']:.2f} (ratio of medians), "
                f"{statistics.median(ratios):.2f} (median of per-round ratios)"
            )
    if args.json:
        args.json.write_text(json.dumps({"runs": runs, "medians": rows}, indent=2))


if __name__ == "__main__":
    main()
