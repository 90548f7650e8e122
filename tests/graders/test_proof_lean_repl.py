"""The Lean REPL protocol layer against recorded real REPL answers (through the replay stand-in).

No Lean runs here: ``lean_replay.py`` serves the answers the real REPL gave, recorded in
``../shared/data/lean_repl``. A few answers to commands the recordings lack (``#print axioms``,
``set_option maxHeartbeats``) are SYNTHESISED below in the REPL's format and named as such.
"""

from __future__ import annotations

import asyncio
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
    TacticSession,
    lean_check,
    parse_statement,
)
from graders.proof.lean_verdict import judge_lean
from hub.review.testing import shared_data_dir

REPLAY = Path(__file__).with_name("lean_replay.py")
# The recordings are part of the shared test data: missing data is an error, never a skip.
DATA = shared_data_dir(Path(__file__).resolve().parent) / "lean_repl"

DEMO = "theorem demo (a b: Nat): a + b = b + a"
DEFAULT = frozenset({"propext", "Classical.choice", "Quot.sound"})


def axioms_answer(name: str, axioms: list[str] | None, *, line: int = 1) -> dict[str, Any]:
    """SYNTHESISED ``#print axioms`` answer, in the format of Lean 4's real output."""
    text = (
        f"'{name}' does not depend on any axioms"
        if not axioms
        else f"'{name}' depends on axioms: [{', '.join(axioms)}]"
    )
    return {
        "messages": [
            {
                "severity": "info",
                "pos": {"line": line, "column": 0},
                "endPos": {"line": line, "column": 6},
                "data": text,
            }
        ],
        "env": 9,
    }


@pytest.fixture(autouse=True)
def fixed_nonce(monkeypatch: pytest.MonkeyPatch) -> None:
    """The re-check's names are random per check; fixed here so the stand-in can match commands."""
    monkeypatch.setattr(lean_check, "new_nonce", lambda: "0")


def recheck_extra(
    statement: str, axioms: list[str] | None, *, heartbeats: int | None = 200_000, check_error: str = ""
) -> list[Any]:
    """SYNTHESISED answers to the re-check's commands (not in the recordings), in the REPL's format.

    The prelude (``set_option`` + ``def``) answers ``{"env": N}`` like the recorded ``def f := 37``
    and ``set_option pp.universes true``; the check command answers with the ``#print axioms`` info
    at its second line, or with ``check_error`` at its first.
    """
    plan = lean_check.plan_recheck(parse_statement(statement, "lean"), max_heartbeats=heartbeats)
    if check_error:
        msg = {"severity": "error", "pos": {"line": 1, "column": 0}, "data": check_error}
        check: dict[str, Any] = {"messages": [msg], "env": 11}
    else:
        check = axioms_answer(plan.check, axioms, line=2) | {"env": 11}
    return [[{"cmd": plan.prelude}, {"env": 10}], [{"cmd": plan.check_command}, check]]


def replay_pool(
    tmp_path: Path,
    *names: str,
    extra: list[Any] | None = None,
    hang_on: str | None = None,
    heartbeats: int | None = None,
) -> ReplPool:
    argv = [sys.executable, str(REPLAY), "--dir", str(DATA), *names]
    if extra:
        path = tmp_path / "synthesised.json"
        path.write_text(json.dumps(extra), encoding="utf-8")
        argv += ["--extra", str(path)]
    if hang_on:
        argv += ["--hang-on", hang_on]
    return ReplPool(
        ReplPoolConfig(
            command=tuple(argv), max_workers=1, memory_mb=None, max_heartbeats=heartbeats, start_timeout_s=10
        )
    )


def _chunks(name: str, suffix: str) -> list[dict[str, Any]]:
    import re

    text = (DATA / f"{name}{suffix}").read_text(encoding="utf-8")
    return [json.loads(c) for c in re.split(r"\n\s*\n", text) if c.strip()]


