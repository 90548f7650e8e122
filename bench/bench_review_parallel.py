"""Reviews of arith run in parallel: do they still pass when there are more workers than cores?

Builds (or takes) an arith submission bundle, packs it as a push would, then starts ``--workers``
review children at once (``python -m hub.server.reviews.review_child ARCHIVE OUT``, what each hub
worker runs per job, at the default check sizes) and reports each one's verdict and wall time,
with the host calibration's time scale (``--time-scale auto``) or a given one.

    python bench/bench_review_parallel.py --workers 4
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

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--bundle", type=Path, help="An arith submission bundle (default: build one).")
    ap.add_argument("--workers", type=int, default=4)
    ap.add_argument("--time-scale", default="auto", help="'auto' (calibrate here) or a number.")
    args = ap.parse_args()
    from bench_index import build_bundle

    from hub.client.api import pack_bundle
    from hub.server.reviews.hostspeed import calibrate

    scale = calibrate().scale if args.time_scale == "auto" else float(args.time_scale)
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    with tempfile.TemporaryDirectory(prefix="bench-review-") as tmp_s:
        tmp = Path(tmp_s)
        bundle = args.bundle or build_bundle(tmp / "bundle")
        archive = pack_bundle(bundle, tmp / "arith.tar.gz")
        started = time.monotonic()
        procs = []
        for i in range(args.workers):
            out = tmp / f"report-{i}.json"
            cmd = [sys.executable, "-m", "hub.server.reviews.review_child", str(archive), str(out)]
            if scale != 1.0:
                cmd += ["--time-scale", str(scale)]
            procs.append((out, time.monotonic(), subprocess.Popen(cmd, env=env)))
        rows = []
        for out, t0, proc in procs:
            proc.wait(timeout=1800)
            report = json.loads(out.read_text(encoding="utf-8")) if out.is_file() else {}
            rows.append((bool(report.get("passed")), time.monotonic() - t0, report.get("problems") or []))
        total = time.monotonic() - started
    print(f"{args.workers} reviews of arith at once on {os.cpu_count()} cores, time limits x{scale:.2f}")
    for i, (passed, wall, problems) in enumerate(rows):
        verdict = "passed" if passed else f"FAILED {problems[:2]}"
        print(f"  review {i}: {verdict} in {wall:.1f} s")
    walls = [w for _, w, _ in rows]
    ok = all(p for p, _, _ in rows)
    print(f"all passed: {ok}; median {statistics.median(walls):.1f} s, all done in {total:.1f} s")


if __name__ == "__main__":
    main()
