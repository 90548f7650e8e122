"""The Lean re-check: the proof must prove the task's statement as elaborated *before* the proof.

Lean's counterpart of Coq's ``Check.v``; every check (one file, or three REPL commands)::

    set_option maxHeartbeats N                            -- the check's policy (per check)
    def __verihub_expected_<nonce> : Prop := ∀ <binders>, <type>
    <the screened submission: helpers, the task's statement text, the proof>
    theorem __verihub_check_<nonce> : __verihub_expected_<nonce> := @<name>
    #print axioms __verihub_check_<nonce>

The expected proposition is elaborated before the model's code, so nothing it adds can change
its meaning; ``#print axioms`` covers whatever term proved it; the random nonce keeps the model
from naming or printing the check's declarations. A statement relying on auto-bound implicit
names is an ``error`` for every check. Why: docs/proofs.md, "The kernel".
"""

from __future__ import annotations

import re
import secrets
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from graders.proof.lean_verdict import judge_lean, repl_messages
from graders.proof.screen import Statement
from graders.proof.verdict import ProofVerdict

__all__ = [
    "LEAN_DEFAULT_HEARTBEATS",
    "FileLayout",
    "LeanRecheck",
    "judge_file_answer",
    "judge_rechecked",
    "lean_forall",
    "new_nonce",
    "plan_recheck",
]

LEAN_DEFAULT_HEARTBEATS = 200_000
"""Lean's own default ``maxHeartbeats``, sent when a policy leaves it unset (``None``)."""

_OPEN = "([{⦃⟨"
_CLOSE = ")]}⦄⟩"
_UNIVERSE = re.compile(r"(?<![\w.])(?:Type|Sort)\s*(\([^()]*\)|[a-z_]\w*)|\.\{([^}]*)\}")
_LEVEL_WORDS = frozenset({"max", "imax", "_"})


def new_nonce() -> str:
    """A fresh random suffix for one check's declarations (tests may replace this function)."""
    return secrets.token_hex(8)


def lean_forall(signature: str) -> str:
    """``(n : Nat) : P n`` -> ``∀ (n : Nat), P n``; ``: P`` -> ``P`` (the first top-level ``:``)."""
    depth = 0
    for i, ch in enumerate(signature):
        if ch in _OPEN:
            depth += 1
        elif ch in _CLOSE:
            depth -= 1
        elif ch == ":" and depth == 0 and signature[i + 1 : i + 2] != "=":
            binders, typ = signature[:i].strip(), signature[i + 1 :].strip()
            return f"∀ {binders}, {typ}" if binders else typ
    raise ValueError(f"no `: type` in the statement's signature {signature[:80]!r}")


def _universes(signature: str) -> str:
    """``.{u, v}`` for the universe names the signature uses (``Type u``, ``Sort (max u v)``, ``.{u}``)."""
    names: list[str] = []
    for level, explicit in _UNIVERSE.findall(signature):
        for found in re.findall(r"[A-Za-z_][\w]*", level or explicit):
            if found not in _LEVEL_WORDS and found not in names:
                names.append(found)
    return f".{{{', '.join(names)}}}" if names else ""


@dataclass(frozen=True)
class LeanRecheck:
    """The declarations and commands of one check (see the module docstring)."""

    name: str
    expected: str
    check: str
    prelude: str
    check_command: str

    @property
    def axioms_line(self) -> int:
        """The line of ``#print axioms`` within :attr:`check_command` (1-based)."""
        return self.check_command.count("\n") + 1


def plan_recheck(statement: Statement, *, max_heartbeats: int | None) -> LeanRecheck:
    """The re-check of ``statement`` with a fresh nonce; ``ValueError`` for a statement without a type."""
    nonce = new_nonce()
    expected, check = f"__verihub_expected_{nonce}", f"__verihub_check_{nonce}"
    univ = _universes(statement.signature)
    heartbeats = LEAN_DEFAULT_HEARTBEATS if max_heartbeats is None else max_heartbeats
    prelude = (
        f"set_option maxHeartbeats {heartbeats}\n"
        f"def {expected}{univ} : Prop := {' '.join(lean_forall(statement.signature).splitlines())}"
    )
    command = f"theorem {check}{univ} : {expected}{univ} := @{statement.name}\n#print axioms {check}"
    return LeanRecheck(
        name=statement.name, expected=expected, check=check, prelude=prelude, check_command=command
    )


def _errors(answer: Mapping[str, Any]) -> list[str]:
    return [m.text for m in repl_messages(answer) if m.severity == "error"]


