"""From Lean's structured output (REPL JSON, Kimina results, ``lean`` file output) to a verdict.

The rules, shared by every Lean backend: an ``error`` message fails the proof (with the goals of
any ``unsolved goals`` error as feedback); a ``sorry`` (in ``sorries`` or the ``declaration uses
sorry`` warning) fails it; the ``#print axioms`` answer must name the task's theorem, come from
the line where the checker put that command (so text the proof itself prints cannot pose as
it), and list only allowed axioms.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any, Literal

from graders.proof.verdict import ProofMessage, ProofVerdict

__all__ = ["axioms_from_messages", "goals_from_messages", "judge_lean", "repl_messages"]

_AXIOMS = re.compile(
    r"^'(?P<name>.+?)' (?:depends on axioms: \[(?P<list>.*)\]|does not depend on any axioms)", re.DOTALL
)
_Severity = Literal["error", "warning", "info"]


def repl_messages(response: Mapping[str, Any]) -> tuple[ProofMessage, ...]:
    """The ``messages`` of a REPL answer as :class:`ProofMessage` records."""
    out: list[ProofMessage] = []
    for m in response.get("messages") or ():
        sev = m.get("severity", "error")
        severity: _Severity = sev if sev in ("error", "warning", "info") else "info"
        pos = m.get("pos") or {}
        out.append(
            ProofMessage(
                severity=severity, text=str(m.get("data", "")), line=pos.get("line"), column=pos.get("column")
            )
        )
    return tuple(out)


def goals_from_messages(messages: Sequence[ProofMessage]) -> tuple[str, ...]:
    """Goals named by ``unsolved goals`` errors."""
    goals: list[str] = []
    for m in messages:
        if m.severity == "error" and m.text.startswith("unsolved goals"):
            goals.extend(g for g in re.split(r"\n\n", m.text.split("\n", 1)[-1]) if g.strip())
    return tuple(goals)


def axioms_from_messages(
    messages: Sequence[ProofMessage], name: str, *, line: int | None = None
) -> tuple[str, ...] | None:
    """Axioms listed by ``#print axioms name`` (None if no such answer at ``line``)."""
    for m in messages:
        if m.severity != "info" or (line is not None and m.line != line):
            continue
        hit = _AXIOMS.match(m.text.strip())
        if hit and hit.group("name").strip("«»") == name:
            listed = hit.group("list")
            return tuple(a.strip() for a in listed.split(",") if a.strip()) if listed else ()
    return None


def _is_sorry_warning(m: ProofMessage) -> bool:
    return m.severity == "warning" and "declaration uses" in m.text and "sorry" in m.text


def judge_lean(
    response: Mapping[str, Any],
    *,
    name: str,
    allowed_axioms: frozenset[str],
    axioms_response: Mapping[str, Any] | None = None,
    axioms_line: int | None = None,
    backend: str = "lean",
    skip_axioms: bool = False,
) -> ProofVerdict:
    """Verdict from one Lean answer (and, for the REPL, the separate ``#print axioms`` answer).

    ``skip_axioms``: judge errors and ``sorry`` only (the REPL checker's first step).
    """
    if "message" in response and "messages" not in response and "env" not in response:
        return ProofVerdict.error(
            f"the Lean REPL refused the command: {response['message']}", backend=backend
        )
    msgs = repl_messages(response)
    errors = [m for m in msgs if m.severity == "error"]
    if errors:
        first = errors[0].text.splitlines()[0] if errors[0].text else "error"
        return ProofVerdict.failed(
            f"Lean rejected the proof: {first}",
            messages=msgs,
            goals=goals_from_messages(msgs),
            backend=backend,
        )
    if response.get("sorries") or any(_is_sorry_warning(m) for m in msgs):
        goals = tuple(str(s.get("goal", "")) for s in response.get("sorries") or ())
        return ProofVerdict.failed("the proof contains `sorry`", messages=msgs, goals=goals, backend=backend)
    if skip_axioms:
        return ProofVerdict(
            status="proved", reason="compiled; axioms not yet checked", messages=msgs, backend=backend
        )
    ax_msgs = msgs if axioms_response is None else repl_messages(axioms_response)
    if axioms_response is not None and "message" in axioms_response and "messages" not in axioms_response:
        return ProofVerdict.error(f"`#print axioms` failed: {axioms_response['message']}", backend=backend)
    ax_errors = [m for m in ax_msgs if m.severity == "error"]
    if ax_errors:
        return ProofVerdict.failed(
            f"theorem `{name}` was not declared: {ax_errors[0].text}",
            messages=msgs + ax_msgs,
            backend=backend,
        )
    axioms = axioms_from_messages(ax_msgs, name, line=axioms_line)
    if axioms is None:
        return ProofVerdict.error(
            f"no `#print axioms {name}` answer from Lean", messages=msgs, backend=backend
        )
    if "sorryAx" in axioms:
        return ProofVerdict.failed(
            "the proof depends on `sorryAx`", axioms=axioms, messages=msgs, backend=backend
        )
    bad = [a for a in axioms if a not in allowed_axioms]
    if bad:
        hint = " (from native_decide)" if "Lean.ofReduceBool" in bad else ""
        return ProofVerdict.failed(
            "uses axioms outside the allow-list: " + ", ".join(bad) + hint,
            axioms=axioms,
            messages=msgs,
            backend=backend,
        )
    return ProofVerdict(
        status="proved", reason="Lean accepted the proof", axioms=axioms, messages=msgs, backend=backend
    )
