"""The static screen: comments, statements, forbidden constructs, redefinitions (no kernel needed)."""

from __future__ import annotations

import pytest

from graders.proof import ProofPolicy, ProofVerdict, extract_code, parse_statement, prepare
from graders.proof.source import blank_strings, strip_comments

COQ = parse_statement("Theorem t : forall n : nat, n + 0 = n.", "coq")
LEAN = parse_statement("theorem t (n : Nat) : n + 0 = n", "lean")


def screen(stmt: object, text: str, **policy: object) -> str:
    out = prepare(stmt, text, policy=ProofPolicy(**policy))  # type: ignore[arg-type]
    return out.reason if isinstance(out, ProofVerdict) else out.source


def test_comments_are_stripped_with_nesting_and_strings() -> None:
    assert strip_comments("a (* b (* c *) Admitted *) d", "coq").split() == ["a", "d"]
    assert strip_comments('x "(* not a comment *)" y', "coq") == 'x "(* not a comment *)" y'
    assert strip_comments("a -- sorry\nb /- c /- d -/ sorry -/ e", "lean").split() == ["a", "b", "e"]
    assert blank_strings('f "sorry" g', "lean") == 'f "     " g'


def test_sorry_in_a_comment_or_string_is_harmless_but_real_ones_are_not() -> None:
    assert screen(LEAN, "by simp -- no sorry here") == "theorem t (n : Nat) : n + 0 = n := by simp"
    assert screen(LEAN, 'by\n  have h : "sorry".length = 5 := rfl\n  simp').startswith("theorem t")
    assert "forbidden `sorry`" in screen(LEAN, "by simp; sorry")
    assert "forbidden `admit`" in screen(COQ, "(* fine *) admit.")


def test_statement_must_match_up_to_whitespace() -> None:
    assert screen(COQ, "Theorem t :\n  forall n : nat,\n  n + 0 = n.\nProof. auto. Qed.").startswith(
        "Theorem t"
    )
    assert "statement was changed" in screen(COQ, "Theorem t : forall n : nat, n = n. Proof. auto. Qed.")
    assert "statement was changed" in screen(LEAN, "theorem t (n : Nat) : n + 0 = n ∨ True := by simp")
    assert "declared 2 times" in screen(
        LEAN, "theorem t (n : Nat) : n + 0 = n := rfl\ntheorem t (n : Nat) : n + 0 = n := rfl"
    )


def test_bare_proofs_are_wrapped() -> None:
    assert screen(COQ, "auto.") == "Theorem t : forall n : nat, n + 0 = n.\nProof.\nauto.\nQed."
    assert screen(LEAN, "simp") == "theorem t (n : Nat) : n + 0 = n := by\n  simp"
    assert screen(LEAN, "Nat.add_zero n") == "theorem t (n : Nat) : n + 0 = n := Nat.add_zero n"


def test_native_decide_only_when_allowed() -> None:
    assert "native_decide" in screen(LEAN, "by native_decide")
    assert screen(LEAN, "by native_decide", allow_native_decide=True).endswith("by native_decide")


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        (
            "Require Import Arith.\nOpen Scope Z_scope.\n"
            "Theorem t : forall n : nat, n + 0 = n.\nProof. auto. Qed.",
            "forbidden `Open Scope` ahead",
        ),
        (
            "Fixpoint nat := 0.\nTheorem t : forall n : nat, n + 0 = n.\nProof. auto. Qed.",
            "`nat` is redefined",
        ),
        ('Declare ML Module "evil".', "forbidden `Declare ML Module`"),
        ('Redirect "/tmp/x" Print nat.', "forbidden `Redirect`"),
    ],
)
def test_coq_ahead_and_file_commands(text: str, reason: str) -> None:
    assert reason in screen(COQ, text)


def test_extract_code_takes_the_last_block() -> None:
    assert extract_code("first\n```lean\nby simp\n```\nthen\n```lean\nby omega\n```") == "by omega"
    assert extract_code("no fences") == "no fences"


def test_malformed_statements_are_rejected() -> None:
    with pytest.raises(ValueError):
        parse_statement("Definition x := 1.", "coq")
    with pytest.raises(ValueError):
        parse_statement("theorem t : True := trivial", "lean")


