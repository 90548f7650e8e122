"""The Lean re-check (``graders.proof.lean_check``): the generated Lean source, and its verdicts over
the REPL protocol (replay stand-in serving recorded real answers) and on whole-file answers.

No Lean runs here. The compile answers of the submissions are RECORDED real REPL answers
(``../shared/data/lean_repl``); the answers to the re-check's own commands are SYNTHESISED in
the REPL's format (the recordings predate the re-check) and labelled so.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from graders.proof import (
    LeanReplChecker,
    ProofPolicy,
    ReplPool,
    ReplPoolConfig,
    ReplProcess,
    lean_check,
    parse_statement,
)
from graders.proof.lean_check import FileLayout, judge_file_answer, lean_forall, plan_recheck
from hub.review.testing import shared_data_dir

REPLAY = Path(__file__).with_name("lean_replay.py")
DATA = shared_data_dir(Path(__file__).resolve().parent) / "lean_repl"
DEMO = "theorem demo (a b: Nat): a + b = b + a"
DEFAULT = frozenset({"propext", "Classical.choice", "Quot.sound"})


@pytest.fixture
def fixed_nonce(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(lean_check, "new_nonce", lambda: "0")


def info(line: int, text: str, column: int = 0) -> dict[str, Any]:
    """SYNTHESISED info message in the REPL's format (``#print axioms`` answers sit at ``#print``)."""
    return {
        "severity": "info",
        "pos": {"line": line, "column": column},
        "endPos": {"line": line, "column": column + 6},
        "data": text,
    }


def error(line: int, text: str) -> dict[str, Any]:
    return {"severity": "error", "pos": {"line": line, "column": 0}, "data": text}


def plan(statement: str = DEMO, heartbeats: int | None = 200_000) -> lean_check.LeanRecheck:
    return plan_recheck(parse_statement(statement, "lean"), max_heartbeats=heartbeats)


# -- the generated Lean source ----------------------------------------------------------------


def test_the_statement_is_elaborated_before_the_submission_and_checked_after(fixed_nonce: None) -> None:
    p = plan(heartbeats=1234)
    source = "theorem helper : True := trivial\n" + DEMO + " := by rw [Nat.add_comm]"
    layout = FileLayout.build(("import Mathlib",), source, p)
    assert layout.text == (
        "import Mathlib\n"
        "set_option maxHeartbeats 1234\n"
        "def __verihub_expected_0 : Prop := ∀ (a b: Nat), a + b = b + a\n"
        f"{source}\n"
        "theorem __verihub_check_0 : __verihub_expected_0 := @demo\n"
        "#print axioms __verihub_check_0\n"
    )
    lines = layout.text.splitlines()
    assert lines[layout.prelude_line - 1].startswith("set_option maxHeartbeats")
    assert lines[layout.source_line - 1] == "theorem helper : True := trivial"
    assert lines[layout.check_line - 1].startswith("theorem __verihub_check_0")
    assert p.axioms_line == 2 and p.check == "__verihub_check_0"
    assert "maxHeartbeats 200000" in plan(heartbeats=None).prelude  # None: Lean's own default


def test_the_nonce_is_fresh_per_check() -> None:
    names = {plan().check for _ in range(20)}
    assert len(names) == 20 and all(len(n) > len("__verihub_check_") + 8 for n in names)


@pytest.mark.parametrize(
    ("signature", "forall", "universes"),
    [
        ("(n : Nat) : n + 0 = n", "∀ (n : Nat), n + 0 = n", ""),
        (": 2 + 2 = 4", "2 + 2 = 4", ""),
        (
            "{α : Type u} [DecidableEq α] ⦃l : List α⦄ : l = l",
            "∀ {α : Type u} [DecidableEq α] ⦃l : List α⦄, l = l",
            ".{u}",
        ),
        (
            "(x : List.{v} (Sort (max u w))) : ∃ y : Nat, y = y",
            "∀ (x : List.{v} (Sort (max u w))), ∃ y : Nat, y = y",
            ".{v, u, w}",
        ),
    ],
)
def test_binders_become_a_forall_and_universes_are_declared(
    signature: str, forall: str, universes: str
) -> None:
    assert lean_forall(signature) == forall
    p = plan(f"theorem t {signature}")
    assert f"{p.expected}{universes} : Prop := {forall}" in p.prelude
    assert p.check_command.startswith(f"theorem {p.check}{universes} : {p.expected}{universes} :=")


