"""CPU per hostile math answer: what costly answers cost the math grader's worker.

Answers come from :func:`graders.attacks.costly.costly_answers` (nested special functions, power
towers, huge exponents, factorial/Gamma/binomial arguments, long sums, mixes), each boxed and
checked against a numeric, a symbolic and a radical reference. Every check runs in a worker
pool under the grader's timeout (5 s by default); the CPU time of the check is measured inside
the worker (``time.process_time``), and a check killed at the timeout counts as the timeout
(plus a worker respawn). Reported per class and overall: median, p99 and max CPU ms, how many
answers were refused by the cost screen (reason ``too_costly``) and how many timed out.

Run::

    python bench/bench_math_hostile.py                    # 20 answers per class
    python bench/bench_math_hostile.py --per-class 50 --json hostile.json
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

from graders.attacks.costly import COSTLY_CLASSES, costly_answers
from graders.math import MathOptions, MathVerdict, check_inline
from graders.math.parse import warm_up
from graders.pool import PoolConfig, PoolError, PoolTimeout, WorkerPool

REFERENCES = ("5", "x^{2}+1", "\\frac{\\sqrt{3}}{2}")


def cpu_check(response: str, reference: str) -> tuple[float, MathVerdict]:
    """``(CPU seconds, verdict)`` of one check, measured inside the worker."""
    start = time.process_time()
    verdict = check_inline(response, reference=reference, options=MathOptions())
    return time.process_time() - start, verdict


def _p(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * (len(ordered) - 1) + 0.5))]


def run(per_class: int, seed: int, timeout: float) -> dict[str, Any]:
    answers = costly_answers(per_class, seed=seed)
    per: dict[str, dict[str, Any]] = {
        name: {"cpu_ms": [], "too_costly": 0, "timeouts": 0, "other": 0} for name in COSTLY_CLASSES
    }
    fn = cpu_check if __name__ != "__main__" else _imported_cpu_check()
    with WorkerPool(PoolConfig(size=1, initializer=warm_up, memory_mb=2048)) as pool:
        pool.wait_ready()
        for i, (klass, answer) in enumerate(answers):
            row = per[klass]
            try:
                cpu, verdict = pool.submit(
                    fn, f"The answer is \\boxed{{{answer}}}.", REFERENCES[i % 3], timeout=timeout
                )
            except PoolTimeout:
                row["cpu_ms"].append(1000 * timeout)
                row["timeouts"] += 1
                continue
            except PoolError:
                row["cpu_ms"].append(1000 * timeout)
                row["other"] += 1
                continue
            row["cpu_ms"].append(1000 * cpu)
            row["too_costly"] += verdict.reason.startswith("too_costly:")
    every = [ms for row in per.values() for ms in row["cpu_ms"]]
    summary = {
        name: {
            "n": len(row["cpu_ms"]),
            "too_costly": row["too_costly"],
            "timeouts": row["timeouts"],
            "p50_ms": statistics.median(row["cpu_ms"]),
            "p99_ms": _p(row["cpu_ms"], 0.99),
            "max_ms": max(row["cpu_ms"]),
        }
        for name, row in per.items()
    }
    summary["all"] = {
        "n": len(every),
        "too_costly": sum(r["too_costly"] for r in per.values()),
        "timeouts": sum(r["timeouts"] for r in per.values()),
        "p50_ms": statistics.median(every),
        "p99_ms": _p(every, 0.99),
        "max_ms": max(every),
    }
    return summary


def _imported_cpu_check() -> Any:
    """The pool pickles functions by module path; run as a script, this module is ``__main__``
    (not importable in a worker), so use the copy importable from this file's folder."""
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import bench_math_hostile

    return bench_math_hostile.cpu_check


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--per-class", type=int, default=20, help="hostile answers per class")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--timeout", type=float, default=5.0, help="seconds per check (the grader's)")
    parser.add_argument("--json", type=Path, default=None, help="write the results as JSON")
    args = parser.parse_args(argv)
    summary = run(args.per_class, args.seed, args.timeout)
    print(f"hostile math answers, CPU per check in the worker (timeout {args.timeout:g}s counts as such)")
    for name, row in summary.items():
        print(
            f"  {name:20s} n={row['n']:4d}  too_costly={row['too_costly']:4d}  "
            f"timeouts={row['timeouts']:3d}  p50 {row['p50_ms']:8.2f} ms  "
            f"p99 {row['p99_ms']:8.2f} ms  max {row['max_ms']:8.2f} ms"
        )
    if args.json is not None:
        args.json.write_text(json.dumps(summary, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
