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

from hub.review.calibrate import (
    LEARNABLE_BAND,
    Calibration,
    TaskCalibration,
    calibration_from_summary,
    check_band,
    in_band,
    learnable_rows,
)

__all__ = [
    "LEARNABLE_BAND",
    "Calibration",
    "TaskCalibration",
    "calibration_from_summary",
    "check_band",
    "in_band",
    "learnable_rows",
]