def test_a_statement_without_a_type_is_a_task_error() -> None:
    with pytest.raises(ValueError):
        lean_forall("(n : Nat)")


# -- whole-file answers (lean --json, Kimina) -------------------------------------------------


def file_verdict(messages: list[dict[str, Any]], **kw: Any) -> Any:
    p = plan()
    layout = FileLayout.build((), DEMO + " := by omega", p)
    return judge_file_answer(
        {"messages": messages}, layout, p, allowed_axioms=DEFAULT, backend="lean-file", **kw
    )


def test_file_answers(fixed_nonce: None) -> None:
    # layout without imports: 1 set_option, 2 def, 3 the proof, 4 the check theorem, 5 #print axioms
    ok = file_verdict([info(5, "'__verihub_check_0' depends on axioms: [propext]")])
    assert ok.status == "proved" and ok.axioms == ("propext",), ok.reason
    printed_by_the_proof = file_verdict([info(3, "'__verihub_check_0' does not depend on any axioms")])
    assert printed_by_the_proof.status == "error"
    mismatch = file_verdict(
        [
            error(4, "type mismatch\n  @demo\nhas type\n  ∀ (a b : Nat), a + b = a + b"),
            error(5, "unknown constant '__verihub_check_0'"),
        ]
    )
    assert mismatch.status == "failed" and "not the task's statement" in mismatch.reason
    task_bug = file_verdict([error(2, "unknown identifier 'α'")])
    assert task_bug.status == "error" and "does not elaborate on its own" in task_bug.reason
    wrong = file_verdict(
        [error(3, "unsolved goals\n⊢ False"), info(5, "'__verihub_check_0' depends on axioms: [sorryAx]")]
    )
    assert wrong.status == "failed" and wrong.goals == ("⊢ False",)
    sorry_ax = file_verdict([info(5, "'__verihub_check_0' depends on axioms: [sorryAx]")])
    assert sorry_ax.status == "failed" and "sorryAx" in sorry_ax.reason


# -- over the REPL protocol (replay stand-in) -------------------------------------------------


def replay_checker(tmp_path: Path, extra: list[Any], *names: str) -> LeanReplChecker:
    path = tmp_path / "synthesised.json"
    path.write_text(json.dumps(extra), encoding="utf-8")
    argv = (sys.executable, str(REPLAY), "--dir", str(DATA), "--extra", str(path), *names)
    pool = ReplPool(ReplPoolConfig(command=argv, max_workers=1, memory_mb=None, max_heartbeats=None))
    return LeanReplChecker(pool, policy=ProofPolicy(timeout_s=5))


def synthesised(
    p: lean_check.LeanRecheck, check: dict[str, Any], prelude: dict[str, Any] | None = None
) -> list[Any]:
    """SYNTHESISED answers to the prelude and the check command (see the module docstring)."""
    return [[{"cmd": p.prelude}, prelude or {"env": 10}], [{"cmd": p.check_command}, check | {"env": 11}]]


