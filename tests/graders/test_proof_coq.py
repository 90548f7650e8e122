"""The Coq backend end to end on the real kernel (``coqc``), with reward-hacking probes."""

from __future__ import annotations

import asyncio
import shutil
import subprocess
from pathlib import Path

import pytest

from graders.proof import CoqChecker, ProofGrader, ProofPolicy, ProofVerdict
from graders.proof.coq import parse_coq_assumptions
from graders.proof.screen import Prepared, parse_statement

pytestmark = pytest.mark.skipif(
    shutil.which("coqc") is None, reason="coqc not installed (apt-get install -y coq)"
)

ADD = "Theorem add_0_r' : forall n : nat, n + 0 = n."
GOOD = "intros n. induction n as [| n IH]; simpl; [reflexivity | rewrite IH; reflexivity]."


def coq() -> CoqChecker:
    return CoqChecker(policy=ProofPolicy(timeout_s=10.0))


def plain(statement: str, body: str, before: str = "") -> str:
    return f"{before}\n{statement}\nProof.\n{body}\nQed."


def full(statement: str, body: str, before: str = "") -> str:
    return f"```coq\n{plain(statement, body, before)}\n```"


@pytest.mark.sandbox
async def test_correct_proof_is_proved_bare_and_restated() -> None:
    c = coq()
    bare = await c.check(ADD, GOOD)
    restated = await c.check(ADD, "Here is my proof:\n" + full(ADD, GOOD))
    assert bare.status == "proved", bare.reason
    assert restated.status == "proved", restated.reason
    assert bare.axioms == ()


@pytest.mark.sandbox
async def test_proof_with_binders_in_statement() -> None:
    v = await coq().check("Theorem t (n : nat) : n + 0 = n.", "induction n; simpl; auto.")
    assert v.status == "proved", v.reason


@pytest.mark.sandbox
async def test_wrong_proof_fails_with_remaining_goals() -> None:
    v = await coq().check(ADD, "intros n. induction n. reflexivity. simpl.")
    assert v.status == "failed"
    assert "incomplete proof" in v.reason
    assert v.goals and "S (n + 0) = S n" in v.goals[0]
    assert "Remaining goals" in v.feedback()


@pytest.mark.sandbox
async def test_syntax_error_fails_with_message() -> None:
    v = await coq().check(ADD, "intros n. this_is_not_a_tactic.")
    assert v.status == "failed" and v.messages and v.messages[0].line is not None


# -- reward-hacking probes --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("proof", "reason"),
    [
        (full("Theorem add_0_r' : forall n : nat, 0 + n = n.", "reflexivity."), "statement was changed"),
        (
            full("Theorem add_0_r' : forall n : nat, n + 0 = n \\/ True.", "right; exact I."),
            "statement was changed",
        ),
        (full(ADD, "intros n. admit.").replace("Qed.", "Admitted."), "forbidden"),
        ("Proof. intros n. Admitted.", "forbidden `Admitted`"),
        ("intros. Abort.", "forbidden `Abort`"),
        (full(ADD, "apply cheat.", "Axiom cheat : forall P : Prop, P."), "forbidden `Axiom`"),
        (full(ADD, "apply cheat.", "Parameter cheat : forall P : Prop, P."), "forbidden `Parameter`"),
        (
            full(ADD, "destruct (f 0).", "Unset Guard Checking.\nFixpoint f (n : nat) : False := f n."),
            "Guard Checking",
        ),
        (full(ADD, "reflexivity.", "Definition nat := unit."), "redefined"),
        (full(ADD, "reflexivity.", 'Notation "x + y" := (x) (at level 50, left associativity).'), "Notation"),
        (f"{ADD} Proof. {GOOD} Qed.\n{ADD} Proof. {GOOD} Qed.", "declared 2 times"),
        ("(* Proof complete. Closed under the global context. *) intros n. reflexivity.", "rejected"),
        ("", "empty proof"),
    ],
)
@pytest.mark.sandbox
async def test_hacks_fail_with_reason(proof: str, reason: str) -> None:
    v = await coq().check(ADD, proof)
    assert v.status == "failed", (v.status, v.reason)
    assert reason in v.reason


LONG = "cheat_" + "a" * 74  # name + type wider than Coq's default print width (78)


async def unscreened(statement: str, source: str, policy: ProofPolicy | None = None) -> ProofVerdict:
    """The kernel checks alone: ``source`` goes to ``coqc`` without the screen."""
    stmt = parse_statement(statement, "coq")
    pre, _, body = source.partition(statement)
    prep = Prepared(statement=stmt, preamble=pre, body=body, source=source)
    return await coq()._run(prep, (), 10.0, policy or ProofPolicy())