def _replayable() -> list[str]:
    names = []
    for p in sorted(DATA.glob("*.expected.out")) if DATA.is_dir() else []:
        name = p.name[: -len(".expected.out")]
        try:
            cmds, outs = _chunks(name, ".in"), _chunks(name, ".expected.out")
        except json.JSONDecodeError:
            continue
        if len(cmds) == len(outs):
            names.append(name)
    return names


# -- framing: every recorded exchange parses to the recorded answer ---------------------------


@pytest.mark.sandbox
async def test_every_recorded_transcript_round_trips() -> None:
    names = _replayable()
    assert len(names) >= 40
    for name in names:
        proc = await ReplProcess.spawn([sys.executable, str(REPLAY), "--dir", str(DATA), name])
        try:
            for cmd, expected in zip(_chunks(name, ".in"), _chunks(name, ".expected.out"), strict=True):
                assert await proc.send(cmd, timeout=10) == expected, name
        finally:
            proc.kill()
            await proc.wait()


# -- verdicts on recorded answers -------------------------------------------------------------


@pytest.mark.parametrize("name", ["tactic_sorry", "term_sorry"])
def test_recorded_sorry_answers_fail(name: str) -> None:
    v = judge_lean(
        _chunks(name, ".expected.out")[0],
        name="f",
        allowed_axioms=DEFAULT,
        axioms_response=axioms_answer("f", []),
    )
    assert v.status == "failed" and "sorry" in v.reason and v.goals == ("⊢ Nat",)


def test_recorded_unsolved_goals_are_feedback() -> None:
    v = judge_lean(_chunks("incomplete", ".expected.out")[1], name="f", allowed_axioms=DEFAULT)
    assert v.status == "failed" and "unsolved goals" in v.reason
    assert v.goals == (
        "case pos\nx : Bool\nh✝ : x = true\n⊢ Nat",
        "case neg\nx : Bool\nh✝ : ¬x = true\n⊢ Nat",
    )
    have = judge_lean(_chunks("have_by_sorry", ".expected.out")[0], name="foo", allowed_axioms=DEFAULT)
    assert have.status == "failed" and have.goals


def test_recorded_repl_refusal_is_an_error_not_a_verdict() -> None:
    v = judge_lean(_chunks("unknown_environment", ".expected.out")[0], name="f", allowed_axioms=DEFAULT)
    assert v.status == "error" and "Unknown environment" in v.reason


@pytest.mark.parametrize(
    ("axioms", "status", "reason"),
    [
        ([], "proved", ""),
        (["propext", "Classical.choice", "Quot.sound"], "proved", ""),
        (["propext", "sorryAx"], "failed", "sorryAx"),
        (["Lean.ofReduceBool"], "failed", "native_decide"),
        (["cheat"], "failed", "allow-list: cheat"),
    ],
)
def test_axiom_allow_list(axioms: list[str], status: str, reason: str) -> None:
    v = judge_lean(
        {"env": 1}, name="demo", allowed_axioms=DEFAULT, axioms_response=axioms_answer("demo", axioms)
    )
    assert v.status == status and reason in v.reason


def test_native_decide_allowed_by_policy() -> None:
    allowed = ProofPolicy(allow_native_decide=True).axioms_for("lean")
    v = judge_lean(
        {"env": 1},
        name="d",
        allowed_axioms=allowed,
        axioms_response=axioms_answer("d", ["Lean.ofReduceBool"]),
    )
    assert v.proved


def test_axioms_answer_must_come_from_the_checkers_line() -> None:
    fake = axioms_answer("demo", [])  # at line 1, as if printed by the proof itself
    assert judge_lean(fake, name="demo", allowed_axioms=DEFAULT, axioms_line=7).status == "error"
    assert judge_lean(fake, name="demo", allowed_axioms=DEFAULT, axioms_line=1).proved
    other = axioms_answer("other", [])
    assert judge_lean(other, name="demo", allowed_axioms=DEFAULT, axioms_line=1).status == "error"


# -- the checker over a warm pool -------------------------------------------------------------


