"""Trainers and other libraries: RL rewards, dataset exports, adapters for other frameworks.

Reading guide:

- :func:`reward_function`, :func:`to_dataset` (:mod:`hub.train.rewards`): an environment as a TRL
  reward and a training dataset.
- :mod:`hub.train.curriculum`: :class:`Curriculum`, an online curriculum over an environment's
  difficulty space; :mod:`hub.train.curriculum_dataset`: a training dataset it fills as it
  learns; :mod:`hub.train.curriculum_checkpoint`: saving it with a trainer's checkpoints;
  :mod:`hub.train.curriculum_eval`: ``verihub eval --curriculum``; :mod:`hub.train.v1_curriculum`:
  an infinite verifiers v1 taskset drawn from a curriculum (imports ``verifiers.v1``).
- :mod:`hub.train.reasoning_gym`: reasoning-gym datasets as environments (entry point
  ``reasoning-gym``; imports ``reasoning_gym`` only when built).
- :mod:`hub.train.synth`: ``verihub synth``, model-proposed tasks kept only when checked;
  :mod:`hub.train.synth_templates`: the fields a generator fills (a JSON schema per
  environment's task form); :mod:`hub.train.synth_filters`: the checks.
- :mod:`hub.train.export`: SFT transcripts and DPO pairs from a run directory, with provenance;
  :mod:`hub.train.sft_filters`: keeping records by reward, label, correction and task pass rate.
- :mod:`hub.train.verifiers_adapter`: the ``verifiers`` library's classic API (0.3.x), both
  directions (it imports ``verifiers`` only when used); :mod:`hub.train.verifiers_env` is the
  module vf-eval 0.3.x imports to rebuild a verihub environment.
- :mod:`hub.train.verifiers_v1`: verifiers 0.4.x (v1) tasksets run in-process as verihub
  environments (entry point ``verifiers-v1``); :mod:`hub.train.v1_taskset`: verihub
  environments as v1 tasksets (imports ``verifiers.v1`` when imported; the top-level package
  ``verihub_v1`` re-exports it as vf-eval's taskset id ``verihub-v1``), a ``ToolEnv``'s tools
  served to the v1 harness by :mod:`hub.train.v1_toolset`.

Imports: :mod:`hub.env`, :mod:`hub.registry`, :mod:`hub.run` (and ``graders``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from hub._lazy import surface

if TYPE_CHECKING:
    from hub.train.curriculum import Curriculum, CurriculumConfig, has_signal
    from hub.train.curriculum_dataset import CurriculumDataset
    from hub.train.curriculum_eval import BatchRecord, evaluate_curriculum
    from hub.train.export import export_records, export_run
    from hub.train.rewards import EnvReward, reward_function, to_dataset
    from hub.train.sft_filters import SftFilter, apply_filters, parse_band
    from hub.train.synth import SynthConfig, synthesize

__all__ = [
    "BatchRecord",
    "Curriculum",
    "CurriculumConfig",
    "CurriculumDataset",
    "EnvReward",
    "SftFilter",
    "SynthConfig",
    "apply_filters",
    "evaluate_curriculum",
    "export_records",
    "export_run",
    "has_signal",
    "parse_band",
    "reward_function",
    "synthesize",
    "to_dataset",
]

__getattr__, __dir__ = surface(
    __name__,
    {
        "BatchRecord": "hub.train.curriculum_eval",
        "Curriculum": "hub.train.curriculum",
        "CurriculumConfig": "hub.train.curriculum",
        "CurriculumDataset": "hub.train.curriculum_dataset",
        "EnvReward": "hub.train.rewards",
        "SftFilter": "hub.train.sft_filters",
        "SynthConfig": "hub.train.synth",
        "apply_filters": "hub.train.sft_filters",
        "evaluate_curriculum": "hub.train.curriculum_eval",
        "export_records": "hub.train.export",
        "export_run": "hub.train.export",
        "has_signal": "hub.train.curriculum",
        "parse_band": "hub.train.sft_filters",
        "reward_function": "hub.train.rewards",
        "synthesize": "hub.train.synth",
        "to_dataset": "hub.train.rewards",
    },
)
