"""Interoperability with other RL/eval libraries (each adapter imports its library lazily).

- :mod:`hub.interop.verifiers_adapter`: the ``verifiers`` library (pinned ``verifiers==0.3.1``,
  its classic ``vf.SingleTurnEnv`` / ``vf.MultiTurnEnv`` / ``vf.Rubric`` API), both directions:
  :class:`~hub.interop.verifiers_adapter.VerifiersEnv` runs a verifiers environment in verihub's
  runner; :func:`~hub.interop.verifiers_adapter.to_verifiers` exposes a verihub environment to
  verifiers.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from hub.interop.verifiers_adapter import (
        SUPPORTED_VERIFIERS,
        VerifiersEnv,
        load_verifiers_env,
        to_verifiers,
    )

__all__ = ["SUPPORTED_VERIFIERS", "VerifiersEnv", "load_verifiers_env", "to_verifiers"]


def __getattr__(name: str) -> Any:
    if name in __all__:
        from hub.interop import verifiers_adapter

        return getattr(verifiers_adapter, name)
    raise AttributeError(f"module 'hub.interop' has no attribute {name!r}")
