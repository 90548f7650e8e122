"""`ProofPolicy`: what a task allows (axioms, ``native_decide``) and the limits of one check."""

from __future__ import annotations

from dataclasses import dataclass, field

__all__ = ["COQ_DEFAULT_AXIOMS", "LEAN_DEFAULT_AXIOMS", "ProofPolicy"]

LEAN_DEFAULT_AXIOMS: frozenset[str] = frozenset({"propext", "Classical.choice", "Quot.sound"})
"""The three axioms of Lean's standard foundations; anything else (``sorryAx``,
``Lean.ofReduceBool`` from ``native_decide``, an added ``axiom``) fails by default."""

COQ_DEFAULT_AXIOMS: frozenset[str] = frozenset()
"""Coq proofs must be closed under the global context unless the task allows more
(for example ``classic`` or ``functional_extensionality_dep``)."""


@dataclass(frozen=True)
class ProofPolicy:
    """Per-task rules of a proof check.

    ``allowed_axioms``: axiom names a proof may depend on; ``None`` means the language default.
    ``allow_native_decide``: Lean only; allows ``native_decide`` and ``Lean.ofReduceBool``.
    ``timeout_s``: hard wall-clock limit of one check. ``memory_mb``: address-space cap of the
    checker process; ``None`` means the language default (Coq 4 GiB; Lean 32 GiB, since Lean maps
    every imported ``.olean`` file, several GiB for Mathlib). ``max_heartbeats``: Lean's
    deterministic time limit (``None``: Lean's default).
    """

    allowed_axioms: frozenset[str] | None = None
    allow_native_decide: bool = False
    timeout_s: float = 20.0
    memory_mb: int | None = None
    max_heartbeats: int | None = 200_000
    extra_forbidden: tuple[str, ...] = field(default=())

    def axioms_for(self, language: str) -> frozenset[str]:
        base = self.allowed_axioms
        if base is None:
            base = LEAN_DEFAULT_AXIOMS if language == "lean" else COQ_DEFAULT_AXIOMS
        if language == "lean" and self.allow_native_decide:
            base = base | {"Lean.ofReduceBool", "Lean.trustCompiler"}
        return base

    def memory_bytes(self, language: str) -> int:
        """The address-space cap in bytes for a ``language`` checker process."""
        mb = self.memory_mb if self.memory_mb is not None else (4096 if language == "coq" else 32768)
        return mb * 1024 * 1024
