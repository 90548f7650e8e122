"""Confinement of proof checkers: the whole file system read-only, one private writable directory.

A proof is code the checker runs. The screen (:mod:`graders.proof.screen`) refuses the commands
known to touch files; this module makes the class moot: ``coqc``, ``coqchk`` and Lean run under
bubblewrap with ``/`` read-only, the grading work directory the only writable place (``TMPDIR``
and ``HOME`` point there), every namespace unshared (no network), a new session and
``--die-with-parent``.

:func:`confined` wraps an argument vector when bubblewrap works here (probed once per process),
else returns it unchanged with a note that the grade's reason carries. ``VERIHUB_PROOF_CONFINE=0``
turns confinement off (where user namespaces are denied and the operator accepts the risk). This
module does not import ``hub``; ``hub.sandbox`` is the hub's own (wider) isolation.
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
from collections.abc import Sequence

__all__ = ["UNCONFINED_NOTE", "bwrap_available", "confined"]

UNCONFINED_NOTE = "ran unconfined: bubblewrap (bwrap) is not available, so the checker could write files"


@functools.cache
def _bwrap() -> str | None:
    """The ``bwrap`` binary when it is installed and can create its namespaces here."""
    if os.environ.get("VERIHUB_PROOF_CONFINE", "1") == "0":
        return None
    path = shutil.which("bwrap")
    if path is None:
        return None
    probe = [path, "--ro-bind", "/", "/", "--unshare-all", "--die-with-parent", "true"]
    try:
        ok = subprocess.run(probe, capture_output=True, timeout=3, check=False).returncode == 0
    except (OSError, subprocess.SubprocessError):
        ok = False
    return path if ok else None


def bwrap_available() -> bool:
    """Whether checkers run confined in this process."""
    return _bwrap() is not None


def confined(argv: Sequence[str], writable: str, *, cwd: str | None = None) -> tuple[list[str], str | None]:
    """``(argv to run, note)``: ``argv`` under bubblewrap with ``writable`` the only writable
    directory (``cwd``, default ``writable``, is the working directory inside), or ``argv``
    unchanged and :data:`UNCONFINED_NOTE` when bubblewrap is unavailable."""
    bwrap = _bwrap()
    if bwrap is None:
        return list(argv), UNCONFINED_NOTE
    where = os.path.realpath(writable)
    wrapped = [
        bwrap,
        "--ro-bind", "/", "/",
        "--dev", "/dev",
        "--proc", "/proc",
        "--bind", where, where,
        "--unshare-all",
        "--die-with-parent",
        "--new-session",
        "--setenv", "TMPDIR", where,
        "--setenv", "HOME", where,
        "--chdir", os.path.realpath(cwd) if cwd is not None else where,
        "--",
        *argv,
    ]  # fmt: skip
    return wrapped, None
