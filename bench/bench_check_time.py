"""Wall time of ``verihub check`` on a package folder (median of N runs).

::

    python bench/bench_check_time.py environments/arith --scaffold --rounds 3

``--scaffold`` also checks a fresh ``verihub init`` package (made in a temporary folder). Each
check runs as its own ``python -m hub check`` process with the current ``PYTHONPATH``, so the
same script measures any checkout (point ``PYTHONPATH`` at it). Prints one JSON object.
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


def _time_check(target: Path, extra: list[str]) -> tuple[float, int]:
    t0 = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-m", "hub", "check", str(target), *extra],
        capture_output=True,
        text=True,
        check=False,
    )
    return time.perf_counter() - t0, proc.returncode


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("targets", nargs="*", type=Path)
    parser.add_argument("--scaffold", action="store_true", help="also check a fresh `verihub init` package")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--check-arg", action="append", default=[], help="extra argument for `verihub check`")
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
        for target in targets:
            walls, codes = [], []
            for _ in range(args.rounds):
                wall, code = _time_check(target, args.check_arg)
                walls.append(wall)
                codes.append(code)
            out[target.name] = {
                "median_s": round(statistics.median(walls), 2),
                "runs_s": [round(w, 2) for w in walls],
                "exit_codes": codes,
            }
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