@pytest.mark.sandbox
async def test_checker_proves_on_recorded_compile_and_reuses_the_warm_worker(tmp_path: Path) -> None:
    extra = recheck_extra(DEMO, ["propext"])
    pool = replay_pool(tmp_path, "file_env", extra=extra)
    checker = LeanReplChecker(pool, policy=ProofPolicy(timeout_s=5))
    try:
        first = await checker.check(DEMO, "by rw [Nat.add_comm]")
        second = await checker.check(DEMO, f"```lean\n{DEMO} := by rw [Nat.add_comm]\n```")
    finally:
        await checker.aclose()
    assert first.status == "proved", first.reason
    assert first.axioms == ("propext",)
    assert second.status == "proved", second.reason
    assert pool.started == 1


@pytest.mark.sandbox
async def test_import_header_and_heartbeats_are_paid_once(tmp_path: Path) -> None:
    # SYNTHESISED: the set_option answer follows the recorded `set_option pp.universes true` -> {"env": 1}.
    extra = [[{"cmd": "set_option maxHeartbeats 1000", "env": 0}, {"env": 1}]]
    pool = replay_pool(tmp_path, "import_lean", extra=extra, heartbeats=1000)
    try:
        async with pool.lease(("import Lean",)) as worker:
            assert worker.base_env == 1
        async with pool.lease(("import Lean",)) as again:
            assert again is worker
    finally:
        await pool.aclose()
    assert pool.started == 1


@pytest.mark.sandbox
async def test_recorded_failures_fail(tmp_path: Path) -> None:
    extra = recheck_extra("theorem ex : False", [])
    pool = replay_pool(tmp_path, "self_proof_check", extra=extra)
    checker = LeanReplChecker(pool, policy=ProofPolicy(timeout_s=5))
    try:
        # `exact?` may not hide a sorry: the recorded answer is an error.
        v = await checker.check("theorem ex : False", "by exact?")
        # fake success text in a comment changes nothing: the same recorded command is sent
        fake = await checker.check(
            "theorem ex : False", "by exact? -- Lean: no errors. 'ex' does not depend on any axioms"
        )
    finally:
        await checker.aclose()
    assert v.status == "failed" and "could not close the goal" in v.reason
    assert fake.status == "failed"


@pytest.mark.sandbox
async def test_unmatched_command_is_not_a_pass(tmp_path: Path) -> None:
    checker = LeanReplChecker(replay_pool(tmp_path, "file_env"), policy=ProofPolicy(timeout_s=5))
    try:
        v = await checker.check("theorem other : True", "trivial")
    finally:
        await checker.aclose()
    assert v.status == "error" and "replay stand-in" in v.reason


@pytest.mark.parametrize(
    ("proof", "reason"),
    [
        ("by sorry", "forbidden `sorry`"),
        ("by admit", "forbidden `admit`"),
        ("by native_decide", "forbidden `native_decide`"),
        ("by decide +native", "forbidden `+native`"),
        (f"axiom cheat : False\n{DEMO} := cheat.elim", "forbidden `axiom`"),
        ("theorem demo (a b: Nat): a + b = a + b := rfl", "statement was changed"),
        ("theorem demo (a b: Nat): True := trivial", "statement was changed"),
        (f"abbrev Nat := Int\n{DEMO} := by rw [Int.add_comm]", "`Nat` is redefined"),
        (f"section\nvariable (Nat : Type)\n{DEMO} := by rw [Nat.add_comm]", "forbidden `variable`"),
        (f"instance : Add Nat := ⟨fun _ _ => 0⟩\n{DEMO} := rfl", "forbidden `instance`"),
        (f'notation a " + " b => a * b\n{DEMO} := by rw [Nat.mul_comm]', "forbidden `notation`"),
        ("by\n  run_tac Lean.Elab.admitGoal", "forbidden"),
        ("by\n  trace \"'demo' does not depend on any axioms\"\n  rw [Nat.add_comm]", "forbidden `trace`"),
        ("import Mathlib\n" + DEMO + " := by simp", "imports are fixed"),
    ],
)
async def test_lean_hacks_fail_before_lean_runs(tmp_path: Path, proof: str, reason: str) -> None:
    checker = LeanReplChecker(replay_pool(tmp_path, "file_env"), policy=ProofPolicy(timeout_s=5))
    try:
        v = await checker.check(DEMO, proof)
    finally:
        await checker.aclose()
    assert v.status == "failed" and reason in v.reason, v.reason
    assert checker.pool.started == 0


