"""Errors of the proof checkers. Each message says what to do next.

::

    ProofCheckerError             the checker cannot work (not a verdict on a proof)
    ├── BackendNotFoundError      no usable backend (coqc, lean, REPL or server)
    │   └── LeanNotFoundError     no Lean toolchain: install it with elan
    └── WorkerError               a checker process died or broke the protocol
"""

from __future__ import annotations

__all__ = ["BackendNotFoundError", "LeanNotFoundError", "ProofCheckerError", "WorkerError"]

ELAN_HINT = (
    "Install Lean 4 with elan: `curl https://elan.lean-lang.org/elan-init.sh -sSf | sh` "
    "(then `source ~/.elan/env`; `lean --version` must work). For the REPL backend also build "
    "https://github.com/leanprover-community/repl (`lake build`) and pass its binary as `repl_command`; "
    "or point `server_url` at a Kimina Lean server. See docs/proofs.md."
)


class ProofCheckerError(Exception):
    """The proof checker itself failed; not a verdict on the proof."""


class BackendNotFoundError(ProofCheckerError):
    """No backend of the requested kind can be found on this machine."""


class LeanNotFoundError(BackendNotFoundError):
    """No Lean toolchain (``lean``/``lake``) or REPL binary was found."""

    def __init__(self, what: str) -> None:
        super().__init__(f"{what} not found. {ELAN_HINT}")


class WorkerError(ProofCheckerError):
    """A checker process died, answered garbage or broke the protocol."""
