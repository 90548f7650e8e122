"""Lean 4 checkers: over a warm REPL pool, or one-shot with ``lean`` / ``lake env lean``.

Both screen the model's text first (:mod:`graders.proof.screen`), then let Lean judge it
(:func:`graders.proof.lean_verdict.judge_lean`). With the REPL, ``#print axioms`` runs as a
separate command on the environment the proof produced, so nothing the proof prints can pose
as its answer; in a file, the answer must come from the line of the appended command.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import tempfile
import time
from typing import Any

from graders.proof.errors import LeanNotFoundError, WorkerError
from graders.proof.lean_repl import ReplPool, ReplPoolConfig
from graders.proof.lean_verdict import judge_lean
from graders.proof.policy import ProofPolicy
from graders.proof.screen import Prepared, parse_statement, prepare
from graders.proof.verdict import ProofVerdict

from ._process import run_limited

__all__ = ["LeanFileChecker", "LeanReplChecker", "prepare_lean"]


def prepare_lean(
    statement: str, proof: str, imports: tuple[str, ...], policy: ProofPolicy
) -> Prepared | ProofVerdict:
    """Parse and screen; a verdict (error for a bad task, failed for a bad proof) or the source."""
    try:
        stmt = parse_statement(statement, "lean")
    except ValueError as exc:
        return ProofVerdict.error(f"malformed task statement: {exc}")
    return prepare(stmt, proof, policy=policy, imports=imports)


def _stamp(v: ProofVerdict, backend: str, start: float) -> ProofVerdict:
    return ProofVerdict(
        status=v.status,
        reason=v.reason,
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
        async with self.pool.lease(header) as worker:
            request: dict[str, Any] = {"cmd": prep.source}
            if worker.base_env is not None:
                request["env"] = worker.base_env
            answer = await worker.send(request, timeout=max(0.01, deadline - time.monotonic()))
            first = judge_lean(
                answer, name=prep.statement.name, allowed_axioms=pol.axioms_for("lean"), skip_axioms=True
            )
            if first.status != "proved" or "env" not in answer:
                return first
            ax = await worker.send(
                {"cmd": f"#print axioms {prep.statement.name}", "env": answer["env"]},
                timeout=max(0.01, deadline - time.monotonic()),
            )
        return judge_lean(
            answer, name=prep.statement.name, allowed_axioms=pol.axioms_for("lean"), axioms_response=ax
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
        head = "\n".join(imports)
        hb = f"set_option maxHeartbeats {pol.max_heartbeats}\n" if pol.max_heartbeats is not None else ""
        text = f"{head}\n{hb}{prepared.source}\n"
        ax_line = text.count("\n") + 1
        text += f"#print axioms {prepared.statement.name}\n"
        async with self._sem:
            with tempfile.TemporaryDirectory(prefix="verihub-lean-") as tmp:
                path = os.path.join(tmp, "Check.lean")
                with open(path, "w", encoding="utf-8") as fh:
                    fh.write(text)
                res = await run_limited(
                    [*self.argv, "--json", path],
                    cwd=self.project or tmp,
                    timeout_s=limit,
                    memory_bytes=pol.memory_bytes("lean"),
                )
        if res.timed_out:
            return _stamp(
                ProofVerdict(status="timeout", reason=f"killed at the {limit:g}s wall-clock limit"),
                "lean-file",
                start,
            )
        answer = {"messages": _json_messages(res.stdout)}
        verdict = judge_lean(
            answer,
            name=prepared.statement.name,
            allowed_axioms=pol.axioms_for("lean"),
            axioms_line=ax_line,
            backend="lean-file",
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
