"""lean_core: theorems about Nat, lists, Bool and logic in core Lean 4 (see README.md).

Modes: ``single`` (one proof), ``revise`` (Lean's errors and goals back, up to ``max_turns``),
``tactic`` (one tactic per turn over the REPL's proof states; needs the REPL backend).
The Lean backend comes from :func:`graders.proof.make_checker` (a Kimina server, a REPL pool or a
local ``lean``); with no Lean installed, loading raises an error that says how to install it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Literal

from graders.proof import CheckerConfig, LeanReplChecker, ProofChecker, ProofGrader, ProofPolicy, make_checker
from hub import Environment, SingleTurnEnv, Task
from verihub_lean_core.env import LeanReviseEnv, LeanTacticEnv, accepted_tactics
from verihub_lean_core.theorems import MATHLIB_THEOREMS, THEOREMS, LeanTheorem

__all__ = [
    "MATHLIB_THEOREMS",
    "THEOREMS",
    "LeanReviseEnv",
    "LeanTacticEnv",
    "LeanTheorem",
    "accepted_tactics",
    "build_tasks",
    "load_environment",
]

SYSTEM_PROMPT = (
    "You are an expert in the Lean 4 theorem prover. You write complete, machine-checkable proofs. "
    "Never use sorry, admit, native_decide or new axioms: they are rejected."
)
PROMPT = (
    "Prove the following theorem in Lean 4.\n\n```lean\n{source}\n```\n\n"
    "Reply with the complete proof in a ```lean code block: restate the theorem exactly as given, "
    "followed by `:=` and your proof. You may put helper lemmas before the theorem, but no `open`, "
    "`set_option` or instances before it, and no notation, macros, `namespace`, `section`, "
    "`variable` or heartbeat limits anywhere."
)
TACTIC_PROMPT = (
    "Prove the following theorem in Lean 4, one tactic per message.\n\n```lean\n{source}\n```\n\n"
    "Reply each turn with exactly one tactic (for example `intro h` or `simp`) in a ```lean code block; "
    "you will see the new goals after each tactic."
)


def _theorems(mathlib: bool, tasks_file: str | None) -> list[LeanTheorem]:
    found = list(THEOREMS) + (list(MATHLIB_THEOREMS) if mathlib else [])
    if tasks_file is not None:
        for line in Path(tasks_file).read_text(encoding="utf-8").splitlines():
            if line.strip():
                row = json.loads(line)
                found.append(
                    LeanTheorem(
                        id=row["id"],
                        difficulty=int(row.get("difficulty", 2)),
                        topic=row.get("topic", "custom"),
                        statement=row["statement"],
                        proof=row.get("proof", ""),
                        imports=tuple(row.get("imports", ())),
                    )
                )
    return found


def build_tasks(
    *,
    difficulty: int | None = None,
    mathlib: bool = False,
    tasks_file: str | None = None,
    tactic: bool = False,
) -> list[Task]:
    """The tasks. ``mathlib``: add the Mathlib theorems; ``tasks_file``: add JSONL rows
    ``{"id", "statement", "imports", "proof", "difficulty"}`` (Mathlib statements allowed)."""
    tasks = []
    for th in _theorems(mathlib, tasks_file):
        if difficulty is not None and th.difficulty != difficulty:
            continue
        source = "\n".join((*th.imports, th.statement))
        answer: dict[str, Any] = {
            "statement": th.statement,
            "imports": list(th.imports),
            "reference_proof": th.proof,
        }
        prompt = (TACTIC_PROMPT if tactic else PROMPT).format(source=source)
        tasks.append(
            Task(
                id=th.id,
                prompt=prompt,
                answer=answer,
                metadata={
                    "difficulty": th.difficulty,
                    "topic": th.topic,
                    "language": "lean",
                    "mathlib": bool(th.imports),
                },
            )
        )
    return tasks


def load_environment(
    *,
    mode: Literal["single", "revise", "tactic"] = "single",
    max_turns: int | None = None,
    difficulty: int | None = None,
    mathlib: bool = False,
    tasks_file: str | None = None,
    backend: Literal["auto", "repl", "file", "kimina"] = "auto",
    repl_command: tuple[str, ...] | None = None,
    project: str | None = None,
    server_url: str | None = None,
    timeout_s: float = 60.0,
    checker: ProofChecker | None = None,
) -> Environment:
    """Build lean_core; see the module docstring. ``checker`` overrides the backend options."""
    if difficulty is not None and difficulty not in (1, 2, 3):
        raise ValueError(f"difficulty must be 1, 2, 3 or None, got {difficulty}")
    if checker is None:
        config = CheckerConfig(
            language="lean",
            backend=backend,
            repl_command=repl_command,
            project=project,
            server_url=server_url,
            policy=ProofPolicy(timeout_s=timeout_s),
        )
        checker = make_checker(config)
    grader = ProofGrader(checker, timeout=timeout_s)
    common: dict[str, Any] = {"id": "lean_core", "version": "0.1.0", "system_prompt": SYSTEM_PROMPT}
    if mode == "single":
        return SingleTurnEnv(
            tasks=build_tasks(difficulty=difficulty, mathlib=mathlib, tasks_file=tasks_file),
            grader=grader,
            **common,
        )
    if mode == "revise":
        return LeanReviseEnv(
            tasks=build_tasks(difficulty=difficulty, mathlib=mathlib, tasks_file=tasks_file),
            grader=grader,
            max_turns=max_turns or 4,
            **common,
        )
    if mode == "tactic":
        if not isinstance(checker, LeanReplChecker):
            raise ValueError(
                "mode='tactic' needs the Lean REPL backend: pass backend='repl' and repl_command=..."
            )
        tasks = build_tasks(difficulty=difficulty, mathlib=mathlib, tasks_file=tasks_file, tactic=True)
        return LeanTacticEnv(
            tasks=tasks,
            grader=grader,
            checker=checker,
            max_turns=max_turns or 16,
            step_timeout_s=timeout_s,
            **common,
        )
    raise ValueError(f"mode must be 'single', 'revise' or 'tactic', got {mode!r}")