def test_coq_options_ahead_are_rejected_but_the_sort_set_is_not() -> None:
    helper = "Lemma helper : forall A : Set, A -> A.\nProof. auto. Qed.\n"
    ok = screen(COQ, f"{helper}Theorem t : forall n : nat, n + 0 = n.\nProof. auto. Qed.")
    assert ok.startswith("Lemma helper")
    bad = screen(COQ, "Set Implicit Arguments.\nTheorem t : forall n : nat, n + 0 = n.\nProof. auto. Qed.")
    assert "forbidden `Set Implicit`" in bad


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ('notation3 "ℕ" => Int\ntheorem t (n : Nat) : n + 0 = n := rfl', "forbidden `notation3`"),
        (
            "unif_hint (n : Nat) where n =?= 0 ⊢ n + 0 =?= n\ntheorem t (n : Nat) : n + 0 = n := rfl",
            "unif_hint",
        ),
        (
            'binder_predicate x " >>> " y:term => `($x > $y)\ntheorem t (n : Nat) : n + 0 = n := rfl',
            "forbidden",
        ),
        ('local notation a " + " b => a * b\ntheorem t (n : Nat) : n + 0 = n := rfl', "forbidden `notation`"),
        ('infixl:65 " + " => Nat.mul\ntheorem t (n : Nat) : n + 0 = n := rfl', "forbidden `infixl`"),
        ("macro_rules | `($a + $b) => `($a * $b)\ntheorem t (n : Nat) : n + 0 = n := rfl", "forbidden"),
        (
            "@[default_instance] instance : Add Nat := ⟨Nat.mul⟩\ntheorem t (n : Nat) : n + 0 = n := rfl",
            "forbidden",
        ),
        ("theorem t (n : Nat) : n + 0 = n := rfl\nvariable (h : False)\ninclude h", "forbidden `variable`"),
        ("theorem t (n : Nat) : n + 0 = n := rfl\nnamespace Evil", "forbidden `namespace`"),
        ("by\n  set_option maxHeartbeats 0 in\n  simp", "forbidden `maxHeartbeats`"),
        ("by\n  set_option maxRecDepth 100000 in\n  simp", "forbidden `maxRecDepth`"),
        ("by\n  set_option synthInstance.maxHeartbeats 0 in\n  simp", "forbidden `synthInstance`"),
        ("by\n  set_option hygiene false in\n  simp", "forbidden `hygiene`"),
        ("by decide (config := {native := true})", "forbidden `native := true`"),
        ("by decide (config := { native:=true })", "forbidden `native := true`"),
        ("by exact Lean.ofReduceNat _ _ rfl", "forbidden `ofReduceNat`"),
        (
            "/-- error: x -/\n#guard_msgs in\ntheorem t (n : Nat) : n + 0 = n := rfl",
            "forbidden `#guard_msgs`",
        ),
        (
            "simproc s (_ + 0) := fun _ => return .continue\ntheorem t (n : Nat) : n + 0 = n := by simp",
            "simproc",
        ),
    ],
)
def test_lean_syntax_extensions_and_limits_are_rejected(text: str, reason: str) -> None:
    assert reason in screen(LEAN, text)


@pytest.mark.parametrize(
    "command",
    [
        "Hypothesis cheat : False.",
        "Hypotheses cheat : False.",
        "Variable cheat : False.",
        "Variables (cheat : False) (n : nat).",
        "Context (cheat : False).",
        "Primitive int := #int63_type.",
        "Register nat as num.nat.type.",
    ],
)
def test_coq_assumption_commands_are_rejected_anywhere(command: str) -> None:
    before = f"{command}\nTheorem t : forall n : nat, n + 0 = n.\nProof. auto. Qed."
    after = f"Theorem t : forall n : nat, n + 0 = n.\nProof. auto. Qed.\n{command}"
    assert "forbidden" in screen(COQ, before) and "forbidden" in screen(COQ, after)


@pytest.mark.parametrize(
    "name", ["Lean.ofReduceBool", "_root_.Lean.ofReduceNat", "Lean.trustCompiler", "_root_.sorryAx"]
)
def test_kernel_bypass_names_are_rejected_however_qualified(name: str) -> None:
    assert "forbidden" in screen(LEAN, f"by exact {name} _ _ rfl")