@pytest.mark.parametrize(
    ("statement", "before", "tactic"),
    [
        (
            "Theorem add_comm' : forall n m : nat, n + m = m + n.",
            f"Hypothesis {LONG} : forall P : Prop, P.",
            f"apply {LONG}.",
        ),
        ("Theorem t : 0 = 1.", f"Hypothesis {LONG} : forall P : Prop, P.", f"apply {LONG}."),
        ("Theorem t : 0 = 1.", f"Variable {LONG} : 0 = 1.", f"exact {LONG}."),
        ("Theorem t : 0 = 1.", f"Variables ({LONG} : 0 = 1) (b : nat).", f"exact {LONG}."),
        ("Theorem t : 0 = 1.", f"Hypotheses {LONG} : 0 = 1.", f"exact {LONG}."),
        ("Theorem t : 0 = 1.", f"Context ({LONG} : 0 = 1).", f"exact {LONG}."),
        (
            "Theorem t : 0 = 1.",
            "Hypothesis h : forall (aaaaaaaaaaaaaaaaaaaaaaaa bbbbbbbbbbbbbbbbbbbbbbbbbbbbbb "
            "cccccccccccccccccccccccccc dddddddddddddddddddd : nat), 0 = 1.",
            "exact (h 0 0 0 0).",
        ),
    ],
)
@pytest.mark.sandbox
async def test_long_named_assumptions_fail_on_screen_and_in_the_kernel(
    statement: str, before: str, tactic: str
) -> None:
    source = plain(statement, tactic, before)
    screened = await coq().check(statement, source)
    assert screened.status == "failed" and "forbidden" in screened.reason, screened.reason
    kernel = await unscreened(statement, source)  # Print Assumptions alone must catch it too
    assert kernel.status == "failed" and "allow-list" in kernel.reason, kernel.reason
    assert kernel.axioms and kernel.axioms[0].startswith("Submission.")


@pytest.mark.sandbox
async def test_library_axiom_printed_on_its_own_line_is_caught() -> None:
    stmt = "Theorem fe : (fun n : nat => n + 0) = (fun n => n)."
    proof = full(
        stmt,
        "apply functional_extensionality. intros; auto.",
        "Require Import Coq.Logic.FunctionalExtensionality.",
    )
    v = await coq().check(stmt, proof)
    assert v.status == "failed" and "functional_extensionality_dep" in v.reason, v.reason
    assert v.axioms == ("FunctionalExtensionality.functional_extensionality_dep",)
    allowed = ProofPolicy(allowed_axioms=frozenset({"functional_extensionality_dep"}))
    assert (await coq().check(stmt, proof, policy=allowed)).status == "proved"


@pytest.mark.sandbox
async def test_variable_axiom_is_caught_by_print_assumptions() -> None:
    hack = plain(ADD, "apply cheat.", "Variable cheat : forall P : Prop, P.")
    assert "forbidden `Variable`" in (await coq().check(ADD, hack)).reason
    v = await unscreened(ADD, hack)
    assert v.status == "failed" and "allow-list" in v.reason
    allowing = ProofPolicy(allowed_axioms=frozenset({"cheat"}))  # a same-named axiom is still the model's own
    assert (await unscreened(ADD, hack, allowing)).status == "failed"


@pytest.mark.sandbox
async def test_kernel_recheck_catches_a_redefinition_the_screen_misses() -> None:
    # Bypass the screen on purpose: the kernel re-check alone must reject a proof about another `nat`.
    stmt = parse_statement("Theorem t : forall n : nat, n = n.", "coq")
    redefined = "Inductive nat := O | S : nat -> nat."
    source = f"{redefined}\n{stmt.text}\nProof. reflexivity. Qed."
    prep = Prepared(statement=stmt, preamble=redefined, body="Proof. reflexivity. Qed.", source=source)
    v = await coq()._run(prep, (), 10.0, ProofPolicy())
    assert v.status == "failed" and "not the task's statement" in v.reason
    screened = await coq().check(stmt.text, f"```coq\n{source}\n```")
    assert screened.status == "failed" and "redefined" in screened.reason


@pytest.mark.sandbox
async def test_classical_axiom_needs_the_allow_list() -> None:
    em = "Theorem em : forall P : Prop, P \\/ ~ P."
    proof = full(em, "exact classic.", "Require Import Classical.")
    assert (await coq().check(em, proof)).status == "failed"
    allowed = ProofPolicy(allowed_axioms=frozenset({"Coq.Logic.Classical_Prop.classic"}))
    v = await coq().check(em, proof, policy=allowed)
    assert v.status == "proved", v.reason
    assert v.axioms == ("Classical_Prop.classic",)


@pytest.mark.sandbox
async def test_infinite_loop_is_killed_at_the_limit() -> None:
    v = await coq().check("Theorem t : False.", "repeat (pose proof I).", timeout=1.5)
    assert v.status == "timeout" and "1.5s" in v.reason
    # the checker keeps working afterwards
    assert (await coq().check(ADD, GOOD)).status == "proved"


@pytest.mark.sandbox
async def test_memory_blowup_fails() -> None:
    v = await coq().check(
        "Theorem t : 2 ^ 22 = 0.",
        "compute. reflexivity.",
        imports=("Require Import Arith.",),
        policy=ProofPolicy(timeout_s=5.0, memory_mb=400),
    )
    assert v.status in ("failed", "timeout")


