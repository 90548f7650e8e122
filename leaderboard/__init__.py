"""verihub leaderboard: verified runs aggregated into tables and a static site.

Reading guide: :func:`verify_run` decides whether a run directory may enter a board (its summary
is recomputed from the rollouts); :class:`Board` stores accepted runs with their provenance;
:func:`aggregate` groups entries into per-build (version, content hash) columns and marks stale ones;
:func:`build_site` writes the HTML pages with inline SVG plots.
"""

from leaderboard.aggregate import Column, EnvironmentBoard, aggregate
from leaderboard.board import Board, BoardEntry, BoardError, BoardIndex, TokenPrices
from leaderboard.site import build_site
from leaderboard.stats import bootstrap_ci
from leaderboard.verify import RunRejected, VerifiedRun, verify_run

__all__ = [
    "Board",
    "BoardEntry",
    "BoardError",
    "BoardIndex",
    "Column",
    "EnvironmentBoard",
    "RunRejected",
    "TokenPrices",
    "VerifiedRun",
    "aggregate",
    "bootstrap_ci",
    "build_site",
    "verify_run",
]
