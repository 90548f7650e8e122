"""One review, run in its own process by a worker: ``python -m hub.server.reviews.review_child ARCHIVE OUT``.

The uploaded bundle is unpacked again (same caps as on push) and
:func:`hub.review.verify.verify_submission` re-verifies it in full: hashes, the recorded
evaluation, the sandboxed regrade of the recorded rollouts, and ``verihub check`` on the sdist
(which runs the environment's code in the check sandbox). The JSON report is written to OUT.
"""

from __future__ import annotations

import dataclasses
import json
import math
import sys
import tempfile
from pathlib import Path
from typing import Any

from hub.review import CheckOptions, verify_submission
from hub.server.core import Limits, unpack_upload

__all__ = ["FAST_CHECK", "run_review", "scaled"]

#: Smaller check sizes for ``--review-fast`` (tests, benchmarks); the real check otherwise.
FAST_CHECK = CheckOptions(num_tasks=10, gold_tasks=8, probe_tasks=2, grade_timeout_s=2.0)


def scaled(options: CheckOptions, factor: float) -> CheckOptions:
    """``options`` with every time limit (sandbox wall clock and CPU, each grade's timeout)
    multiplied by ``factor`` (a slow host's calibration, :mod:`hub.server.reviews.hostspeed`)."""
    if factor == 1.0:
        return options
    limits = dataclasses.replace(
        options.limits, wall_s=options.limits.wall_s * factor, cpu_s=math.ceil(options.limits.cpu_s * factor)
    )
    return dataclasses.replace(options, limits=limits, grade_timeout_s=options.grade_timeout_s * factor)


def run_review(archive: Path, *, fast: bool = False, time_scale: float = 1.0) -> dict[str, Any]:
    """Review the bundle archive; ``passed`` is True when it verifies and its check passes.
    ``time_scale`` multiplies the check's time limits (see :func:`scaled`)."""
    options = scaled(FAST_CHECK if fast else CheckOptions(), time_scale)
    with tempfile.TemporaryDirectory(prefix="verihub-review-") as tmp:
        root = unpack_upload(archive, Path(tmp) / "bundle", Limits())
        found = verify_submission(root, check_options=options)
    report = found.report
    return {
        "passed": found.ok,
        "problems": found.problems,
        "manifest_sha256": found.manifest_sha256,
        "check": report.model_dump(mode="json") if report is not None else None,
        "check_text": report.to_text() if report is not None else "",
        "fast": fast,
        "time_scale": time_scale,
    }


def main(argv: list[str]) -> int:
    archive, out = Path(argv[0]), Path(argv[1])
    try:
        rest = argv[2:]
        scale = float(rest[rest.index("--time-scale") + 1]) if "--time-scale" in rest else 1.0
        result = run_review(archive, fast="--fast" in rest, time_scale=scale)
    except Exception as exc:  # the report says what broke; the worker records it as failed
        result = {"passed": False, "problems": [f"the review crashed: {type(exc).__name__}: {exc}"]}
    out.write_text(json.dumps(result), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
