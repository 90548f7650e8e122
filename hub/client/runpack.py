"""The run archive a client sends (``verihub results push``): exactly ``config.json``,
``rollouts.jsonl`` and ``summary.json`` at the top of a gzipped tar, as regular files.

:func:`pack_run` writes one after :func:`check_run_dir` found the run complete and consistent (the
leaderboard's own verification, so a run the hub would refuse is refused before it is uploaded).
The server's side is :mod:`hub.server.results.runpack`.
"""

from __future__ import annotations

import tarfile
from pathlib import Path

from hub.env import UsageError
from hub.run import CONFIG_FILE, ROLLOUTS_FILE, SUMMARY_FILE, RunDir

__all__ = ["MAX_MEMBERS", "RUN_FILES", "check_run_dir", "pack_run"]

#: The files of a run that are sent, in archive order.
RUN_FILES = (CONFIG_FILE, ROLLOUTS_FILE, SUMMARY_FILE)

#: The most members an archive may have: the run files, each once (the exact-name rule is the cap).
MAX_MEMBERS = len(RUN_FILES)


def check_run_dir(run_dir: Path) -> None:
    """Raise :class:`UsageError` unless ``run_dir`` is a finished run the hub would accept.

    The checks are :func:`leaderboard.verify_run`'s (every rollout present once, each record
    consistent, ``summary.json`` equal to the one recomputed from the rollouts, the environment
    version and content hash named), so a refusal here is what the hub would answer.
    """
    from leaderboard import RunRejected, verify_run

    if not run_dir.is_dir():
        raise UsageError(f"{run_dir} is not a run directory")
    missing = [name for name in RUN_FILES if not (run_dir / name).is_file()]
    if missing:
        hint = (
            f"an unfinished run? finish it with `verihub eval --resume {run_dir}`"
            if (run_dir / CONFIG_FILE).is_file()
            else "a run directory is what `verihub eval --out DIR` writes"
        )
        raise UsageError(f"{run_dir} cannot be pushed: it has no {', '.join(missing)} ({hint})")
    holder = RunDir(run_dir).writer_holder()
    if holder is not None:
        raise UsageError(f"{run_dir} is being written by {holder.describe()}; push it once that run ends")
    try:
        verify_run(run_dir)
    except RunRejected as exc:
        raise UsageError(f"{run_dir} cannot be pushed: {'; '.join(exc.reasons)}") from None


def pack_run(run_dir: Path, out: Path) -> Path:
    """Write the run archive of ``run_dir`` to ``out`` (its three files only); returns ``out``."""
    for name in RUN_FILES:
        path = run_dir / name
        if path.is_symlink() or not path.is_file():
            raise UsageError(f"{path} is not a regular file; a run archive holds the run's files only")
    with tarfile.open(out, "w:gz") as tf:
        for name in RUN_FILES:
            info = tf.gettarinfo(str(run_dir / name), arcname=name)
            info.uid = info.gid = 0
            info.uname = info.gname = ""
            info.mode = 0o644
            with (run_dir / name).open("rb") as fh:
                tf.addfile(info, fh)
    return out
