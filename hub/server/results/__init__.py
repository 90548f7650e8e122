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

__all__: list[str] = []
