"""Red-team probes of `graders.proof`, second round: screen/Lean lexing desyncs, meta code that
reaches Lean's elaborator without the forbidden words, and Coq's `Print Assumptions` blind spot.

Each probe here was let through (screen passed it; or, for Coq, the kernel re-check said
``proved`` on a proof of ``0 = 1``) before the fix it pins.
"""

from __future__ import annotations

import shutil

import pytest

from graders.proof import CoqChecker, ProofPolicy, ProofVerdict, parse_statement, prepare
from graders.proof.screen import Prepared
from graders.proof.source import blank_strings, lean_strings_are_ambiguous

LEAN = parse_statement("theorem t : (0 : Nat) = 1", "lean")
COQ = parse_statement("Theorem t0 : 0 = 1.", "coq")


def screen(stmt: object, text: str) -> str:
    out = prepare(stmt, text, policy=ProofPolicy())  # type: ignore[arg-type]
    return out.reason if isinstance(out, ProofVerdict) else "PASSED"


# What the hidden part would do in Lean: skip the kernel and close the goal with an ill-typed term.
HIDDEN = "set_option debug.skipKernelTC true in\ntheorem t : (0 : Nat) = 1 := by\n  run_tac pure ()\n"


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        # a char literal `'"'` made the screen read the rest as a string; Lean reads code
        (f'def c := \'"\'\n{HIDDEN}def d := "x"', "forbidden `run_tac`"),
        (f'def c := \'\\"\'\n{HIDDEN}def d := "x"', "forbidden `run_tac`"),
        # a raw string: `\` escapes nothing in `r"\"`, and `r#"a"b"#` ends at `"#`
        (f'def c := r"\\"\n{HIDDEN}def d := "x"', "forbidden `run_tac`"),
        (f'def c := r#"a"b"#\n{HIDDEN}def d := "x"', "forbidden `run_tac`"),
        # a `«...»` name may contain `"`
        (f'def «a"b» := 1\n{HIDDEN}def d := "x"', "forbidden `run_tac`"),
        # the code between the braces of an interpolated string is Lean code
        (
            'theorem t : (0 : Nat) = 1 := by\n  have := s!"{(by run_tac pure (); exact 0 : Nat)}"\n  rfl',
            "run_tac",
        ),
        (
            'theorem t : (0 : Nat) = 1 := by\n  have := s!"{"a" ++ (by run_tac pure (); exact "" : String)}"'
            "\n  rfl",
            "forbidden `run_tac`",
        ),
    ],
)
def test_lean_string_lexing_cannot_hide_code(text: str, reason: str) -> None:
    assert reason in screen(LEAN, text)


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("theorem t : (0 : Nat) = 1 := by decide\n#eval! (1 : Nat)", "`#eval`"),
        (
            "theorem t : (0 : Nat) = 1 := by decide\nopen _root_.Lean.Elab.Command in\ndef x := 1",
            "`Lean.Elab`",
        ),
        ("theorem t : (0 : Nat) = 1 := by decide\nopen Lean.«Elab».Command in\ndef x := 1", "`Lean.Elab`"),
        ("theorem t : (0 : Nat) = 1 := by decide\ndef x := «Lean».Meta.getMVars", "`Lean.Meta`"),
        # after `open Lean` (allowed after the statement), `Elab.`/`Meta.` reach the same API
        (
            "theorem t : (0 : Nat) = 1 := by decide\nopen Lean in\n"
            "def x : Elab.Command.CommandElab := fun _ => pure ()",
            "`Elab`",
        ),
        ("theorem t : (0 : Nat) = 1 := by decide\nopen Lean Meta in\ndef y := 1", "`Meta`"),
        (
            "theorem t : (0 : Nat) = 1 := by decide\ndef f (env : _root_.Lean.Environment) := "
            "env.addDeclWithoutChecking",
            "`addDecl`",
        ),
        ("def f (e : Nat) := setEnv e\ntheorem t : (0 : Nat) = 1 := by decide", "`setEnv`"),
    ],
)
def test_lean_meta_names_however_written(text: str, reason: str) -> None:
    assert reason in screen(LEAN, text)


@pytest.mark.parametrize(
    "text",
    [
        # an elaborator registered after the proof would run the checker's own re-check commands
        "theorem t : (0 : Nat) = 1 := by decide\n@[command_elab Lean.Parser.Command.declaration] def h := 1",
        "theorem t : (0 : Nat) = 1 := by decide\n@[term_elab foo] def h := 1",
        "@[tactic Lean.Parser.Tactic.decide] def h := 1\ntheorem t : (0 : Nat) = 1 := by decide",
        "theorem t : (0 : Nat) = 1 := by decide\nattribute [local tactic foo] h",
        "@[simp, aesop safe (rule_sets := [x]) tactic] def h := 1\ntheorem t : (0 : Nat) = 1 := by decide",
        "@[positivity _ + _] def h := 1\ntheorem t : (0 : Nat) = 1 := by decide",
        "@[norm_num _ + _] def h := 1\ntheorem t : (0 : Nat) = 1 := by decide",
        "@[env_linter] def h := 1\ntheorem t : (0 : Nat) = 1 := by decide",
        "@[«tactic» foo] def h := 1\ntheorem t : (0 : Nat) = 1 := by decide",
    ],
)
def test_lean_attributes_that_register_meta_code(text: str) -> None:
    assert "forbidden" in screen(LEAN, text)


