"""`ProofVerdict`: what every proof checker returns.

``status`` keeps four outcomes apart:

- ``proved``: the kernel accepted the proof of exactly the given statement, with no ``sorry``
  and only allowed axioms;
- ``failed``: a verdict against the proof (it does not compile, leaves goals, changes the
  statement, uses a forbidden construct or axiom);
- ``error``: the checker itself could not work (no Lean installed, a crashed worker, a server
  that does not answer); not a verdict on the proof;
- ``timeout``: the check ran past its wall-clock limit and was killed.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

__all__ = ["ProofMessage", "ProofStatus", "ProofVerdict"]

ProofStatus = Literal["proved", "failed", "error", "timeout"]


@dataclass(frozen=True)
class ProofMessage:
    """One message of the proof checker (an error, a warning or an info line)."""

    severity: Literal["error", "warning", "info"]
    text: str
    line: int | None = None
    column: int | None = None

    def render(self) -> str:
        where = f"line {self.line}: " if self.line is not None else ""
        return f"{self.severity}: {where}{self.text}"


@dataclass(frozen=True)
class ProofVerdict:
    """The outcome of checking one proof (see the module docstring for ``status``)."""

    status: ProofStatus
    reason: str = ""
    messages: tuple[ProofMessage, ...] = ()
    goals: tuple[str, ...] = ()
    axioms: tuple[str, ...] = ()
    elapsed_s: float = 0.0
    backend: str = ""

    @property
    def proved(self) -> bool:
        return self.status == "proved"

    @property
    def is_error(self) -> bool:
        """True when the checker failed or timed out (no verdict on the proof)."""
        return self.status in ("error", "timeout")

    def feedback(self, *, max_chars: int = 2000) -> str:
        """A plain-text summary for a model revising its proof: reason, errors, open goals."""
        parts = [f"Verdict: {self.status}. {self.reason}".strip()]
        errors = [m.render() for m in self.messages if m.severity == "error"]
        if errors:
            parts.append("Errors:\n" + "\n".join(errors))
        if self.goals:
            parts.append("Remaining goals:\n" + "\n\n".join(self.goals))
        text = "\n\n".join(parts)
        return text if len(text) <= max_chars else text[: max_chars - 3] + "..."

    @classmethod
    def failed(cls, reason: str, **kw: object) -> ProofVerdict:
        return cls(status="failed", reason=reason, **kw)  # type: ignore[arg-type]

    @classmethod
    def error(cls, reason: str, **kw: object) -> ProofVerdict:
        return cls(status="error", reason=reason, **kw)  # type: ignore[arg-type]
