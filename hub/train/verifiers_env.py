"""The module verifiers 0.3.x (classic API) imports to serve an installed verihub environment.

``vf-eval`` and verifiers' env-server workers find an environment by importing a module named
after its ``env_id`` and calling that module's ``load_environment(**env_args)`` (in 0.3.1:
``verifiers.legacy.utils.env_utils.load_environment``; the workers run in fresh ``spawn``
processes, so the environment must be rebuildable from its id and arguments alone). This is
that module for every verihub environment: the verihub id is an argument::

    vf-eval hub.train.verifiers_env -a '{"env": "arith", "n": 20}' -m MODEL -b URL -k KEY_VAR

:func:`hub.train.verifiers_adapter.to_verifiers` sets its environments' ``env_id`` to this
module and their ``env_args`` to the call's arguments, so the env server rebuilds the same one.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["load_environment"]


def load_environment(
    env: str,
    *,
    env_args: Mapping[str, Any] | None = None,
    split: str = "train",
    n: int | None = None,
    seed: int = 0,
    grade_timeout_s: float = 60.0,
    error_value: float = 0.0,
) -> Any:
    """The installed verihub environment ``env`` (built with ``env_args``) as a verifiers
    ``MultiTurnEnv``: its first ``n`` tasks of ``split`` (see ``to_verifiers``)."""
    from hub.train.verifiers_adapter import to_verifiers

    return to_verifiers(
        env,
        env_args=env_args,
        split=split,
        n=n,
        seed=seed,
        grade_timeout_s=grade_timeout_s,
        error_value=error_value,
    )
