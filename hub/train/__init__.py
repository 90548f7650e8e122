"""Trainers and other libraries: RL rewards, dataset exports, adapters for other frameworks.

Reading guide:

- :func:`reward_function`, :func:`to_dataset` (defined in :mod:`hub.env.rewards`, because an
  environment offers them as methods): an environment as a TRL reward and a training dataset.
- :mod:`hub.train.export`: SFT transcripts and DPO pairs from a run directory.
- :mod:`hub.train.verifiers_adapter`: the ``verifiers`` library, both directions (it imports
  ``verifiers`` only when used).

Imports: :mod:`hub.env`, :mod:`hub.registry`, :mod:`hub.run` (and ``graders``).
"""

from hub.env.rewards import EnvReward, reward_function, to_dataset

__all__ = ["EnvReward", "reward_function", "to_dataset"]
