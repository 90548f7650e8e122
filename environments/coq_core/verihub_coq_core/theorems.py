"""The coq_core theorems: written for verihub, provable in Coq's standard library.

Each entry: id, difficulty (1 easy .. 3 hard), topic, statement, imports, reference proof.
The reference proofs are checked by the real kernel in ``tests/test_coq_core.py``.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["THEOREMS", "CoqTheorem"]

_LIST = ("Require Import List.", "Import ListNotations.")


@dataclass(frozen=True)
class CoqTheorem:
    id: str
    difficulty: int
    topic: str
    statement: str
    proof: str
    imports: tuple[str, ...] = ()


THEOREMS: tuple[CoqTheorem, ...] = (
    CoqTheorem(
        "plus_O_n", 1, "nat", "Theorem plus_O_n' : forall n : nat, 0 + n = n.", "intros n. reflexivity."
    ),
    CoqTheorem(
        "negb_involutive",
        1,
        "bool",
        "Theorem negb_involutive' : forall b : bool, negb (negb b) = b.",
        "intros []; reflexivity.",
    ),
    CoqTheorem(
        "andb_comm",
        1,
        "bool",
        "Theorem andb_comm' : forall a b : bool, andb a b = andb b a.",
        "intros [] []; reflexivity.",
    ),
    CoqTheorem(
        "and_swap",
        1,
        "logic",
        "Theorem and_swap : forall P Q : Prop, P /\\ Q -> Q /\\ P.",
        "intros P Q [HP HQ]. split; assumption.",
    ),
    CoqTheorem(
        "or_swap",
        1,
        "logic",
        "Theorem or_swap : forall P Q : Prop, P \\/ Q -> Q \\/ P.",
        "intros P Q [H | H]; [right | left]; exact H.",
    ),
    CoqTheorem(
        "contrapositive",
        1,
        "logic",
        "Theorem contrapositive : forall P Q : Prop, (P -> Q) -> ~ Q -> ~ P.",
        "intros P Q H HnQ HP. apply HnQ. apply H. exact HP.",
    ),
    CoqTheorem(
        "add_0_r",
        2,
        "nat",
        "Theorem add_0_r' : forall n : nat, n + 0 = n.",
        "intros n. induction n as [| n IH]; simpl; [reflexivity | rewrite IH; reflexivity].",
    ),
    CoqTheorem(
        "add_succ_r",
        2,
        "nat",
        "Theorem add_succ_r' : forall n m : nat, n + S m = S (n + m).",
        "intros n m. induction n as [| n IH]; simpl; [reflexivity | rewrite IH; reflexivity].",
    ),
    CoqTheorem(
        "not_exists_forall",
        2,
        "logic",
        "Theorem not_exists_forall : forall (A : Type) (P : A -> Prop), "
        "~ (exists x, P x) -> forall x, ~ P x.",
        "intros A P H x Hx. apply H. exists x. exact Hx.",
    ),
    CoqTheorem(
        "app_nil_r",
        2,
        "list",
        "Theorem app_nil_r' : forall (A : Type) (l : list A), l ++ [] = l.",
        "intros A l. induction l as [| x l IH]; simpl; [reflexivity | rewrite IH; reflexivity].",
        _LIST,
    ),
    CoqTheorem(
        "map_length",
        2,
        "list",
        "Theorem map_length' : forall (A B : Type) (f : A -> B) (l : list A), length (map f l) = length l.",
        "intros A B f l. induction l as [| x l IH]; simpl; [reflexivity | rewrite IH; reflexivity].",
        _LIST,
    ),
    CoqTheorem(
        "app_length",
        2,
        "list",
        "Theorem app_length' : forall (A : Type) (l1 l2 : list A), "
        "length (l1 ++ l2) = length l1 + length l2.",
        "intros A l1 l2. induction l1 as [| x l1 IH]; simpl; [reflexivity | rewrite IH; reflexivity].",
        _LIST,
    ),
    CoqTheorem(
        "add_comm",
        3,
        "nat",
        "Theorem add_comm' : forall n m : nat, n + m = m + n.",
        "intros n m. induction n as [| n IH]; simpl.\n"
        "- rewrite <- plus_n_O. reflexivity.\n- rewrite IH. apply plus_n_Sm.",
    ),
    CoqTheorem(
        "double_even",
        3,
        "nat",
        "Theorem double_even : forall n : nat, Nat.even (n + n) = true.",
        "intros n. induction n as [| n IH].\n- reflexivity.\n- simpl. rewrite <- plus_n_Sm. exact IH.",
    ),
    CoqTheorem(
        "le_plus_l",
        3,
        "nat",
        "Theorem le_plus_l' : forall n m : nat, n <= n + m.",
        "intros n m. induction m as [| m IH].\n- rewrite <- plus_n_O. constructor.\n"
        "- rewrite <- plus_n_Sm. constructor. exact IH.",
    ),
    CoqTheorem(
        "even_or_odd",
        3,
        "nat",
        "Theorem even_or_odd : forall n : nat, exists k, n = 2 * k \\/ n = S (2 * k).",
        "intros n. induction n as [| n [k [H | H]]].\n- exists 0. left. reflexivity.\n"
        "- exists k. right. rewrite H. reflexivity.\n"
        "- exists (S k). left. rewrite H. simpl. rewrite <- plus_n_Sm. reflexivity.",
    ),
    CoqTheorem(
        "rev_app",
        3,
        "list",
        "Theorem rev_app : forall (A : Type) (l1 l2 : list A), rev (l1 ++ l2) = rev l2 ++ rev l1.",
        "intros A l1 l2. induction l1 as [| x l1 IH]; simpl.\n- rewrite app_nil_r. reflexivity.\n"
        "- rewrite IH. rewrite app_assoc. reflexivity.",
        _LIST,
    ),
    CoqTheorem(
        "rev_involutive",
        3,
        "list",
        "Theorem rev_involutive' : forall (A : Type) (l : list A), rev (rev l) = l.",
        "intros A l. induction l as [| x l IH]; simpl.\n- reflexivity.\n"
        "- rewrite rev_app_distr. simpl. rewrite IH. reflexivity.",
        _LIST,
    ),
    CoqTheorem(
        "leb_sound",
        3,
        "nat",
        "Theorem leb_sound : forall n m : nat, Nat.leb n m = true -> n <= m.",
        "induction n as [| n IH]; intros m H.\n- apply le_0_n.\n"
        "- destruct m as [| m]; simpl in H.\n  + discriminate H.\n  + apply le_n_S. apply IH. exact H.",
    ),
    CoqTheorem(
        "in_app_or",
        3,
        "list",
        "Theorem in_app_or' : forall (A : Type) (l1 l2 : list A) (x : A), "
        "In x (l1 ++ l2) -> In x l1 \\/ In x l2.",
        "intros A l1 l2 x. induction l1 as [| y l1 IH]; simpl; intros H.\n- right. exact H.\n"
        "- destruct H as [H | H].\n  + left. left. exact H.\n"
        "  + destruct (IH H) as [H1 | H1].\n    * left. right. exact H1.\n    * right. exact H1.",
        _LIST,
    ),
)
