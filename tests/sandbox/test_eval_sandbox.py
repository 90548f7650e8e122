"""``verihub eval --sandbox`` gives the same run as the in-process evaluation."""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path
from typing import Any

import pytest

from hub.review.check import CheckOptions, CheckReport
from hub.review.check.runner import stage_path
from hub.run.evaluate import EvalOptions, evaluate
from hub.run.fake_server import FakeChatServer
from hub.run.rundir import RunDir
from hub.sandbox import unavailable_reason
from hub.sandbox.stage import STAGE_PREFIX, make_writable

pytestmark = [
    pytest.mark.sandbox,
    pytest.mark.skipif(unavailable_reason() is not None, reason=str(unavailable_reason())),
]

ENVS = Path(__file__).parent / "envs"


def _rewards(out: Path) -> list[tuple[str, int, float | None, int]]:
    return sorted((r.task_id, r.rollout_index, r.reward, r.turns) for r in RunDir(out).iter_rollouts())


def _answer(request: dict[str, Any]) -> str:
    """'What is i + 1?' answered right for even i, wrong for odd i (whatever came after it)."""
    first = next(m["content"] for m in request["messages"] if m["role"] == "user")
    i = int(first.split()[2]) if first.startswith("What is") else 0
    return f"Answer: {i + 1 if i % 2 == 0 else i}"


@pytest.mark.parametrize("env_id", ["arith", "sandbox_echo_turns"])
async def test_sandboxed_run_equals_in_process(
    env_id: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    if env_id == "sandbox_echo_turns":  # "install" the fixture: its metadata on the path
        work = Path(tempfile.mkdtemp(prefix=STAGE_PREFIX))
        stage = stage_path((ENVS / "echo_turns").resolve(), work, CheckOptions(), CheckReport(target="x"))
        assert stage is not None
        shutil.copytree(stage, tmp_path / "site")
        make_writable(work)
        shutil.rmtree(work)
        monkeypatch.syspath_prepend(str(tmp_path / "site"))
    summaries = {}
    async with FakeChatServer(responder=_answer) as fake_server:
        for sandbox in (False, True):
            summaries[sandbox] = await evaluate(
                env_id,
                model="fake",
                base_url=fake_server.base_url,
                out=tmp_path / f"run-{sandbox}",
                num_tasks=6,
                rollouts=2,
                options=EvalOptions(concurrency=4, sandbox=sandbox),
            )
    assert summaries[True].mean_reward == summaries[False].mean_reward
    assert _rewards(tmp_path / "run-True") == _rewards(tmp_path / "run-False")
    if env_id == "sandbox_echo_turns":  # the sandbox kept each rollout's state: a second turn each
        assert {t for _, _, _, t in _rewards(tmp_path / "run-True")} == {2}
        assert summaries[True].mean_reward > 0


@pytest.mark.parametrize("dies", [True, False])
async def test_a_sandbox_that_dies_stops_the_run(
    dies: bool, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Killed mid-run (here: by the test, as a limit would), the run stops with one line naming
    the cause instead of recording the same error on every later rollout."""
    from hub.env.errors import EnvironmentGoneError
    from hub.sandbox.remote import RemoteEnvironment

    grade = RemoteEnvironment.grade
    calls: list[int] = []

    async def killing_grade(self: RemoteEnvironment, task: Any, rollout: Any) -> Any:
        calls.append(1)
        if dies and len(calls) == 3:
            self.box.kill()
            self.box.proc.wait()
        return await grade(self, task, rollout)

    monkeypatch.setattr(RemoteEnvironment, "grade", killing_grade)
    async with FakeChatServer(responder=_answer) as server:
        run = evaluate(
            "arith",
            model="fake",
            base_url=server.base_url,
            out=tmp_path / "run",
            num_tasks=20,
            options=EvalOptions(concurrency=1, sandbox=True),
        )
        if dies:
            with pytest.raises(EnvironmentGoneError, match="sandboxed environment arith stopped") as exc:
                await run
            assert "\n" not in str(exc.value)
        else:
            assert (await run).n_rollouts == 20


def test_a_grader_sees_the_same_rollout_in_check_and_eval() -> None:
    """The check builds its rollouts, an evaluation runs them: what crosses into the sandbox
    for grading is the same (timing, usage and runner fields are left behind); the transcript
    itself is what tells them apart, and must."""
    from hub.env.types import Message, Rollout, Timing, Usage
    from hub.sandbox.remote import _for_grading

    msgs = [Message(role="user", content="What is 1 + 1?"), Message(role="assistant", content="2")]
    checked = Rollout(
        task_id="t", rollout_index=0, messages=msgs, completion="2", turns=1, timing=Timing(started_at=1.0)
    )
    evaluated = checked.model_copy(
        update={
            "usage": Usage(prompt_tokens=12, completion_tokens=3),
            "timing": Timing(started_at=5.0, model_s=0.4),
        }
    )
    assert _for_grading(checked) == _for_grading(evaluated)
    other = checked.model_copy(update={"completion": "3"})
    assert _for_grading(other) != _for_grading(evaluated)