def judge_rechecked(
    source: Mapping[str, Any],
    check: Mapping[str, Any],
    *,
    plan: LeanRecheck,
    allowed_axioms: frozenset[str],
    backend: str,
    prelude: Mapping[str, Any] | None = None,
) -> ProofVerdict:
    """Verdict from the answers to the prelude, the submission and the check command.

    ``check``'s positions are relative to the check command. A prelude error is an ``error``
    (the task's statement does not elaborate on its own); an error in the check command fails
    the proof (it does not prove the task's statement); the axioms are those of the check theorem.
    """
    if prelude is not None:
        if "message" in prelude and "env" not in prelude:
            return ProofVerdict.error(f"the Lean REPL refused the statement: {prelude['message']}")
        bad = _errors(prelude)
        if bad:
            return ProofVerdict.error(
                "the task's statement (or its imports) does not elaborate on its own: "
                f"{bad[0].splitlines()[0]}",
                backend=backend,
            )
    first = judge_lean(
        source, name=plan.name, allowed_axioms=allowed_axioms, skip_axioms=True, backend=backend
    )
    if first.status != "proved":
        return first
    if "message" in check and "messages" not in check:
        return ProofVerdict.error(f"the re-check command failed: {check['message']}", backend=backend)
    bad = _errors(check)
    if bad:
        return ProofVerdict.failed(
            "the proved theorem is not the task's statement (kernel re-check against the statement "
            f"elaborated before the proof failed): {bad[0].splitlines()[0]}",
            messages=first.messages + repl_messages(check),
            backend=backend,
        )
    verdict = judge_lean(
        check,
        name=plan.check,
        allowed_axioms=allowed_axioms,
        axioms_line=plan.axioms_line,
        backend=backend,
    )
    return ProofVerdict(
        status=verdict.status,
        reason=verdict.reason,
        messages=first.messages,
        goals=verdict.goals,
        axioms=verdict.axioms,
        backend=backend,
    )


@dataclass(frozen=True)
class FileLayout:
    """One file (``lean``, Kimina): its text and where each part starts (1-based lines)."""

    text: str
    header_lines: int
    prelude_line: int
    source_line: int
    check_line: int

    @classmethod
    def build(cls, imports: tuple[str, ...], source: str, plan: LeanRecheck) -> FileLayout:
        header = "".join(f"{i}\n" for i in imports)
        before_prelude = header.count("\n")
        before_source = before_prelude + plan.prelude.count("\n") + 1
        before_check = before_source + source.count("\n") + 1
        text = f"{header}{plan.prelude}\n{source}\n{plan.check_command}\n"
        return cls(text, before_prelude, before_prelude + 1, before_source + 1, before_check + 1)

    def split(self, answer: Mapping[str, Any], shift: int = 0) -> tuple[dict[str, Any], ...]:
        """(prelude, source, check) answers; check positions rebased to the check command.

        ``shift``: lines a server dropped from the top (a header it ran apart).
        """
        parts: tuple[dict[str, Any], ...] = ({"messages": []}, {"messages": []}, {"messages": []})
        for m in answer.get("messages") or ():
            reported = (m.get("pos") or {}).get("line")
            line = reported + shift if isinstance(reported, int) and reported > 0 else 0
            part = 2 if line >= self.check_line else 1 if line >= self.source_line or line == 0 else 0
            if part == 2:
                m = {**m, "pos": {**m["pos"], "line": line - self.check_line + 1}}
            parts[part]["messages"].append(m)
        parts[1]["sorries"] = list(answer.get("sorries") or ())
        return parts

    def axioms_at(self, answer: Mapping[str, Any], plan: LeanRecheck, shift: int) -> bool:
        """True if a message sits exactly where the ``#print axioms`` command starts and names it."""
        line = self.check_line + plan.axioms_line - 1 - shift
        for m in answer.get("messages") or ():
            pos = m.get("pos") or {}
            end = m.get("endPos") or {}
            if (
                pos.get("line") == line
                and pos.get("column") == 0
                and end.get("line", line) == line
                and plan.check in str(m.get("data", ""))
            ):
                return True
        return False


def judge_file_answer(
    answer: Mapping[str, Any],
    layout: FileLayout,
    plan: LeanRecheck,
    *,
    allowed_axioms: frozenset[str],
    backend: str,
    shifts: tuple[int, ...] = (0,),
) -> ProofVerdict:
    """Verdict from a whole-file answer; ``shifts``: line offsets a server may use (first that
    puts an answer exactly at the ``#print axioms`` command wins; with none, the first)."""
    if "message" in answer and "messages" not in answer and "env" not in answer:
        return ProofVerdict.error(f"Lean refused the file: {answer['message']}", backend=backend)
    shift = next((s for s in shifts if layout.axioms_at(answer, plan, s)), None)
    prelude, source, check = layout.split(answer, shifts[0] if shift is None else shift)
    if shift is None and len(shifts) > 1:
        # the positions are ambiguous: no prelude verdict, and every message counts as the proof's
        source = {"messages": list(answer.get("messages") or ()), "sorries": source["sorries"]}
        check = {"messages": []}
        first = judge_lean(
            source, name=plan.name, allowed_axioms=allowed_axioms, skip_axioms=True, backend=backend
        )
        if first.status != "proved":
            return first
        return ProofVerdict.error(
            f"no `#print axioms` answer at the position of the checker's command ({backend})", backend=backend
        )
    return judge_rechecked(
        source, check, plan=plan, allowed_axioms=allowed_axioms, backend=backend, prelude=prelude
    )
