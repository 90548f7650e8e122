"""Choosing a checker by configuration: :func:`make_checker`.

Lean backends, in the order ``backend="auto"`` tries them: a Kimina server (``server_url`` or
``$VERIHUB_KIMINA_URL``), a REPL pool (``repl_command`` or ``$VERIHUB_LEAN_REPL``, run in
``project`` or ``$VERIHUB_LEAN_PROJECT``), then a one-shot ``lean`` (``lake env lean`` inside a
project) found on PATH. With none of them, :class:`~graders.proof.errors.LeanNotFoundError`
says how to install Lean with elan.
"""

from __future__ import annotations

import os
import shlex
import shutil
from dataclasses import dataclass
from typing import Literal

from graders.proof.checker import ProofChecker
from graders.proof.coq import CoqChecker
from graders.proof.errors import LeanNotFoundError
from graders.proof.kimina import KiminaChecker
from graders.proof.lean import LeanFileChecker, LeanReplChecker
from graders.proof.lean_repl import ReplPoolConfig
from graders.proof.policy import ProofPolicy

__all__ = ["CheckerConfig", "make_checker"]


@dataclass(frozen=True)
class CheckerConfig:
    """Which proof checker to build.

    ``language``: ``"coq"`` or ``"lean"``. ``backend``: for Lean, ``"auto"``, ``"repl"``,
    ``"file"`` or ``"kimina"``. ``repl_command``: the REPL binary (and arguments).
    ``project``: a Lake project directory (for Mathlib). ``server_url``: a Kimina server.
    ``max_workers``: REPL workers, or concurrent ``coqc``/``lean`` processes.
    """

    language: Literal["coq", "lean"] = "coq"
    backend: Literal["auto", "repl", "file", "kimina"] = "auto"
    repl_command: tuple[str, ...] | None = None
    project: str | None = None
    server_url: str | None = None
    coqc: str | None = None
    max_workers: int = 2
    policy: ProofPolicy | None = None


def make_checker(config: CheckerConfig | None = None) -> ProofChecker:
    """Build the checker ``config`` asks for (see the module docstring for the Lean order)."""
    cfg = config or CheckerConfig()
    policy = cfg.policy or ProofPolicy()
    if cfg.language == "coq":
        return CoqChecker(coqc=cfg.coqc, policy=policy, max_concurrency=cfg.max_workers)
    server = cfg.server_url or os.environ.get("VERIHUB_KIMINA_URL")
    repl = cfg.repl_command or tuple(shlex.split(os.environ.get("VERIHUB_LEAN_REPL", "")))
    project = cfg.project or os.environ.get("VERIHUB_LEAN_PROJECT")
    backend = cfg.backend
    if backend == "auto":
        backend = "kimina" if server else "repl" if repl else "file"
    if backend == "kimina":
        if not server:
            raise LeanNotFoundError("no Kimina server URL (set `server_url` or $VERIHUB_KIMINA_URL);")
        return KiminaChecker(server, policy=policy)
    if backend == "repl":
        if not repl or shutil.which(repl[0]) is None and not os.path.exists(repl[0]):
            raise LeanNotFoundError(f"the Lean REPL binary ({repl[0] if repl else 'unset'})")
        pool = ReplPoolConfig(
            command=repl, cwd=project, max_workers=cfg.max_workers, max_heartbeats=policy.max_heartbeats
        )
        return LeanReplChecker(pool, policy=policy)
    return LeanFileChecker(project=project, policy=policy, max_concurrency=cfg.max_workers)
