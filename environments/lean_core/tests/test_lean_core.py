"""lean_core: task table, screening of the reference proofs, the three modes over the Lean REPL
protocol (replay stand-in serving recorded real answers), and real Lean where it is installed."""

from __future__ import annotations

import json
import shutil
import sys
from importlib.metadata import entry_points
from pathlib import Path
from typing import Any

import pytest
from verihub_lean_core import (
    MATHLIB_THEOREMS,
    THEOREMS,
    LeanReviseEnv,
    LeanTacticEnv,
    accepted_tactics,
    build_tasks,
    load_environment,
)

from graders.proof import (
    LeanFileChecker,
    LeanNotFoundError,
    LeanReplChecker,
    ProofPolicy,
    ProofVerdict,
    ReplPool,
    ReplPoolConfig,
    lean_check,
    parse_statement,
    prepare,
)
from hub import Message, Rollout, Task, Timing
from hub.review.testing import shared_data_dir

REPO = Path(__file__).resolve().parents[3]
REPLAY = REPO / "tests" / "graders" / "lean_replay.py"
# The recordings are part of the shared test data: missing data is an error, never a skip.
DATA = shared_data_dir(REPO) / "lean_repl"


def replay_checker(tmp_path: Path, *names: str, extra: list[Any] | None = None) -> LeanReplChecker:
    """A REPL checker whose worker is the REPLAY STAND-IN (recorded answers, no Lean)."""
    argv = [sys.executable, str(REPLAY), "--dir", str(DATA), *names]
    if extra:
        (tmp_path / "synthesised.json").write_text(json.dumps(extra), encoding="utf-8")
        argv += ["--extra", str(tmp_path / "synthesised.json")]
    config = ReplPoolConfig(command=tuple(argv), max_workers=1, memory_mb=None, max_heartbeats=None)
    return LeanReplChecker(ReplPool(config), policy=ProofPolicy(timeout_s=5))


@pytest.fixture(autouse=True)
def fixed_nonce(monkeypatch: pytest.MonkeyPatch) -> None:
    """The checker's re-check names are random per check; fixed so the stand-in can match them."""
    monkeypatch.setattr(lean_check, "new_nonce", lambda: "0")


def recheck_extra(statement: str) -> list[Any]:
    """SYNTHESISED answers (not in the recordings) to the checker's re-check commands, in the
    REPL's format: the prelude defines the expected statement; the check's `#print axioms`."""
    plan = lean_check.plan_recheck(parse_statement(statement, "lean"), max_heartbeats=200_000)
    text = f"'{plan.check}' does not depend on any axioms"
    check = {"messages": [{"severity": "info", "pos": {"line": 2, "column": 0}, "data": text}], "env": 11}
    return [[{"cmd": plan.prelude}, {"env": 10}], [{"cmd": plan.check_command}, check]]


def tasks_file(tmp_path: Path, *rows: dict[str, Any]) -> str:
    path = tmp_path / "tasks.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in rows), encoding="utf-8")
    return str(path)


def rollout(task: Task, messages: list[Message]) -> Rollout:
    last = next((m.content or "" for m in reversed(messages) if m.role == "assistant"), "")
    return Rollout(
        task_id=task.id, rollout_index=0, messages=messages, completion=last, timing=Timing(started_at=0)
    )


def test_entry_point_and_tasks() -> None:
    (ep,) = [e for e in entry_points(group="verihub.environments") if e.name == "lean_core"]
    assert ep.value == "verihub_lean_core:load_environment"
    tasks = build_tasks()
    assert len(tasks) == len(THEOREMS) >= 20 and len({t.id for t in tasks}) == len(tasks)
    assert {t.metadata["difficulty"] for t in tasks} == {1, 2, 3}
    assert {t.metadata["topic"] for t in tasks} == {"nat", "bool", "list", "logic"}
    assert not any(t.metadata["mathlib"] for t in tasks)
    with_mathlib = build_tasks(mathlib=True)
    assert len(with_mathlib) == len(THEOREMS) + len(MATHLIB_THEOREMS)
    assert all(t.answer["imports"] == ["import Mathlib"] for t in with_mathlib if t.metadata["mathlib"])


def test_every_reference_proof_passes_the_screen() -> None:
    for th in THEOREMS + MATHLIB_THEOREMS:
        prepared = prepare(
            parse_statement(th.statement, "lean"), th.proof, policy=ProofPolicy(), imports=th.imports
        )
        assert not isinstance(prepared, ProofVerdict), (th.id, prepared)
        assert prepared.source.startswith(th.statement + " := ")


