"""Formal proof checking with Coq and Lean 4.

Reading guide: a :class:`ProofChecker` turns a theorem statement and a model's proof into a
:class:`ProofVerdict` (``proved`` / ``failed`` / ``error`` / ``timeout``). Build one with
:func:`make_checker` (Coq's ``coqc``; Lean via a REPL pool, a one-shot ``lean`` or a Kimina
server), wrap it in :class:`ProofGrader` to use it as a verihub grader. Every backend screens
the proof first (:mod:`graders.proof.screen`: statement unchanged, no ``sorry``/``Admitted``,
no redefinitions ahead of the statement) and checks the axioms the kernel reports against the
task's :class:`ProofPolicy`. Claims that are an identity or a solution of an equation can be
decided by computation instead (:func:`check_identity`, :func:`check_solution`, through
graders.math's pooled substitution checks). This package never imports ``hub``; nothing runs at
import time.
"""

from graders.proof.backend import CheckerConfig, make_checker
from graders.proof.checker import ProofChecker
from graders.proof.computation import check_identity, check_solution
from graders.proof.coq import CoqChecker
from graders.proof.errors import BackendNotFoundError, LeanNotFoundError, ProofCheckerError, WorkerError
from graders.proof.grader import ProofGrader, verdict_to_grade
from graders.proof.kimina import KiminaChecker
from graders.proof.lean import LeanFileChecker, LeanReplChecker
from graders.proof.lean_repl import ReplPool, ReplPoolConfig, ReplProcess
from graders.proof.lean_tactics import TacticResult, TacticSession, assemble_tactics
from graders.proof.policy import COQ_DEFAULT_AXIOMS, LEAN_DEFAULT_AXIOMS, ProofPolicy
from graders.proof.screen import Prepared, Statement, extract_code, parse_statement, prepare
from graders.proof.verdict import ProofMessage, ProofStatus, ProofVerdict

__all__ = [
    "BackendNotFoundError",
    "COQ_DEFAULT_AXIOMS",
    "CheckerConfig",
    "CoqChecker",
    "KiminaChecker",
    "LEAN_DEFAULT_AXIOMS",
    "LeanFileChecker",
    "LeanNotFoundError",
    "LeanReplChecker",
    "Prepared",
    "ProofChecker",
    "ProofCheckerError",
    "ProofGrader",
    "ProofMessage",
    "ProofPolicy",
    "ProofStatus",
    "ProofVerdict",
    "ReplPool",
    "ReplPoolConfig",
    "ReplProcess",
    "Statement",
    "TacticResult",
    "TacticSession",
    "assemble_tactics",
    "WorkerError",
    "check_identity",
    "check_solution",
    "extract_code",
    "make_checker",
    "parse_statement",
    "prepare",
    "verdict_to_grade",
]