@pytest.mark.parametrize(
    "text",
    [
        'by\n  have h : "sorry".length = 5 := rfl\n  simp',
        "by\n  have h : 'a' ≠ 'b' := by decide\n  have h' : (2 : Nat) = 2 := rfl\n  simp",
        'by\n  have : s!"ab".length = 2 := rfl\n  simp',
        "@[simp] theorem aux : (1 : Nat) = 1 := rfl\ntheorem t : (0 : Nat) = 1 := by simp [aux]",
        "by\n  simp only [Nat.zero_eq]\n  decide",
    ],
)
def test_honest_lean_is_still_screened_through(text: str) -> None:
    assert screen(LEAN, text) == "PASSED"


def test_blanking_stays_when_unambiguous_and_stops_when_not() -> None:
    assert blank_strings('f "sorry" g', "lean") == 'f "     " g'
    assert not lean_strings_are_ambiguous("have h' : x = 'a' := rfl")
    for text in ("'\"'", 'r"x"', "«a»", 's!"{x}"'):
        assert lean_strings_are_ambiguous(text)
        assert blank_strings(text, "lean") == text
    assert blank_strings('x "a""b" y', "coq") == 'x "    " y'  # Coq's lexing is unambiguous


# -- Coq ------------------------------------------------------------------------------------------

coq_only = pytest.mark.skipif(shutil.which("coqc") is None, reason="coqc not installed")


def plain(before: str, tactic: str) -> str:
    return f"{before}\n{COQ.text}\nProof. {tactic} Qed."


@coq_only
@pytest.mark.parametrize(
    ("before", "tactic", "reason"),
    [
        ("Conjectures cheat cheat2 : False.", "destruct cheat.", "forbidden `Conjectures`"),
        (
            "Require Import Coq.Structures.Equalities.\nDefinition t := unit.\n"
            "Definition eq := fun (_ _ : unit) => False.\nInclude IsEq.",
            "destruct (@Equivalence_Reflexive _ _ eq_equiv tt).",
            "forbidden `Include`",
        ),
    ],
)
async def test_coq_assumptions_without_the_usual_keywords_fail_on_the_screen(
    before: str, tactic: str, reason: str
) -> None:
    v = await CoqChecker(policy=ProofPolicy(timeout_s=20.0)).check(COQ.text, plain(before, tactic))
    assert v.status == "failed" and reason in v.reason, v.reason


# Coq bug 12155 (upstream tracker): an unsafe flag used in a module that a functor with a `Parameter Inline`
# is applied to does not show in `Print Assumptions` ("Closed under the global context").
FUNCTOR_LEAK = (
    "Require Import Coq.Logic.Hurkens.\n"
    "Module Type T. Parameter Inline bad : False. End T.\n"
    "Module T1. Unset Universe Checking. Definition bad := PropNeqType.paradox eq_refl. "
    "Set Universe Checking. End T1.\n"
    "Module T2 (F : T). Definition bad := F.bad. End T2.\n"
    "Module T3 := T2 T1."
)
# The same with the guard (Coq bug 22366 upstream).
GUARD_LEAK = (
    "Module Type set. Parameter Inline T : (nat -> False). End set.\n"
    "Module F (S : set). Definition loop : nat -> False := S.T. End F.\n"
    "Module X. Local Unset Guard Checking. Fixpoint T (n : nat) : False := T (S n). End X.\n"
    "Unset Guard Checking.\nModule M := F X.\nSet Guard Checking.\n"
    "Definition boom : False := M.loop 0."
)


async def _kernel_only(source: str) -> ProofVerdict:
    pre, _, body = source.partition(COQ.text)
    prep = Prepared(statement=COQ, preamble=pre, body=body, source=source)
    checker = CoqChecker(policy=ProofPolicy(timeout_s=20.0))
    return await checker._run(prep, (), 20.0, ProofPolicy(timeout_s=20.0))


@coq_only
@pytest.mark.parametrize(
    ("before", "tactic"), [(FUNCTOR_LEAK, "destruct T3.bad."), (GUARD_LEAK, "destruct boom.")]
)
@pytest.mark.sandbox
async def test_coq_unsafe_flags_through_a_functor_fail_past_the_screen(before: str, tactic: str) -> None:
    source = plain(before, tactic)
    screened = await CoqChecker(policy=ProofPolicy(timeout_s=20.0)).check(COQ.text, source)
    assert screened.status == "failed" and "forbidden" in screened.reason, screened.reason
    v = await _kernel_only(source)  # Print Assumptions alone said "proved"
    assert v.status == "failed" and "coqchk" in v.reason, (v.status, v.reason)


@coq_only
@pytest.mark.sandbox
async def test_coq_unused_unsafe_helper_is_reported_by_coqchk() -> None:
    # not on the theorem's path, so Print Assumptions says nothing; coqchk's summary lists it
    stmt = parse_statement("Theorem t0 : 0 = 0.", "coq")
    before = "#[bypass_check(guard)] Fixpoint f (n : nat) : False := f n.\n"
    source = f"{before}{stmt.text}\nProof. reflexivity. Qed."
    prep = Prepared(statement=stmt, preamble=before, body="Proof. reflexivity. Qed.", source=source)
    v = await CoqChecker(policy=ProofPolicy(timeout_s=20.0))._run(prep, (), 20.0, ProofPolicy(timeout_s=20.0))
    assert v.status == "failed" and "coqchk" in v.reason and "Submission.f" in v.reason, v.reason


@coq_only
@pytest.mark.sandbox
async def test_coq_honest_proof_passes_coqchk() -> None:
    checker = CoqChecker(policy=ProofPolicy(timeout_s=20.0))
    assert checker.coqchk is not None
    v = await checker.check("Theorem t : forall n : nat, n + 0 = n.", "induction n; simpl; auto.")
    assert v.status == "proved", v.reason
