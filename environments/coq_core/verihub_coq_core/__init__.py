"""coq_core: theorems about nat, lists, booleans and logic, checked by Coq's kernel (see README.md).

``load_environment(mode="single")`` gives one proof attempt per task; ``mode="revise"`` lets
the model revise its proof from the kernel's errors and remaining goals, up to ``max_turns``.
"""

from __future__ import annotations

from typing import Any, Literal

from graders.proof import CoqChecker, ProofGrader, ProofPolicy
from hub import Environment, SingleTurnEnv, Task
from verihub_coq_core.env import ProofReviseEnv
from verihub_coq_core.theorems import THEOREMS, CoqTheorem

__all__ = ["THEOREMS", "CoqTheorem", "ProofReviseEnv", "build_tasks", "load_environment"]

SYSTEM_PROMPT = (
    "You are an expert in the Coq proof assistant. You write complete, machine-checkable proofs. "
    "Never use Admitted, admit, Abort, new axioms or Hypothesis/Variable/Context: they are rejected."
)
PROMPT = (
    "Prove the following theorem in Coq (standard library only).\n\n```coq\n{source}\n```\n\n"
    "Reply with the complete proof in a ```coq code block: restate the theorem exactly as given, "
    "then `Proof.` followed by your tactics and `Qed.`. You may put helper lemmas before the theorem."
)


def build_tasks(*, difficulty: int | None = None) -> list[Task]:
    """The tasks, optionally only those of one ``difficulty`` (1..3)."""
    tasks = []
    for th in THEOREMS:
        if difficulty is not None and th.difficulty != difficulty:
            continue
        source = "\n".join((*th.imports, th.statement))
        answer: dict[str, Any] = {
            "statement": th.statement,
            "imports": list(th.imports),
            "reference_proof": th.proof,
        }
        tasks.append(
            Task(
                id=th.id,
                prompt=PROMPT.format(source=source),
                answer=answer,
                metadata={"difficulty": th.difficulty, "topic": th.topic, "language": "coq"},
            )
        )
    return tasks


def load_environment(
    *,
    mode: Literal["single", "revise"] = "single",
    max_turns: int = 4,
    difficulty: int | None = None,
    timeout_s: float = 20.0,
    coqc: str | None = None,
) -> Environment:
    """Build coq_core. Needs ``coqc`` (``apt-get install -y coq``); ``timeout_s`` per check."""
    if difficulty is not None and difficulty not in (1, 2, 3):
        raise ValueError(f"difficulty must be 1, 2, 3 or None, got {difficulty}")
    checker = CoqChecker(coqc=coqc, policy=ProofPolicy(timeout_s=timeout_s))
    grader = ProofGrader(checker, timeout=timeout_s)
    tasks = build_tasks(difficulty=difficulty)
    if mode == "single":
        return SingleTurnEnv(
            id="coq_core", version="0.1.0", tasks=tasks, grader=grader, system_prompt=SYSTEM_PROMPT
        )
    if mode == "revise":
        return ProofReviseEnv(
            id="coq_core",
            version="0.1.0",
            tasks=tasks,
            grader=grader,
            system_prompt=SYSTEM_PROMPT,
            max_turns=max_turns,
        )
    raise ValueError(f"mode must be 'single' or 'revise', got {mode!r}")
