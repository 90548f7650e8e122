"""Benchmark of the proof checkers.

Coq: checks per second and latency on the coq_core reference proofs (real ``coqc``), for the
first pass over the tasks (cold: fresh temp dirs, .vo files read from disk) and later passes
(warm: OS caches hot), sequentially and with concurrency; and the ``coqchk`` re-check's share,
paired with and without it. Lean: the overhead of verihub's REPL
protocol layer (framing, JSON, verdicts), measured on the recorded real REPL transcripts served
by the replay stand-in; it is an upper bound that includes the stand-in's own process and I/O.

Usage: ``python bench/bench_proof.py [--passes 3] [--concurrency 2] [--json out.json]``
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "environments" / "coq_core"))
sys.path.insert(0, str(ROOT / "tests" / "graders"))

from graders.proof import CoqChecker, ProofPolicy, ReplProcess  # noqa: E402
from graders.proof.lean_verdict import judge_lean  # noqa: E402

DATA = ROOT.parent / "shared" / "data" / "lean_repl"
REPLAY = ROOT / "tests" / "graders" / "lean_replay.py"


def _stats(samples: list[float]) -> dict[str, float]:
    ordered = sorted(samples)
    return {
        "n": len(samples),
        "p50_ms": 1000 * statistics.median(ordered),
        "p95_ms": 1000 * ordered[min(len(ordered) - 1, int(0.95 * len(ordered)))],
        "mean_ms": 1000 * statistics.fmean(ordered),
    }


async def bench_coq(passes: int, concurrency: int) -> dict[str, Any]:
    from verihub_coq_core import THEOREMS

    checker = CoqChecker(policy=ProofPolicy(timeout_s=60), max_concurrency=concurrency)

    async def one(th: Any) -> float:
        v = await checker.check(th.statement, th.proof, imports=th.imports)
        if not v.proved:
            raise RuntimeError(f"{th.id}: {v.reason}")
        return v.elapsed_s  # from a free slot to the verdict (excludes queueing)

    out: dict[str, Any] = {}
    t0 = time.perf_counter()
    cold = [await one(th) for th in THEOREMS]
    out["first_pass_wall_s"] = time.perf_counter() - t0
    out["cold_sequential"] = _stats(cold) | {"checks_per_s": len(cold) / sum(cold)}
    warm = [await one(th) for _ in range(passes) for th in THEOREMS]
    out["warm_sequential"] = _stats(warm) | {"checks_per_s": len(warm) / sum(warm)}
    start = time.perf_counter()
    lat = await asyncio.gather(*[one(th) for _ in range(passes) for th in THEOREMS])
    wall = time.perf_counter() - start
    out[f"warm_concurrency_{concurrency}"] = _stats(list(lat)) | {"checks_per_s": len(lat) / wall}
    return out


async def bench_coqchk_cost(passes: int) -> dict[str, Any]:
    """The ``coqchk`` re-check's cost, paired: each proof checked with and without it, the order
    alternating per pair, so load on the machine moves both sides alike. Medians of the per-pair
    difference and ratio."""
    from verihub_coq_core import THEOREMS

    with_chk = CoqChecker(policy=ProofPolicy(timeout_s=60))
    if with_chk.coqchk is None:
        return {"skipped": "coqchk not found beside coqc or on PATH"}
    without = CoqChecker(policy=ProofPolicy(timeout_s=60))
    without.coqchk = None

    async def timed(checker: CoqChecker, th: Any) -> float:
        v = await checker.check(th.statement, th.proof, imports=th.imports)
        if not v.proved:
            raise RuntimeError(f"{th.id}: {v.reason}")
        return v.elapsed_s

    diffs: list[float] = []
    ratios: list[float] = []
    for i, th in enumerate(th for _ in range(passes) for th in THEOREMS):
        first, second = (with_chk, without) if i % 2 == 0 else (without, with_chk)
        a = await timed(first, th)
        b = await timed(second, th)
        w, wo = (a, b) if first is with_chk else (b, a)
        diffs.append(w - wo)
        ratios.append(w / wo)
    return {
        "pairs": len(diffs),
        "median_added_ms": 1000 * statistics.median(diffs),
        "median_ratio": statistics.median(ratios),
    }


def _chunks(path: Path) -> list[dict[str, Any]]:
    import re

    return [json.loads(c) for c in re.split(r"\n\s*\n", path.read_text(encoding="utf-8")) if c.strip()]


async def bench_lean_protocol() -> dict[str, Any]:
    if not DATA.is_dir():
        return {"skipped": f"no recorded transcripts at {DATA}"}
    names = []
    for p in sorted(DATA.glob("*.expected.out")):
        name = p.name[: -len(".expected.out")]
        try:
            if len(_chunks(DATA / f"{name}.in")) == len(_chunks(p)):
                names.append(name)
        except json.JSONDecodeError:
            continue
    round_trips: list[float] = []
    spawns: list[float] = []
    answers: list[dict[str, Any]] = []
    for name in names:
        t0 = time.perf_counter()
        proc = await ReplProcess.spawn([sys.executable, str(REPLAY), "--dir", str(DATA), name])
        first = True
        try:
            for cmd in _chunks(DATA / f"{name}.in"):
                t = time.perf_counter()
                answers.append(await proc.send(cmd, timeout=10))
                if first:
                    spawns.append(time.perf_counter() - t0)
                    first = False
                else:
                    round_trips.append(time.perf_counter() - t)
        finally:
            proc.kill()
            await proc.wait()
    allowed = frozenset({"propext", "Classical.choice", "Quot.sound"})
    t = time.perf_counter()
    reps = 200
    for _ in range(reps):
        for a in answers:
            judge_lean(a, name="f", allowed_axioms=allowed, skip_axioms=True)
    judge_us = 1e6 * (time.perf_counter() - t) / (reps * len(answers))
    return {
        "transcripts": len(names),
        "answers": len(answers),
        "round_trip_warm": _stats(round_trips),
        "first_answer_incl_process_start": _stats(spawns),
        "verdict_from_answer_us": judge_us,
    }


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--passes", type=int, default=3)
    parser.add_argument("--concurrency", type=int, default=2)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    import os

    result: dict[str, Any] = {"load_average_at_start": os.getloadavg(), "cpus": os.cpu_count()}
    result["coq"] = await bench_coq(args.passes, args.concurrency)
    result["coqchk_cost"] = await bench_coqchk_cost(args.passes)
    result["lean_protocol"] = await bench_lean_protocol()
    print(json.dumps(result, indent=2))
    if args.json:
        args.json.write_text(json.dumps(result, indent=2), encoding="utf-8")


if __name__ == "__main__":
    asyncio.run(main())
