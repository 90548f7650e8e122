"""The lean_core theorems: written for verihub, provable in core Lean 4 (no Mathlib).

Each entry: id, difficulty (1 easy .. 3 hard), topic, statement, reference proof, imports.
The reference proofs are checked wherever ``lean`` is installed (``tests/test_lean_core.py``).
``MATHLIB_THEOREMS`` need ``import Mathlib`` and are offered only with ``mathlib=True``.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["MATHLIB_THEOREMS", "THEOREMS", "LeanTheorem"]


@dataclass(frozen=True)
class LeanTheorem:
    id: str
    difficulty: int
    topic: str
    statement: str
    proof: str
    imports: tuple[str, ...] = ()


THEOREMS: tuple[LeanTheorem, ...] = (
    LeanTheorem("add_zero", 1, "nat", "theorem vh_add_zero (n : Nat) : n + 0 = n", "rfl"),
    LeanTheorem("zero_add", 1, "nat", "theorem vh_zero_add (n : Nat) : 0 + n = n", "Nat.zero_add n"),
    LeanTheorem("and_swap", 1, "logic", "theorem vh_and_swap (p q : Prop) (h : p ∧ q) : q ∧ p", "⟨h.2, h.1⟩"),
    LeanTheorem(
        "or_swap", 1, "logic", "theorem vh_or_swap (p q : Prop) (h : p ∨ q) : q ∨ p", "h.elim Or.inr Or.inl"
    ),
    LeanTheorem(
        "not_not_intro", 1, "logic", "theorem vh_not_not_intro (p : Prop) (h : p) : ¬¬p", "fun hn => hn h"
    ),
    LeanTheorem(
        "bool_and_comm",
        1,
        "bool",
        "theorem vh_bool_and_comm (a b : Bool) : (a && b) = (b && a)",
        "by cases a <;> cases b <;> rfl",
    ),
    LeanTheorem(
        "bool_not_not", 1, "bool", "theorem vh_bool_not_not (b : Bool) : (!(!b)) = b", "by cases b <;> rfl"
    ),
    LeanTheorem("add_comm", 2, "nat", "theorem vh_add_comm (n m : Nat) : n + m = m + n", "Nat.add_comm n m"),
    LeanTheorem(
        "add_assoc",
        2,
        "nat",
        "theorem vh_add_assoc (a b c : Nat) : a + b + c = a + (b + c)",
        "Nat.add_assoc a b c",
    ),
    LeanTheorem(
        "succ_ne_zero", 2, "nat", "theorem vh_succ_ne_zero (n : Nat) : n + 1 ≠ 0", "Nat.succ_ne_zero n"
    ),
    LeanTheorem(
        "exists_gt", 2, "logic", "theorem vh_exists_gt (n : Nat) : ∃ m, m > n", "⟨n + 1, Nat.lt_succ_self n⟩"
    ),
    LeanTheorem(
        "append_nil", 2, "list", "theorem vh_append_nil (α : Type) (l : List α) : l ++ [] = l", "by simp"
    ),
    LeanTheorem(
        "length_append",
        2,
        "list",
        "theorem vh_length_append (α : Type) (l₁ l₂ : List α) : (l₁ ++ l₂).length = l₁.length + l₂.length",
        "by simp",
    ),
    LeanTheorem(
        "map_length",
        2,
        "list",
        "theorem vh_map_length (α β : Type) (f : α → β) (l : List α) : (l.map f).length = l.length",
        "by simp",
    ),
    LeanTheorem("two_mul", 3, "nat", "theorem vh_two_mul (n : Nat) : 2 * n = n + n", "by omega"),
    LeanTheorem(
        "reverse_reverse",
        3,
        "list",
        "theorem vh_reverse_reverse (α : Type) (l : List α) : l.reverse.reverse = l",
        "by simp",
    ),
    LeanTheorem(
        "even_or_odd",
        3,
        "nat",
        "theorem vh_even_or_odd (n : Nat) : ∃ k, n = 2 * k ∨ n = 2 * k + 1",
        "⟨n / 2, by omega⟩",
    ),
    LeanTheorem(
        "add_right_cancel",
        3,
        "nat",
        "theorem vh_add_right_cancel (a b c : Nat) (h : a + c = b + c) : a = b",
        "by omega",
    ),
    LeanTheorem("mul_comm", 3, "nat", "theorem vh_mul_comm (n m : Nat) : n * m = m * n", "Nat.mul_comm n m"),
    LeanTheorem(
        "contrapositive",
        3,
        "logic",
        "theorem vh_contrapositive (p q : Prop) (h : p → q) (hq : ¬q) : ¬p",
        "fun hp => hq (h hp)",
    ),
)

_MATHLIB = ("import Mathlib",)
MATHLIB_THEOREMS: tuple[LeanTheorem, ...] = (
    LeanTheorem(
        "sq_nonneg", 2, "real", "theorem vh_sq_nonneg (x : ℝ) : 0 ≤ x ^ 2", "by positivity", _MATHLIB
    ),
    LeanTheorem(
        "two_mul_le_sq_add_sq",
        3,
        "real",
        "theorem vh_two_mul_le (a b : ℝ) : 2 * a * b ≤ a ^ 2 + b ^ 2",
        "by nlinarith [sq_nonneg (a - b)]",
        _MATHLIB,
    ),
    LeanTheorem("prime_two", 1, "nat", "theorem vh_prime_two : Nat.Prime 2", "Nat.prime_two", _MATHLIB),
)
