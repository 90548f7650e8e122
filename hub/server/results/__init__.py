"""Pushed runs: unpacking (:mod:`.runpack`), storing and visibility (:mod:`.runs`), their rollouts as
rows (:mod:`.rollout_store`) read a page at a time (:mod:`.rollout_query`), the results API
(:mod:`.api`), re-verification's queue and sandboxed child (:mod:`.reverify`, :mod:`.reverify_child`),
the environment tasks a run used (:mod:`.band_tasks`), the eval cards and leaderboards
(:mod:`.data`, :mod:`.pages`), the run, rollout and task pages (:mod:`.run_pages`,
:mod:`.transcript`), a run's rollouts read from its archive (:mod:`.rollout_archive`),
evaluations the hub runs itself (:mod:`.hub_evals` queued through :mod:`.hub_evals_api`, run by
:mod:`.hub_eval_child`), people's labels and corrected trajectories (:mod:`.labels`,
:mod:`.rollout_review`, :mod:`.corrections` graded by :mod:`.correction_child`, :mod:`.training`,
their API :mod:`.labels_api`, their page forms :mod:`.review_pages` with :mod:`.review_view`, and
:mod:`.label_views` for run pages and cards).

Imports: :mod:`hub.server.core`, :mod:`hub.server.accounts`, :mod:`hub.server.web`, :mod:`leaderboard`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from hub._lazy import surface

if TYPE_CHECKING:
    from hub.server.results.band_tasks import MAX_TASKS_BYTES, stored_tasks_sha
    from hub.server.results.rollout_store import backfill

__all__ = ["MAX_TASKS_BYTES", "backfill", "stored_tasks_sha"]
__getattr__, __dir__ = surface(
    __name__,
    {
        "MAX_TASKS_BYTES": "hub.server.results.band_tasks",
        "backfill": "hub.server.results.rollout_store",
        "stored_tasks_sha": "hub.server.results.band_tasks",
    },
)
