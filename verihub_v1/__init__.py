"""The verifiers v1 taskset id ``verihub-v1``: any installed verihub environment under ``vf-eval``.

verifiers 0.4's loader imports a taskset id as a top-level module (``verihub-v1`` ->
``verihub_v1``; a dotted id such as ``hub.train.v1_taskset`` is not found), so this one-line
package re-exports :class:`hub.train.v1_taskset.VerihubTaskset` and the ``Env`` that plays
multi-turn verihub environments, :class:`hub.train.v1_episode.VerihubEnv` (vf-eval runs a taskset
package's exported ``Env``)::

    vf-eval verihub-v1 --env.taskset.env arith --env.taskset.n 20 ...
"""

from hub.train.v1_episode import VerihubEnv
from hub.train.v1_taskset import VerihubTaskset

__all__ = ["VerihubEnv", "VerihubTaskset"]
