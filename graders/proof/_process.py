"""Run a checker process with a hard wall-clock kill from the parent and a memory cap.

The limit is enforced from the parent (:func:`graders.deadline.within` then SIGKILL to the whole process
group), never with an alarm signal. The memory cap is ``RLIMIT_AS`` set in the child before
``exec``; ``RLIMIT_CPU`` is a second backstop. With ``writable`` the process runs confined by
bubblewrap, that directory its only writable place (:mod:`graders.proof.confine`).
"""

from __future__ import annotations

import asyncio
import os
import resource
import signal
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from graders.deadline import within
from graders.proof.confine import confined

__all__ = ["ProcessResult", "kill_group", "limits_preexec", "run_limited"]


@dataclass(frozen=True)
class ProcessResult:
    returncode: int | None
    stdout: str
    stderr: str
    timed_out: bool
    elapsed_s: float
    note: str | None = None
    """Set when the process could not be confined (see :mod:`graders.proof.confine`)."""


def limits_preexec(memory_bytes: int | None, cpu_seconds: int | None) -> Callable[[], None]:
    """A ``preexec_fn`` that caps address space and CPU time in the child."""

    def _apply() -> None:
        if memory_bytes is not None:
            resource.setrlimit(resource.RLIMIT_AS, (memory_bytes, memory_bytes))
        if cpu_seconds is not None:
            resource.setrlimit(resource.RLIMIT_CPU, (cpu_seconds, cpu_seconds + 1))

    return _apply


def kill_group(proc: asyncio.subprocess.Process) -> None:
    """SIGKILL the process and its group (it was started in its own session)."""
    if proc.returncode is not None:
        return
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        try:
            proc.kill()
        except ProcessLookupError:
            pass


async def run_limited(
    argv: Sequence[str],
    *,
    cwd: str,
    timeout_s: float,
    memory_bytes: int | None = None,
    max_output: int = 1_000_000,
    writable: str | None = None,
) -> ProcessResult:
    """Run ``argv`` to completion or kill it at ``timeout_s``; output is truncated to ``max_output``.

    ``writable``: run confined, with this directory the only one the process may write to."""
    note = None
    if writable is not None:
        argv, note = confined(argv, writable, cwd=cwd)
    loop = asyncio.get_running_loop()
    start = loop.time()
    proc = await asyncio.create_subprocess_exec(
        *argv,
        cwd=cwd,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        start_new_session=True,
        preexec_fn=limits_preexec(memory_bytes, int(timeout_s) + 2),
    )
    timed_out = False
    try:
        out, err = await within(proc.communicate(), timeout_s)
    except asyncio.TimeoutError:
        timed_out = True
        kill_group(proc)
        out, err = await proc.communicate()
    except BaseException:
        kill_group(proc)
        raise
    return ProcessResult(
        returncode=proc.returncode,
        stdout=out[:max_output].decode("utf-8", "replace"),
        stderr=err[:max_output].decode("utf-8", "replace"),
        timed_out=timed_out,
        elapsed_s=loop.time() - start,
        note=note,
    )
