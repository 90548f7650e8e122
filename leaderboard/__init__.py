"""verihub leaderboard: verified runs aggregated into tables and a static site.

Reading guide: :func:`verify_run` decides whether a run directory may enter a board (its summary
is recomputed from the rollouts); :class:`Board` stores accepted runs (:class:`BoardEntry`, made by
:func:`entry_from_run`) with their provenance; :func:`aggregate` groups entries into per-build
columns of one settings each and marks stale ones; :func:`rankings`/:func:`rank` order runs (ties,
merged identical runs, filters, the infrastructure-error flag); :func:`cross_environment` places
each model in every environment's main ranking; :func:`eval_card` is the card of
one environment version; :mod:`leaderboard.render` turns cards and rankings into HTML fragments
and :func:`render_environment` an environment's rankings with plots (the hub server uses them);
:func:`build_site` writes the static pages.
"""

from leaderboard.aggregate import Column, EnvironmentBoard, aggregate, stale_reason
from leaderboard.board import Board, BoardError, BoardIndex
from leaderboard.card import EvalCard, ModelResult, band_export, board_card, eval_card
from leaderboard.cross import CrossTable, cross_environment, render_cross
from leaderboard.entry import BoardEntry, TokenPrices, clean_label, entry_from_run
from leaderboard.env_view import render_environment
from leaderboard.infra import DEFAULT_INFRA_THRESHOLD, InfraCheck, infra_check
from leaderboard.ranking import MixedSettingsError, RankedRow, Ranking, RunFilter, rank, rankings
from leaderboard.render import FRAGMENT_CSS, RowOrder, render_card, render_ranking
from leaderboard.settings import sampling_items
from leaderboard.site import build_site
from leaderboard.stats import bootstrap_ci
from leaderboard.verify import RunRejected, VerifiedRun, verify_run

__all__ = [
    "sampling_items",
    "clean_label",
    "stale_reason",
    "DEFAULT_INFRA_THRESHOLD",
    "FRAGMENT_CSS",
    "Board",
    "BoardEntry",
    "BoardError",
    "BoardIndex",
    "Column",
    "CrossTable",
    "EnvironmentBoard",
    "EvalCard",
    "InfraCheck",
    "MixedSettingsError",
    "ModelResult",
    "RankedRow",
    "Ranking",
    "RunFilter",
    "RowOrder",
    "RunRejected",
    "TokenPrices",
    "VerifiedRun",
    "aggregate",
    "band_export",
    "board_card",
    "bootstrap_ci",
    "build_site",
    "cross_environment",
    "entry_from_run",
    "eval_card",
    "infra_check",
    "rank",
    "rankings",
    "render_card",
    "render_cross",
    "render_environment",
    "render_ranking",
    "verify_run",
]