@pytest.mark.sandbox
async def test_repl_sends_prelude_then_proof_then_check_on_each_others_env(
    tmp_path: Path, fixed_nonce: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    sent: list[dict[str, Any]] = []
    original = ReplProcess.send

    async def spy(self: ReplProcess, request: dict[str, Any], *, timeout: float) -> dict[str, Any]:
        sent.append(dict(request))
        answer = await original(self, request, timeout=timeout)
        return answer

    monkeypatch.setattr(ReplProcess, "send", spy)
    p = plan()
    extra = synthesised(p, {"messages": [info(2, "'__verihub_check_0' depends on axioms: [propext]")]})
    checker = replay_checker(tmp_path, extra, "file_env")
    try:
        v = await checker.check(DEMO, "by rw [Nat.add_comm]")  # compile answer: recorded
    finally:
        await checker.aclose()
    assert v.status == "proved" and v.axioms == ("propext",), v.reason
    assert [r["cmd"] for r in sent] == [p.prelude, DEMO + " := by rw [Nat.add_comm]", p.check_command]
    assert "env" not in sent[0] and sent[1]["env"] == 10 and sent[2]["env"] == 1


@pytest.mark.sandbox
async def test_repl_recheck_failure_fails_the_proof(tmp_path: Path, fixed_nonce: None) -> None:
    # As if notation ahead of the statement had changed its meaning past the screen: the recorded
    # compile succeeds, and the check against the statement elaborated first does not.
    mismatch = "type mismatch\n  @demo\nhas type\n  ∀ (a b : Nat), a + b = a + b : Prop\nbut is expected"
    extra = synthesised(plan(), {"messages": [error(1, mismatch), error(2, "unknown constant")]})
    checker = replay_checker(tmp_path, extra, "file_env")
    try:
        v = await checker.check(DEMO, "by rw [Nat.add_comm]")
    finally:
        await checker.aclose()
    assert v.status == "failed" and "not the task's statement" in v.reason and "type mismatch" in v.reason


@pytest.mark.sandbox
async def test_repl_axioms_of_the_check_theorem_count(tmp_path: Path, fixed_nonce: None) -> None:
    printed = {"messages": [info(2, "'__verihub_check_0' depends on axioms: [Lean.ofReduceBool]")]}
    other_name = {"messages": [info(2, "'demo' does not depend on any axioms")]}
    for check, status in ((printed, "failed"), (other_name, "error")):
        checker = replay_checker(tmp_path, synthesised(plan(), check), "file_env")
        try:
            v = await checker.check(DEMO, "by rw [Nat.add_comm]")
        finally:
            await checker.aclose()
        assert v.status == status, v.reason


@pytest.mark.sandbox
async def test_repl_statement_that_does_not_elaborate_is_an_error(tmp_path: Path, fixed_nonce: None) -> None:
    prelude = {"messages": [error(2, "unknown identifier 'Foo'")], "env": 10}
    checker = replay_checker(tmp_path, synthesised(plan(), {"messages": []}, prelude), "file_env")
    try:
        v = await checker.check(DEMO, "by rw [Nat.add_comm]")
    finally:
        await checker.aclose()
    assert v.status == "error" and "does not elaborate on its own" in v.reason


@pytest.mark.sandbox
async def test_repl_honours_each_checks_heartbeats_on_one_warm_worker(
    tmp_path: Path, fixed_nonce: None
) -> None:
    ok = {"messages": [info(2, "'__verihub_check_0' does not depend on any axioms")]}
    extra = synthesised(plan(heartbeats=1000), ok) + synthesised(plan(heartbeats=50_000), ok)
    checker = replay_checker(tmp_path, extra, "file_env")
    try:
        low = await checker.check(DEMO, "by rw [Nat.add_comm]", policy=ProofPolicy(max_heartbeats=1000))
        high = await checker.check(DEMO, "by rw [Nat.add_comm]", policy=ProofPolicy(max_heartbeats=50_000))
        unset = await checker.check(DEMO, "by rw [Nat.add_comm]", policy=ProofPolicy(max_heartbeats=7))
    finally:
        await checker.aclose()
    assert low.proved and high.proved, (low.reason, high.reason)
    assert unset.status == "error"  # a budget the stand-in never saw: proves the budget is sent per check
    assert checker.pool.started == 1
