"""The `ProofChecker` protocol: one async method from a statement and a proof to a verdict."""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from graders.proof.policy import ProofPolicy
from graders.proof.verdict import ProofVerdict

__all__ = ["ProofChecker"]


@runtime_checkable
class ProofChecker(Protocol):
    """Checks that ``proof`` proves exactly ``statement``.

    ``statement`` is a theorem header (Lean: ``theorem name (n : Nat) : n + 0 = n``; Coq:
    ``Theorem name : forall n, n + 0 = n.``). ``proof`` is the model's text: a proof, or a whole
    file restating the statement verbatim with helper lemmas ahead of it. ``imports`` is the
    import header (Lean: ``("import Mathlib",)``; Coq: ``("Require Import List.",)``).
    ``policy`` carries the allowed axioms and limits; ``timeout`` overrides its wall-clock limit.
    A checker never raises for a bad proof; it returns ``status="error"`` when it cannot work.
    """

    language: str
    policy: ProofPolicy
    """The default rules of this checker; a per-check ``policy`` replaces it."""

    async def check(
        self,
        statement: str,
        proof: str,
        *,
        imports: tuple[str, ...] = (),
        timeout: float | None = None,
        policy: ProofPolicy | None = None,
    ) -> ProofVerdict: ...

    async def aclose(self) -> None:
        """Release processes and connections held by the checker."""
