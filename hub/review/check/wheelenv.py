"""A reviewed wheel's environment, started in the sandbox for a caller that drives it.

The hub's own evaluations (:mod:`hub.server.results.hub_eval_child`) use it: the wheel is unpacked
and checked exactly as the review and the re-grade stage it (nothing of the package runs to stage
it), then its environment server starts in the bubblewrap sandbox; the caller's model client stays
outside and talks to it over the nonce-checked channel, as ``verihub eval --sandbox`` does.
"""

from __future__ import annotations

import contextlib
import shutil
import tempfile
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from hub.env import UsageError
from hub.review.check.report import CheckReport
from hub.review.check.runner import require_sandbox, stage_wheel
from hub.sandbox import (
    STAGE_PREFIX,
    Limits,
    RemoteEnvironment,
    RemoteError,
    SandboxDiedError,
    make_writable,
    start_environment,
)

__all__ = ["sandboxed_wheel"]


@contextlib.contextmanager
def sandboxed_wheel(
    wheel: Path, env_id: str, env_args: Mapping[str, Any] | None = None, *, limits: Limits | None = None
) -> Iterator[RemoteEnvironment]:
    """Unpack ``wheel`` (a ``*.whl`` file under its real name) and start ``env_id`` from it in the
    sandbox; raises :class:`~hub.env.errors.UsageError` saying why when it cannot."""
    require_sandbox(False)
    work = Path(tempfile.mkdtemp(prefix=STAGE_PREFIX))
    try:
        report = CheckReport(target=str(wheel))
        stage = stage_wheel(wheel.resolve(), work, report)
        if stage is None:
            problems = "; ".join(r.reason for r in report.results if r.status == "fail")
            raise UsageError(f"the wheel does not unpack: {problems or 'unknown reason'}")
        try:
            env = start_environment(stage, env_id, dict(env_args or {}), limits=limits)
        except (RemoteError, SandboxDiedError) as exc:
            raise UsageError(f"the environment does not load: {exc}") from None
        try:
            yield env
        finally:
            env.close()
    finally:
        make_writable(work)
        shutil.rmtree(work, ignore_errors=True)
