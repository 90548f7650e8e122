"""Saving a curriculum with a trainer's checkpoints, and restoring it on resume.

::

    cur = Curriculum(env.difficulty_space())
    trainer = GRPOTrainer(..., callbacks=[CurriculumCheckpoint(cur)])
    trainer.train(resume_from_checkpoint=ckpt)   # after: restore_curriculum(cur, ckpt) before train()

With a curriculum stream (``CurriculumDataset.to_iterable_dataset``) resume with
``ignore_data_skip=True``: the trainer would otherwise read and discard the rows it trained on
before, each one drawn from the restored curriculum.

:class:`CurriculumCheckpoint` is a ``transformers`` trainer callback (duck-typed: it answers every
``on_*`` event, so nothing is imported): on each save it writes ``curriculum.json`` (the
curriculum's :meth:`~hub.train.curriculum.Curriculum.state_dict`) into the checkpoint folder
the trainer just wrote, ``OUTPUT_DIR/checkpoint-STEP``. :func:`restore_curriculum` reads it back.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from hub.env import UsageError
from hub.train.curriculum import Curriculum

__all__ = ["STATE_FILE", "CurriculumCheckpoint", "restore_curriculum", "save_curriculum"]

STATE_FILE = "curriculum.json"


def save_curriculum(curriculum: Curriculum, folder: str | os.PathLike[str]) -> Path:
    """Write ``folder/curriculum.json`` (atomically: a crash leaves the old file or the new one)."""
    path = Path(folder) / STATE_FILE
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(curriculum.state_dict()) + "\n", encoding="utf-8")
    os.replace(tmp, path)
    return path


def restore_curriculum(curriculum: Curriculum, folder: str | os.PathLike[str]) -> None:
    """Load ``folder/curriculum.json`` into ``curriculum`` (built with the same space and rules)."""
    path = Path(folder) / STATE_FILE
    try:
        state = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise UsageError(
            f"{path} does not exist: the checkpoint was saved without CurriculumCheckpoint"
        ) from None
    except json.JSONDecodeError as exc:
        raise UsageError(f"{path} is not a saved curriculum: {exc}") from None
    curriculum.load_state_dict(state)


class CurriculumCheckpoint:
    """A trainer callback that saves ``curriculum`` into every checkpoint (see the module doc)."""

    def __init__(self, curriculum: Curriculum) -> None:
        self.curriculum = curriculum
        self.saved: list[Path] = []

    def on_save(self, args: Any, state: Any, control: Any, **kwargs: Any) -> Any:
        folder = Path(args.output_dir) / f"checkpoint-{state.global_step}"
        self.saved.append(save_curriculum(self.curriculum, folder))
        return control

    def __getattr__(self, name: str) -> Callable[..., Any]:
        if name.startswith("on_"):
            return lambda args, state, control, **kwargs: control
        raise AttributeError(name)