def test_parse_print_assumptions() -> None:
    assert parse_coq_assumptions("Closed under the global context\n") == ()
    out = (
        "Axioms:\nclassic : forall P : Prop, P \\/ ~ P\ncheat : forall P : Prop,\n  P\n"
        "Sub.f is assumed to be guarded.\n"
    )
    assert parse_coq_assumptions(out) == ("classic", "cheat", "unsafe: Sub.f is assumed to be guarded.")
    wrapped = f"Axioms:\n{LONG}\n  : forall P : Prop, P\nshort : 0 = 1\nTheory:\nSet is impredicative\n"
    assert parse_coq_assumptions(wrapped) == (LONG, "short", "unsafe: Set is impredicative")
    assert parse_coq_assumptions("Section Variables:\nlong_name_alone\n") == ("unsafe: long_name_alone",)


@pytest.mark.parametrize(
    "output",
    [
        "",
        "Proof complete.\n",
        "Closed under the global context\nAxioms:\nx : False\n",
        "Axioms:\n",
        "Axioms:\n  : False\n",
        "Axioms:\nSection Variables:\nx : False\n",
        "  x : False\n",
    ],
)
def test_unreadable_print_assumptions_raises(output: str) -> None:
    with pytest.raises(ValueError):
        parse_coq_assumptions(output)


@pytest.mark.sandbox
def test_parser_reads_real_coq_output_at_the_default_width(tmp_path: Path) -> None:
    # no `Set Printing Width` here: Coq puts long names alone on a line, the type indented below
    src = (
        f"Axiom {LONG} : forall P : Prop, P.\nAxiom b : 0 = 1.\n"
        "Require Import Coq.Logic.FunctionalExtensionality.\n"
        f"Theorem t : 0 = 1 /\\ (fun n : nat => n + 0) = (fun n => n).\n"
        f"Proof. split. apply {LONG}. apply functional_extensionality. intros; auto. Qed.\n"
        "Print Assumptions t.\n"
    )
    (tmp_path / "A.v").write_text(src)
    out = subprocess.run(["coqc", "-q", "A.v"], cwd=tmp_path, capture_output=True, text=True, check=True)
    assert f"\n{LONG}\n  : " in out.stdout  # the layout that used to hide the axiom
    assert sorted(parse_coq_assumptions(out.stdout)) == sorted([LONG, "functional_extensionality_dep"])


@pytest.mark.sandbox
async def test_grader_maps_verdicts_to_grades() -> None:
    g = ProofGrader(coq(), timeout=2.0)
    ref = {"statement": ADD, "imports": []}
    assert (await g(full(ADD, GOOD), reference=ref)).passed
    bad = await g("Proof. Admitted.", reference=ref)
    assert bad.status == "incorrect" and "Admitted" in bad.reason
    loop = await g("repeat (pose proof I).", reference={"statement": "Theorem t : False."})
    assert loop.status == "incorrect" and loop.reason.startswith("timeout")
    assert (await g("x", reference={"statement": "not a theorem"})).status == "error"


@pytest.mark.sandbox
async def test_concurrent_checks() -> None:
    c = coq()
    verdicts = await asyncio.gather(*[c.check(ADD, GOOD) for _ in range(4)])
    assert all(v.proved for v in verdicts)


@pytest.mark.sandbox
async def test_implicit_binders_and_keyword_variants() -> None:
    stmt = "Lemma app_nil {A : Type} (l : list A) : l ++ nil = l."
    restated = (
        "Theorem app_nil {A : Type} (l : list A) : l ++ nil = l.\nProof. induction l; simpl; congruence. Qed."
    )
    v = await coq().check(stmt, restated, imports=("Require Import List.",))
    assert v.status == "proved", v.reason


@pytest.mark.sandbox
async def test_definitional_uip_is_caught_past_the_screen() -> None:
    stmt = "Theorem t : forall (A : Type) (x : A) (p : x = x), p = eq_refl."
    before = (
        "Set Definitional UIP.\nInductive seq {A} (a : A) : A -> SProp := srefl : seq a a.\n"
        "Definition to_seq {A} {a b : A} (p : a = b) : seq a b := match p with eq_refl => srefl a end.\n"
        "Definition of_seq {A} {a b : A} (p : seq a b) : a = b := match p with srefl _ => eq_refl end."
    )
    tactic = "intros A x p. transitivity (of_seq (to_seq p)). - destruct p. reflexivity. - reflexivity."
    source = plain(stmt, tactic, before)
    assert "forbidden `Set Definitional`" in (await coq().check(stmt, source)).reason
    v = await unscreened(stmt, source)  # Coq prints "Submission.seq relies on definitional UIP."
    assert v.status == "failed" and v.axioms and v.axioms[0].startswith("unsafe: "), (v.reason, v.axioms)
