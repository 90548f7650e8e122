"""Lean 4 checkers: over a warm REPL pool, or one-shot with ``lean`` / ``lake env lean``.

Both screen the model's text first (:mod:`graders.proof.screen`), then let Lean judge it with
the re-check of :mod:`graders.proof.lean_check`: the task's statement is elaborated before the
submission, the kernel must accept the proof at exactly that proposition, and ``#print axioms``
of the check theorem lists what the proof rests on. With the REPL, these are separate commands
on the environments the previous ones made (the policy's ``maxHeartbeats`` is set in the first,
per check), so nothing the proof prints can pose as their answers; in a file, answers must come
from the lines of the appended commands.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import tempfile
import time
from typing import Any

from graders.proof.errors import LeanNotFoundError, WorkerError
from graders.proof.lean_check import (
    FileLayout,
    judge_file_answer,
    judge_rechecked,
    lean_forall,
    plan_recheck,
)
from graders.proof.lean_repl import ReplPool, ReplPoolConfig
from graders.proof.lean_verdict import judge_lean
from graders.proof.policy import ProofPolicy
from graders.proof.screen import Prepared, parse_statement, prepare
from graders.proof.verdict import ProofVerdict

from ._process import run_limited
from .confine import UNCONFINED_NOTE, bwrap_available

__all__ = ["LeanFileChecker", "LeanReplChecker", "prepare_lean"]


def prepare_lean(
    statement: str, proof: str, imports: tuple[str, ...], policy: ProofPolicy
) -> Prepared | ProofVerdict:
    """Parse and screen; a verdict (error for a bad task, failed for a bad proof) or the source."""
    try:
        stmt = parse_statement(statement, "lean")
        lean_forall(stmt.signature)  # the re-check needs `: type`
    except ValueError as exc:
        return ProofVerdict.error(f"malformed task statement: {exc}")
    return prepare(stmt, proof, policy=policy, imports=imports)


def _stamp(v: ProofVerdict, backend: str, start: float) -> ProofVerdict:
    return ProofVerdict(
        status=v.status,
        reason=v.reason if bwrap_available() else f"{v.reason} ({UNCONFINED_NOTE})",
        messages=v.messages,
        goals=v.goals,
        axioms=v.axioms,
        elapsed_s=time.monotonic() - start,
        backend=backend,
    )


class LeanReplChecker:
    """Checks Lean proofs on a :class:`~graders.proof.lean_repl.ReplPool` of warm REPL workers."""

    language = "lean"

    def __init__(self, pool: ReplPool | ReplPoolConfig, *, policy: ProofPolicy | None = None) -> None:
        self.pool = pool if isinstance(pool, ReplPool) else ReplPool(pool)
        self.policy = policy or ProofPolicy()

    async def aclose(self) -> None:
        await self.pool.aclose()

    async def check(
        self,
        statement: str,
        proof: str,
        *,
        imports: tuple[str, ...] = (),
        timeout: float | None = None,
        policy: ProofPolicy | None = None,
    ) -> ProofVerdict:
        pol = policy or self.policy
        start = time.monotonic()
        prepared = prepare_lean(statement, proof, imports, pol)
        if isinstance(prepared, ProofVerdict):
            return _stamp(prepared, "lean-repl", start)
        limit = timeout or pol.timeout_s
        try:
            verdict = await self._run(prepared, tuple(imports), limit, pol)
        except asyncio.TimeoutError:
            verdict = ProofVerdict(
                status="timeout", reason=f"killed at the {limit:g}s wall-clock limit; worker replaced"
            )
        except WorkerError as exc:
            verdict = ProofVerdict.error(str(exc))
        return _stamp(verdict, "lean-repl", start)

    async def _run(
        self, prep: Prepared, header: tuple[str, ...], limit: float, pol: ProofPolicy
    ) -> ProofVerdict:
        deadline = time.monotonic() + limit
        plan = plan_recheck(prep.statement, max_heartbeats=pol.max_heartbeats)
        allowed = pol.axioms_for("lean")

        def left() -> float:
            return max(0.01, deadline - time.monotonic())

        async with self.pool.lease(header) as worker:
            request: dict[str, Any] = {"cmd": plan.prelude}
            if worker.base_env is not None:
                request["env"] = worker.base_env
            prelude = await worker.send(request, timeout=left())
            if "env" not in prelude:
                return judge_rechecked(
                    {}, {}, plan=plan, allowed_axioms=allowed, backend="lean-repl", prelude=prelude
                )
            answer = await worker.send({"cmd": prep.source, "env": prelude["env"]}, timeout=left())
            first = judge_lean(answer, name=plan.name, allowed_axioms=allowed, skip_axioms=True)
            if first.status != "proved" or "env" not in answer:
                return first
            check = await worker.send({"cmd": plan.check_command, "env": answer["env"]}, timeout=left())
        return judge_rechecked(
            answer, check, plan=plan, allowed_axioms=allowed, backend="lean-repl", prelude=prelude
        )


class LeanFileChecker:
    """One-shot check of a file with ``lean`` (or ``lake env lean`` inside ``project``)."""

    language = "lean"

    def __init__(
        self,
        *,
        lean: str | None = None,
        project: str | None = None,
        policy: ProofPolicy | None = None,
        max_concurrency: int | None = None,
    ) -> None:
        self.project = project
        if project is not None:
            lake = shutil.which("lake")
            if lake is None:
                raise LeanNotFoundError("`lake`")
            self.argv: tuple[str, ...] = (lake, "env", "lean")
        else:
            found = lean or shutil.which("lean")
            if found is None:
                raise LeanNotFoundError("`lean`")
            self.argv = (found,)
        self.policy = policy or ProofPolicy()
        self._sem = asyncio.Semaphore(max_concurrency or os.cpu_count() or 1)

    async def aclose(self) -> None:
        return None

    async def check(
        self,
        statement: str,
        proof: str,
        *,
        imports: tuple[str, ...] = (),
        timeout: float | None = None,
        policy: ProofPolicy | None = None,
    ) -> ProofVerdict:
        pol = policy or self.policy
        start = time.monotonic()
        prepared = prepare_lean(statement, proof, imports, pol)
        if isinstance(prepared, ProofVerdict):
            return _stamp(prepared, "lean-file", start)
        limit = timeout or pol.timeout_s
        plan = plan_recheck(prepared.statement, max_heartbeats=pol.max_heartbeats)
        layout = FileLayout.build(tuple(imports), prepared.source, plan)
        async with self._sem:
            with tempfile.TemporaryDirectory(prefix="verihub-lean-") as tmp:
                path = os.path.join(tmp, "Check.lean")
                with open(path, "w", encoding="utf-8") as fh:
                    fh.write(layout.text)
                res = await run_limited(
                    [*self.argv, "--json", path],
                    cwd=self.project or tmp,
                    timeout_s=limit,
                    memory_bytes=pol.memory_bytes("lean"),
                    writable=tmp,
                )
        if res.timed_out:
            return _stamp(
                ProofVerdict(status="timeout", reason=f"killed at the {limit:g}s wall-clock limit"),
                "lean-file",
                start,
            )
        answer = {"messages": _json_messages(res.stdout)}
        verdict = judge_file_answer(
            answer, layout, plan, allowed_axioms=pol.axioms_for("lean"), backend="lean-file"
        )
        return _stamp(verdict, "lean-file", start)


def _json_messages(stdout: str) -> list[dict[str, Any]]:
    """``lean --json`` prints one JSON message per line; convert to the REPL's message shape."""
    import json

    out: list[dict[str, Any]] = []
    for line in stdout.splitlines():
        line = line.strip()
        if not line.startswith("{"):
            continue
        try:
            m = json.loads(line)
        except json.JSONDecodeError:
            continue
        out.append(
            {"severity": m.get("severity", "error"), "pos": m.get("pos") or {}, "data": m.get("data", "")}
        )
    if not out and stdout.strip():
        out.append({"severity": "error", "pos": {}, "data": stdout.strip()[-2000:]})
    return out