def test_no_lean_error_says_how_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    for var in ("VERIHUB_KIMINA_URL", "VERIHUB_LEAN_REPL", "VERIHUB_LEAN_PROJECT"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("PATH", "/nonexistent")
    with pytest.raises(LeanNotFoundError, match="elan"):
        load_environment()


@pytest.mark.sandbox
async def test_single_mode_over_the_recorded_protocol(tmp_path: Path) -> None:
    demo = {
        "id": "demo",
        "statement": "theorem demo (a b: Nat): a + b = b + a",
        "proof": "by rw [Nat.add_comm]",
    }
    extra = recheck_extra(demo["statement"])
    checker = replay_checker(tmp_path, "file_env", extra=extra)
    env = load_environment(checker=checker, tasks_file=tasks_file(tmp_path, demo))
    task = next(t for t in env.tasks() if t.id == "demo")
    try:
        gold = "```lean\ntheorem demo (a b: Nat): a + b = b + a := by rw [Nat.add_comm]\n```"
        good = await env.grade(task, rollout(task, [Message(role="assistant", content=gold)]))
        hack = await env.grade(task, rollout(task, [Message(role="assistant", content="by sorry")]))
    finally:
        await checker.aclose()
    assert good.passed, good.reason
    assert hack.status == "incorrect" and "sorry" in hack.reason


@pytest.mark.sandbox
async def test_revise_mode_feeds_back_lean_errors(tmp_path: Path) -> None:
    checker = replay_checker(tmp_path, "self_proof_check", extra=recheck_extra("theorem ex : False"))
    row = {"id": "ex", "statement": "theorem ex : False"}
    env = load_environment(mode="revise", checker=checker, tasks_file=tasks_file(tmp_path, row), max_turns=2)
    assert isinstance(env, LeanReviseEnv)
    task = next(t for t in env.tasks() if t.id == "ex")
    try:
        state = await env.reset(task)
        state.turn = 1
        step = await env.step(state, Message(role="assistant", content="```lean\nby exact?\n```"))
    finally:
        await checker.aclose()
    text = step.messages[0].content or ""
    assert not step.terminated and "could not close the goal" in text and "Revise" in text


@pytest.mark.sandbox
async def test_tactic_mode_over_recorded_proof_states(tmp_path: Path) -> None:
    checker = replay_checker(tmp_path, "readme")
    row = {"id": "f", "statement": "def f (x : Unit) : Nat"}
    env = load_environment(mode="tactic", checker=checker, tasks_file=tasks_file(tmp_path, row))
    assert isinstance(env, LeanTacticEnv) and env.max_turns == 16
    task = next(t for t in env.tasks() if t.id == "f")
    try:
        state = await env.reset(task)
        assert "x : Unit\n⊢ Nat" in (state.messages[-1].content or "")
        state.turn = 1
        rejected = await env.step(state, Message(role="assistant", content="sorry"))
        assert "rejected" in (rejected.messages[0].content or "")
        state.turn = 2
        s1 = await env.step(state, Message(role="assistant", content="```lean\napply Int.natAbs\n```"))
        assert not s1.terminated and "x : Unit\n⊢ Int" in (s1.messages[0].content or "")
        state.turn = 3
        s2 = await env.step(state, Message(role="assistant", content="exact -37"))
        assert s2.terminated and "No goals remain" in (s2.messages[0].content or "")
    finally:
        await checker.aclose()
    transcript = [
        Message(role="assistant", content="sorry"),
        *rejected.messages,
        Message(role="assistant", content="```lean\napply Int.natAbs\n```"),
        *s1.messages,
        Message(role="assistant", content="exact -37"),
        *s2.messages,
    ]
    assert accepted_tactics(transcript) == ["apply Int.natAbs", "exact -37"]


@pytest.mark.sandbox
async def test_tactic_mode_reports_recorded_tactic_errors(tmp_path: Path) -> None:
    checker = replay_checker(tmp_path, "invalid_tactic")
    row = {"id": "t", "statement": "theorem my_theorem (x : Nat) : x = x"}
    env = load_environment(mode="tactic", checker=checker, tasks_file=tasks_file(tmp_path, row))
    task = next(t for t in env.tasks() if t.id == "t")
    try:
        state = await env.reset(task)
        state.turn = 1
        step = await env.step(state, Message(role="assistant", content="exact my_fake_premise"))
    finally:
        await checker.aclose()
    assert "Tactic failed: Unknown identifier" in (step.messages[0].content or "")
    graded = await env.grade(
        task, rollout(task, [Message(role="assistant", content="exact my_fake_premise"), *step.messages])
    )
    assert graded.status == "incorrect" and "no tactic" in graded.reason


def test_tactic_mode_needs_the_repl() -> None:
    class Dummy:
        language = "lean"

    with pytest.raises(ValueError, match="REPL"):
        load_environment(mode="tactic", checker=Dummy())  # type: ignore[arg-type]


@pytest.mark.skipif(
    shutil.which("lean") is None, reason="`lean` not on PATH: install Lean 4 with elan to check references"
)
async def test_reference_proofs_pass_real_lean() -> None:
    checker = LeanFileChecker(policy=ProofPolicy(timeout_s=120))
    for th in THEOREMS:
        verdict = await checker.check(th.statement, th.proof, imports=th.imports)
        assert verdict.proved, (th.id, verdict.reason)


def test_attack_generator_is_refused_by_the_screen() -> None:
    """graders.attacks on every theorem (no Lean here: the screen is the layer under test; real
    Lean re-checks the rest in test_reference_proofs_pass_real_lean's setting)."""
    from graders.attacks import proof_cases

    passed = []
    for th in THEOREMS + MATHLIB_THEOREMS:
        for case in proof_cases(th.statement, "lean"):
            prepared = prepare(
                parse_statement(th.statement, "lean"), case.response, policy=ProofPolicy(), imports=th.imports
            )
            if not isinstance(prepared, ProofVerdict):
                passed.append((th.id, case.name))
    assert not passed, passed