@pytest.mark.sandbox
async def test_looping_proof_is_killed_and_the_worker_replaced(tmp_path: Path) -> None:
    extra = recheck_extra(DEMO, []) + recheck_extra("theorem spin : True", [])
    pool = replay_pool(tmp_path, "file_env", extra=extra, hang_on="spin_forever")
    checker = LeanReplChecker(pool, policy=ProofPolicy(timeout_s=1.0))
    try:
        loop = asyncio.get_running_loop()
        start = loop.time()
        v = await checker.check("theorem spin : True", "by spin_forever")
        assert v.status == "timeout" and "worker replaced" in v.reason
        assert loop.time() - start < 3
        after = await checker.check(DEMO, "by rw [Nat.add_comm]")
    finally:
        await checker.aclose()
    assert after.status == "proved", after.reason
    assert pool.started == 2


# -- tactic mode over proof states ------------------------------------------------------------


@pytest.mark.sandbox
async def test_tactic_session_follows_recorded_proof_states(tmp_path: Path) -> None:
    pool = replay_pool(tmp_path, "readme")
    try:
        session = TacticSession(pool, "def f (x : Unit) : Nat", timeout=5)
        opened = await session.start()
        assert opened.ok and opened.goals == ("x : Unit\n⊢ Nat",)
        step = await session.apply("apply Int.natAbs")
        assert step.ok and not step.completed and step.goals == ("x : Unit\n⊢ Int",)
        done = await session.apply("exact -37")
        assert done.ok and done.completed and session.tactics == ["apply Int.natAbs", "exact -37"]
    finally:
        await pool.aclose()


@pytest.mark.sandbox
async def test_tactic_errors_are_reported_and_not_kept(tmp_path: Path) -> None:
    pool = replay_pool(tmp_path, "invalid_tactic")
    try:
        session = TacticSession(pool, "theorem my_theorem (x : Nat) : x = x", timeout=5)
        assert (await session.start()).ok
        bad = await session.apply("exact my_fake_premise")
        assert not bad.ok and "Unknown identifier" in bad.error and session.tactics == []
    finally:
        await pool.aclose()


@pytest.mark.sandbox
async def test_tactic_session_replays_on_a_fresh_worker(tmp_path: Path) -> None:
    pool = replay_pool(tmp_path, "readme")
    try:
        session = TacticSession(pool, "def f (x : Unit) : Nat", timeout=5)
        await session.start()
        assert (await session.apply("apply Int.natAbs")).ok
        for workers in pool._idle.values():  # the worker dies between steps
            for w in workers:
                w.kill()
                await w.wait()
        done = await session.apply("exact -37")
        assert done.ok and done.completed
        assert pool.started == 2
    finally:
        await pool.aclose()


@pytest.mark.sandbox
async def test_pool_evicts_an_idle_worker_of_another_header(tmp_path: Path) -> None:
    pool = replay_pool(tmp_path, "import_lean")
    try:
        async with pool.lease(("import Lean",)) as first:
            assert first.base_env == 0
        async with pool.lease(()) as second:
            assert second is not first and second.base_env is None
        assert not first.alive or first._proc.returncode is None  # killed asynchronously
        await first.wait()
        assert not first.alive
    finally:
        await pool.aclose()
    assert pool.started == 2


async def test_missing_repl_binary_is_an_error_verdict() -> None:
    pool = ReplPool(ReplPoolConfig(command=("/nonexistent/repl",), max_heartbeats=None))
    v = await LeanReplChecker(pool).check(DEMO, "by rw [Nat.add_comm]")
    assert v.status == "error" and "cannot start the Lean REPL" in v.reason
