"""Authoring environments and the automatic reviewer.

Reading guide:

- :mod:`hub.review.scaffold` (with the ``templates`` folder): ``verihub init``.
- :mod:`hub.review.check`: ``verihub check``, the sandboxed automatic reviewer (its own guide).
- :mod:`hub.review.submit`: writing submission bundles (``verihub submit``); :mod:`hub.review.verify`:
  re-verifying one (``verihub verify-submission``).
- :mod:`hub.review.calibrate`: per-task pass rates and the learnable band.
- :mod:`hub.review.fidelity`: a grader's measured error rates on labelled responses
  (``verihub fidelity``: accuracy, false-positive and false-negative rates with intervals).
- :mod:`hub.review.env_tests`, :mod:`hub.review.testing`: test kits for environment packages.

Imports: :mod:`hub.env`, :mod:`hub.registry`, :mod:`hub.run`, :mod:`hub.train` (and ``graders``).
The leaderboard's eval cards use the learnable band from here (one definition for both).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from hub._lazy import surface

if TYPE_CHECKING:
    from hub.review.calibrate import (
        LEARNABLE_BAND,
        TEST_SPLIT_WARNING,
        Calibration,
        TaskCalibration,
        calibration_from_summary,
        check_band,
        histogram_text,
        in_band,
        learnable_rows,
    )
    from hub.review.check import CheckOptions, Limits
    from hub.review.check.regrade import RegradeResult, grade_sandboxed, regrade_sandboxed, replay_sandboxed
    from hub.review.check.wheelenv import sandboxed_wheel
    from hub.review.fidelity import Rate, measure, rate, read_labels
    from hub.review.scaffold import KINDS
    from hub.review.submit import BUILD_LIMITS, MANIFEST, Manifest, file_sha256
    from hub.review.verify import verify_submission

__all__ = [
    "BUILD_LIMITS",
    "Calibration",
    "CheckOptions",
    "KINDS",
    "LEARNABLE_BAND",
    "Limits",
    "MANIFEST",
    "Manifest",
    "Rate",
    "RegradeResult",
    "TEST_SPLIT_WARNING",
    "TaskCalibration",
    "calibration_from_summary",
    "check_band",
    "file_sha256",
    "grade_sandboxed",
    "histogram_text",
    "in_band",
    "learnable_rows",
    "measure",
    "rate",
    "read_labels",
    "regrade_sandboxed",
    "replay_sandboxed",
    "sandboxed_wheel",
    "verify_submission",
]

__getattr__, __dir__ = surface(
    __name__,
    {
        "BUILD_LIMITS": "hub.review.submit",
        "Calibration": "hub.review.calibrate",
        "CheckOptions": "hub.review.check",
        "KINDS": "hub.review.scaffold",
        "LEARNABLE_BAND": "hub.review.calibrate",
        "Limits": "hub.review.check",
        "MANIFEST": "hub.review.submit",
        "Manifest": "hub.review.submit",
        "Rate": "hub.review.fidelity",
        "RegradeResult": "hub.review.check.regrade",
        "TEST_SPLIT_WARNING": "hub.review.calibrate",
        "TaskCalibration": "hub.review.calibrate",
        "calibration_from_summary": "hub.review.calibrate",
        "check_band": "hub.review.calibrate",
        "file_sha256": "hub.review.submit",
        "grade_sandboxed": "hub.review.check.regrade",
        "histogram_text": "hub.review.calibrate",
        "in_band": "hub.review.calibrate",
        "learnable_rows": "hub.review.calibrate",
        "measure": "hub.review.fidelity",
        "rate": "hub.review.fidelity",
        "read_labels": "hub.review.fidelity",
        "regrade_sandboxed": "hub.review.check.regrade",
        "replay_sandboxed": "hub.review.check.regrade",
        "sandboxed_wheel": "hub.review.check.wheelenv",
        "verify_submission": "hub.review.verify",
    },
)
