"""Pushed runs: unpacking (:mod:`.runpack`), storing and visibility (:mod:`.runs`), the results API
(:mod:`.api`), re-verification's queue and sandboxed child (:mod:`.reverify`, :mod:`.reverify_child`),
the environment tasks a run used (:mod:`.band_tasks`), and the eval cards and leaderboards
(:mod:`.data`, :mod:`.pages`).

Imports: :mod:`hub.server.core`, :mod:`hub.server.accounts`, :mod:`hub.server.web`, :mod:`leaderboard`.
"""

__all__: list[str] = []
