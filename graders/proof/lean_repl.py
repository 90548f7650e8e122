"""The Lean REPL (``leanprover-community/repl``) as a pool of warm processes.

Protocol: JSON commands on stdin separated by blank lines; each answer is one JSON object on
stdout followed by a blank line. A worker pays its import header (``import Mathlib``: seconds
and gigabytes) once when it starts; every check then runs as a command on top of the header's
environment id, so checks never see each other's declarations.

Limits: Lean's ``maxHeartbeats`` is set once per worker (a deterministic budget), and every
command has a wall-clock limit enforced from the parent: on expiry the worker's whole process
group is killed and the pool starts a fresh one on demand. ``RLIMIT_AS`` caps each worker's
memory. A worker is recycled after ``max_uses`` checks, since the REPL keeps every environment.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import os
import shutil
import tempfile
from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

from graders.deadline import within
from graders.proof.errors import WorkerError

from ._process import kill_group, limits_preexec
from .confine import confined

__all__ = ["ReplPool", "ReplPoolConfig", "ReplProcess"]

_ids = itertools.count(1)


class ReplProcess:
    """One REPL process speaking JSON over stdin/stdout."""

    def __init__(
        self, proc: asyncio.subprocess.Process, header: tuple[str, ...], scratch: str | None = None
    ) -> None:
        self._proc = proc
        self._scratch = scratch
        self.header = header
        self.base_env: int | None = None
        self.uses = 0
        self.id = next(_ids)

    @classmethod
    async def spawn(
        cls,
        argv: Sequence[str],
        *,
        header: tuple[str, ...] = (),
        cwd: str | None = None,
        memory_bytes: int | None = None,
    ) -> ReplProcess:
        if not argv or shutil.which(argv[0]) is None:  # under bwrap a missing binary looks like an exit
            raise WorkerError(
                f"cannot start the Lean REPL {list(argv)}: {argv[0] if argv else ''!r} not found"
            )
        # confined: the REPL may write only to a scratch directory of its own (removed with it)
        scratch = tempfile.mkdtemp(prefix="verihub-lean-repl-")
        command, _ = confined(argv, scratch, cwd=cwd or os.getcwd())
        try:
            proc = await asyncio.create_subprocess_exec(
                *command,
                cwd=cwd,
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.DEVNULL,
                start_new_session=True,
                limit=64 * 1024 * 1024,
                preexec_fn=limits_preexec(memory_bytes, None),
            )
        except OSError as exc:
            shutil.rmtree(scratch, ignore_errors=True)
            raise WorkerError(f"cannot start the Lean REPL {list(argv)}: {exc}") from exc
        return cls(proc, header, scratch)

    @property
    def alive(self) -> bool:
        return self._proc.returncode is None

    def kill(self) -> None:
        kill_group(self._proc)

    async def wait(self) -> None:
        await self._proc.wait()
        if self._scratch is not None:
            shutil.rmtree(self._scratch, ignore_errors=True)
            self._scratch = None

    async def send(self, request: Mapping[str, Any], *, timeout: float) -> dict[str, Any]:
        """Send one command and read its answer; kills the process on timeout (then re-raises)."""
        try:
            return await within(self._exchange(request), timeout)
        except BaseException:
            self.kill()
            raise

    async def _exchange(self, request: Mapping[str, Any]) -> dict[str, Any]:
        assert self._proc.stdin is not None and self._proc.stdout is not None
        self._proc.stdin.write((json.dumps(request, ensure_ascii=False) + "\n\n").encode())
        await self._proc.stdin.drain()
        lines: list[str] = []
        while True:
            raw = await self._proc.stdout.readline()
            if not raw:
                raise WorkerError("the Lean REPL exited" + (f": {''.join(lines)[:200]}" if lines else ""))
            line = raw.decode("utf-8", "replace")
            if line.strip() == "":
                if not lines:
                    continue
                try:
                    answer = json.loads("".join(lines))
                except json.JSONDecodeError:
                    continue  # a blank line inside a JSON string: keep reading
                if not isinstance(answer, dict):
                    raise WorkerError(f"the Lean REPL answered a non-object: {answer!r}"[:200])
                return answer
            lines.append(line)


@dataclass(frozen=True)
class ReplPoolConfig:
    """How to start and bound REPL workers.

    ``command``: the REPL binary and arguments, for example
    ``("lake", "env", "/opt/repl/.lake/build/bin/repl")`` run in ``cwd`` (a Lake project that
    has the imports, such as Mathlib). ``max_workers``: processes alive at once, over all
    headers. ``max_uses``: checks before a worker is recycled. ``start_timeout_s``: limit for
    importing the header. ``memory_mb``: ``RLIMIT_AS`` per worker (Mathlib maps many GB of .olean
    files, so keep this generous). ``max_heartbeats``: Lean's deterministic per-command budget.
    """

    command: tuple[str, ...]
    cwd: str | None = None
    max_workers: int = 2
    max_uses: int = 200
    start_timeout_s: float = 600.0
    memory_mb: int | None = 32768
    max_heartbeats: int | None = 200_000


class ReplPool:
    """Warm REPL workers keyed by import header; see the module docstring."""

    def __init__(self, config: ReplPoolConfig) -> None:
        self.config = config
        self._idle: dict[tuple[str, ...], list[ReplProcess]] = {}
        self._busy: set[ReplProcess | _Reservation] = set()
        self._cond = asyncio.Condition()
        self.started = 0

    def _count(self) -> int:
        return len(self._busy) + sum(len(v) for v in self._idle.values())

    async def _start(self, header: tuple[str, ...]) -> ReplProcess:
        cfg = self.config
        mem = None if cfg.memory_mb is None else cfg.memory_mb * 1024 * 1024
        worker = await ReplProcess.spawn(cfg.command, header=header, cwd=cfg.cwd, memory_bytes=mem)
        self.started += 1
        env: int | None = None
        try:
            if header:
                answer = await worker.send({"cmd": "\n".join(header)}, timeout=cfg.start_timeout_s)
                if "env" not in answer or any(
                    m.get("severity") == "error" for m in answer.get("messages") or ()
                ):
                    raise WorkerError(
                        f"the import header failed in the Lean REPL: {json.dumps(answer)[:300]}"
                    )
                env = int(answer["env"])
            if cfg.max_heartbeats is not None:
                req: dict[str, Any] = {"cmd": f"set_option maxHeartbeats {cfg.max_heartbeats}"}
                if env is not None:
                    req["env"] = env
                answer = await worker.send(req, timeout=cfg.start_timeout_s)
                if "env" not in answer:
                    raise WorkerError(f"setting maxHeartbeats failed: {json.dumps(answer)[:300]}")
                env = int(answer["env"])
        except (asyncio.TimeoutError, WorkerError) as exc:
            worker.kill()
            if isinstance(exc, WorkerError):
                raise
            raise WorkerError(f"importing {header} took longer than {cfg.start_timeout_s:g}s") from exc
        worker.base_env = env
        return worker

    async def acquire(self, header: tuple[str, ...], *, prefer: int | None = None) -> ReplProcess:
        """A worker for ``header`` (``prefer``: a worker id to reuse if it is idle and alive)."""
        async with self._cond:
            while True:
                idle = [w for w in self._idle.get(header, []) if w.alive]
                self._idle[header] = idle
                if idle:
                    chosen = next((w for w in idle if w.id == prefer), idle[-1])
                    idle.remove(chosen)
                    self._busy.add(chosen)
                    return chosen
                if self._count() < self.config.max_workers or self._evict_other(header):
                    placeholder = _Reservation()
                    self._busy.add(placeholder)
                    break
                await self._cond.wait()
        try:
            worker = await self._start(header)
        except BaseException:
            async with self._cond:
                self._busy.discard(placeholder)
                self._cond.notify_all()
            raise
        async with self._cond:
            self._busy.discard(placeholder)
            self._busy.add(worker)
        return worker

    def _evict_other(self, header: tuple[str, ...]) -> bool:
        for key, workers in self._idle.items():
            if key != header and workers:
                workers.pop().kill()
                return True
        return False

    async def release(self, worker: ReplProcess, *, broken: bool = False) -> None:
        """Return ``worker``; a broken, dead or worn-out one is killed (a fresh one starts on demand)."""
        worker.uses += 1
        async with self._cond:
            self._busy.discard(worker)
            if broken or not worker.alive or worker.uses >= self.config.max_uses:
                worker.kill()
            else:
                self._idle.setdefault(worker.header, []).append(worker)
            self._cond.notify_all()

    @asynccontextmanager
    async def lease(
        self, header: tuple[str, ...], *, prefer: int | None = None
    ) -> AsyncIterator[ReplProcess]:
        """``async with pool.lease(header) as worker``: released (or replaced if it broke) on exit."""
        worker = await self.acquire(header, prefer=prefer)
        broken = False
        try:
            yield worker
        except BaseException:
            broken = True
            raise
        finally:
            await self.release(worker, broken=broken or not worker.alive)

    async def aclose(self) -> None:
        """Kill every worker."""
        async with self._cond:
            workers = [w for ws in self._idle.values() for w in ws] + [
                w for w in self._busy if isinstance(w, ReplProcess)
            ]
            self._idle.clear()
        for w in workers:
            w.kill()
        for w in workers:
            await w.wait()


class _Reservation:
    """Holds a pool slot while a worker starts."""
