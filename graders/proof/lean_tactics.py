"""Tactic-by-tactic proving over the Lean REPL's proof states.

:meth:`TacticSession.start` opens the statement with ``:= by sorry`` and takes the proof state
of that ``sorry``; :meth:`TacticSession.apply` runs one tactic on a proof state and returns the
new goals. Proof states live inside one REPL process, so a session keeps its worker's id and,
if that worker has been replaced, replays the tactics so far on another one. Closing all goals
here is not the verdict: an environment re-checks the assembled script with a full checker.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from graders.proof.lean_repl import ReplPool
from graders.proof.lean_verdict import repl_messages
from graders.proof.verdict import ProofMessage

__all__ = ["TacticResult", "TacticSession", "assemble_tactics"]


@dataclass(frozen=True)
class TacticResult:
    """The REPL's answer to one tactic (or to opening the statement)."""

    ok: bool
    proof_state: int | None
    goals: tuple[str, ...]
    completed: bool = False
    error: str = ""
    messages: tuple[ProofMessage, ...] = field(default=())


def assemble_tactics(statement: str, tactics: Sequence[str]) -> str:
    """The whole proof as one tactic block, for the final check."""
    lines = [line for t in tactics for line in t.strip().splitlines()]
    return "by\n" + "\n".join("  " + line for line in lines)


def _result(answer: dict[str, Any]) -> TacticResult:
    if "message" in answer and "proofState" not in answer:
        return TacticResult(ok=False, proof_state=None, goals=(), error=str(answer["message"]))
    msgs = repl_messages(answer)
    errors = [m.text for m in msgs if m.severity == "error"]
    status = str(answer.get("proofStatus", ""))
    goals = tuple(str(g) for g in answer.get("goals") or ())
    if errors or "contains sorry" in status:
        return TacticResult(
            ok=False,
            proof_state=answer.get("proofState"),
            goals=goals,
            error="; ".join(errors) or status,
            messages=msgs,
        )
    return TacticResult(
        ok=True,
        proof_state=answer.get("proofState"),
        goals=goals,
        completed=status == "Completed" or (not goals and "Incomplete" not in status),
        messages=msgs,
    )


class TacticSession:
    """One tactic-mode proof attempt on a pool worker (see the module docstring)."""

    def __init__(
        self, pool: ReplPool, statement: str, *, header: tuple[str, ...] = (), timeout: float = 20.0
    ) -> None:
        self.pool = pool
        self.statement = statement
        self.header = header
        self.timeout = timeout
        self.worker_id: int | None = None
        self.tactics: list[str] = []
        self.state: int | None = None

    async def start(self) -> TacticResult:
        """Open the statement; the result's ``goals`` are the theorem's goals."""
        async with self.pool.lease(self.header) as worker:
            return await self._open(worker)

    async def _open(self, worker: Any) -> TacticResult:
        req: dict[str, Any] = {"cmd": f"{self.statement} := by sorry"}
        if worker.base_env is not None:
            req["env"] = worker.base_env
        answer = await worker.send(req, timeout=self.timeout)
        sorries = answer.get("sorries") or []
        errors = [m for m in repl_messages(answer) if m.severity == "error"]
        if errors or len(sorries) != 1:
            why = errors[0].text if errors else f"expected one proof state, got {len(sorries)}"
            return TacticResult(ok=False, proof_state=None, goals=(), error=why)
        self.worker_id = worker.id
        self.state = int(sorries[0]["proofState"])
        return TacticResult(ok=True, proof_state=self.state, goals=(str(sorries[0].get("goal", "")),))

    async def apply(self, tactic: str) -> TacticResult:
        """Run ``tactic`` on the current proof state; on success it becomes the new state."""
        async with self.pool.lease(self.header, prefer=self.worker_id) as worker:
            if worker.id != self.worker_id or self.state is None:
                opened = await self._open(worker)  # the old worker is gone: replay
                if not opened.ok:
                    return opened
                for done in self.tactics:
                    replay = _result(
                        await worker.send({"tactic": done, "proofState": self.state}, timeout=self.timeout)
                    )
                    self.state = replay.proof_state
            answer = await worker.send({"tactic": tactic, "proofState": self.state}, timeout=self.timeout)
        result = _result(answer)
        if result.ok:
            self.tactics.append(tactic)
            self.state = result.proof_state
        return result
