"""Wall time of ``verihub check`` on a package folder (median of N runs).

::

    python bench/bench_check_time.py environments/arith --scaffold --rounds 3

``--scaffold`` also checks a fresh ``verihub init`` package (made in a temporary folder). Each
check runs as its own ``python -m hub check`` process with the current ``PYTHONPATH``, so the
same script measures any checkout (point ``PYTHONPATH`` at it). ``--baseline DIR`` also times
the checkout in DIR (e.g. ``git worktree``/``git archive`` of an older commit), alternating with
the current one in every round, and prints the ratio of the medians. Prints one JSON object.

    python bench/bench_check_time.py environments/arith --scaffold --rounds 3 --baseline /tmp/before
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def _time_check(target: Path, extra: list[str], code: str | None = None) -> tuple[float, int]:
    env = dict(os.environ)
    if code is not None:
        env["PYTHONPATH"] = code
    t0 = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-m", "hub", "check", str(target), *extra],
        capture_output=True,
        text=True,
        check=False,
        env=env,
        cwd=code,
    )
    return time.perf_counter() - t0, proc.returncode


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("targets", nargs="*", type=Path)
    parser.add_argument("--scaffold", action="store_true", help="also check a fresh `verihub init` package")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--check-arg", action="append", default=[], help="extra argument for `verihub check`")
    parser.add_argument("--baseline", help="another checkout to time alternately (its PYTHONPATH)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-check-") as tmp:
        targets = list(args.targets)
        if args.scaffold:
            dest = Path(tmp) / "scaffolded"
            subprocess.run(
                [sys.executable, "-m", "hub", "init", "scaffolded", "--path", str(dest)],
                check=True,
                capture_output=True,
            )
            targets.append(dest)
        out: dict[str, object] = {"pythonpath": os.environ.get("PYTHONPATH", "")}
        codes = {"current": os.environ.get("PYTHONPATH") or os.getcwd()}
        if args.baseline:
            codes["baseline"] = args.baseline
        for target in targets:
            walls: dict[str, list[float]] = {k: [] for k in codes}
            exits: dict[str, list[int]] = {k: [] for k in codes}
            for _ in range(args.rounds):
                for name, code in codes.items():
                    # a relative target is that checkout's own copy (its imports match its code)
                    where = Path(code) / target if not target.is_absolute() else target
                    wall, rc = _time_check(where.resolve(), args.check_arg, code)
                    walls[name].append(round(wall, 2))
                    exits[name].append(rc)
            row: dict[str, object] = {
                k: {"median_s": round(statistics.median(v), 2), "runs_s": v, "exit_codes": exits[k]}
                for k, v in walls.items()
            }
            if args.baseline:
                row["ratio_current_over_baseline"] = round(
                    statistics.median(walls["current"]) / statistics.median(walls["baseline"]), 2
                )
            out[target.name] = row
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
