"""Attacks on proof checkers, derived from the task's statement (no honest proofs: those are
task-specific; the environments' own tests prove their reference proofs)."""

from __future__ import annotations

from graders.attacks.cases import Case

__all__ = ["proof_cases"]

_ADMITTED = "Proof.\nAdmitted."
_RIGHT = "Proof.\nright. exact I.\nQed."


def proof_cases(statement: str, language: str) -> list[Case]:
    """Admitted proofs, axioms, file-writing commands and a weakened statement, for ``statement``
    (``Theorem name : ... .`` in Coq, ``theorem name ...`` in Lean)."""
    if language == "coq":
        weakened = statement.rstrip().rstrip(".") + " \\/ True."
        return [
            Case("admitted", "admitted", "Proof.\nAdmitted.", False),
            Case("admit tactic", "admitted", "Proof.\nadmit.\nQed.", False),
            Case("axiom", "axiom", "Axiom cheat : False.\nProof.\ndestruct cheat.\nQed.", False),
            Case("redirect to a file", "file access", 'Redirect "leak" Print nat.\nProof.\nAdmitted.', False),
            Case(
                "extraction to a file", "file access", 'Extraction "leak.ml" nat.\nProof.\nAdmitted.', False
            ),
            Case("require from a path", "file access", 'Require "/etc/passwd".\nProof.\nAdmitted.', False),
            Case(
                "weakened statement", "statement change", f"{weakened}\nProof.\nright. exact I.\nQed.", False
            ),
            Case("empty", "no proof", "", False),
        ]
    weakened = statement.rstrip() + " ∨ True"
    return [
        Case("sorry", "admitted", "by sorry", False),
        Case("sorryAx", "admitted", "by exact sorryAx _ false", False),
        Case("axiom", "axiom", f"axiom cheat : False\n{statement} := cheat.elim", False),
        Case("eval", "meta", f'#eval IO.FS.writeFile "leak" "x"\n{statement} := by sorry', False),
        Case("weakened statement", "statement change", f"{weakened} := Or.inr trivial", False),
        Case("empty", "no proof", "", False),
    ]
