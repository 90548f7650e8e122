"""hub.train.verifiers_adapter: verifiers environments in verihub's runner, and back.

Run INSIDE the verifiers 0.3.1 test venv (tests/hub/test_verifiers_legacy.py starts pytest on
this folder there; tests/hub/vf_venvs.py builds it), never in the main environment.

Small environments are written here (datasets built in code, no network); the model is the
loopback FakeChatServer. Skipped when verifiers is not installed.
"""

from __future__ import annotations

import itertools
import re
from pathlib import Path
from typing import Any

import pytest

from graders.exact import ExactGrader
from hub import MultiTurnEnv, SingleTurnEnv, Task
from hub.env.environment import Environment
from hub.env.types import Message, Rollout, Sampling, State, Step
from hub.run.client import ClientOptions, OpenAIClient
from hub.run.fake_server import FakeChatServer
from hub.run.metrics import Summary
from hub.run.rundir import RunConfig, RunDir
from hub.run.runner import Runner

vf: Any = pytest.importorskip("verifiers", reason="verifiers is not installed (pip install verifiers==0.3.1)")

from hub.train.verifiers_adapter import VerifiersEnv, to_verifiers  # noqa: E402


def _config(env: Environment, *, n: int, rollouts: int = 1, max_turns: int | None = None) -> RunConfig:
    return RunConfig(
        env_id=env.id,
        env_version=env.version,
        env_hash="sha256:test",
        model="fake",
        base_url=None,
        sampling=Sampling(max_tokens=16),
        seed=0,
        split="test",
        num_tasks=n,
        rollouts_per_task=rollouts,
        max_turns=max_turns or env.max_turns,
        verihub_version="0.1.0",
    )


async def run_in_verihub(
    env: Environment, responder: Any, out: Path, *, n: int
) -> tuple[Summary, list[Rollout]]:
    tasks = list(itertools.islice(env.tasks("test"), n))
    rundir = RunDir(out)
    config = _config(env, n=n)
    rundir.create(config)
    async with FakeChatServer(responder=responder) as server:
        opts = ClientOptions(base_url=server.base_url, model="fake", max_retries=0)
        async with OpenAIClient(opts) as client:
            summary = await Runner(env=env, client=client, config=config, rundir=rundir, concurrency=2).run(
                tasks
            )
    return summary, list(rundir.iter_rollouts())


# -- verifiers environments written for these tests --------------------------------------------
def qa_vf_env(*, crash: bool = False) -> Any:
    from datasets import Dataset

    ds = Dataset.from_list([{"question": f"What is {i} + 1?", "answer": str(i + 1)} for i in range(4)])

    def correct(completion: Any, answer: str, **kwargs: Any) -> float:
        if crash:
            raise RuntimeError("reward bug")
        return 1.0 if completion[-1]["content"].strip().endswith(answer) else 0.0

    def short(completion: Any, **kwargs: Any) -> float:
        return 1.0 if len(completion[-1]["content"]) < 20 else 0.0

    rubric = vf.Rubric(funcs=[correct, short], weights=[1.0, 0.5])
    # pass_threshold applies to the raw weighted reward, as in verifiers (here: max 1.5)
    return vf.SingleTurnEnv(
        eval_dataset=ds, rubric=rubric, system_prompt="Reply as: Answer: <n>", pass_threshold=1.0
    )


class GuessEnv(vf.MultiTurnEnv):  # type: ignore[misc]
    """Guess a number in turns; the environment says higher/lower; solved is state."""

    async def setup_state(self, state: Any) -> Any:
        state["solved"] = False
        return state

    @vf.stop  # type: ignore[untyped-decorator]
    async def solved(self, state: Any) -> bool:
        return bool(state.get("solved"))

    async def env_response(self, messages: Any, state: Any, **kwargs: Any) -> Any:
        guess = int(re.findall(r"-?\d+", messages[-1]["content"])[-1])
        target = int(state["answer"])
        if guess == target:
            state["solved"] = True
            return [{"role": "user", "content": "correct"}]
        return [{"role": "user", "content": "higher" if guess < target else "lower"}]


def guess_vf_env() -> Any:
    from datasets import Dataset

    ds = Dataset.from_list([{"question": "Guess my number (0-9).", "answer": a} for a in ("7", "3")])

    def solved_reward(state: Any, **kwargs: Any) -> float:
        return 1.0 if state.get("solved") else 0.0

    def fewer_turns(state: Any, **kwargs: Any) -> float:
        return 1.0 / len(state["trajectory"])

    return GuessEnv(
        eval_dataset=ds, rubric=vf.Rubric(funcs=[solved_reward, fewer_turns], weights=[1.0, 0.0]), max_turns=5
    )


def bisect_responder(request: dict[str, Any]) -> str:
    """Binary search on 0..9 driven by the higher/lower replies in the transcript."""
    lo, hi = 0, 9
    guess = 5
    for m in request["messages"]:
        if m["role"] == "assistant":
            guess = int(m["content"].split()[-1])
        elif m["role"] == "user" and m["content"] in ("higher", "lower"):
            lo, hi = (guess + 1, hi) if m["content"] == "higher" else (lo, guess - 1)
    if request["messages"][-1]["role"] == "user" and request["messages"][-1]["content"] in (
        "higher",
        "lower",
    ):
        return f"Guess {(lo + hi) // 2}"
    return "Guess 5"


def plus_one_responder(request: dict[str, Any]) -> str:
    i = int(request["messages"][-1]["content"].split()[2])
    return f"Answer: {i + 1 if i % 2 == 0 else i}"


# -- direction 1: verifiers -> verihub ---------------------------------------------------------
async def test_single_turn_vf_env_in_verihub_runner(tmp_path: Path) -> None:
    env = VerifiersEnv(qa_vf_env(), id="vf_qa")
    assert env.max_turns == 1
    summary, rollouts = await run_in_verihub(env, plus_one_responder, tmp_path / "run", n=4)
    assert summary.n_errors == 0 and summary.n_rollouts == 4
    by_id = {r.task_id: r for r in rollouts}
    assert by_id["0"].messages[0].content == "Reply as: Answer: <n>"
    good, bad = by_id["0"].grade, by_id["1"].grade
    assert good is not None and bad is not None
    assert good.passed and good.score == 1.0  # (1.0 * 1 + 1.0 * 0.5) / 1.5
    assert [(c.name, c.weight, c.score) for c in good.checks] == [("correct", 1.0, 1.0), ("short", 0.5, 1.0)]
    assert not bad.passed and bad.score == pytest.approx(0.5 / 1.5)
    assert summary.pass_at_k["1"] == 0.5


async def test_multi_turn_vf_env_with_state_and_stop_condition(tmp_path: Path) -> None:
    env = VerifiersEnv(guess_vf_env(), id="vf_guess")
    assert env.max_turns == 5
    summary, rollouts = await run_in_verihub(env, bisect_responder, tmp_path / "run", n=2)
    assert summary.n_errors == 0
    for r in rollouts:
        assert r.passed, r.grade
        assert r.messages[-1].content == "correct" and r.turns >= 2
        assert r.grade is not None and [c.name for c in r.grade.checks] == ["solved_reward"]
        assert f"fewer_turns={1 / r.turns:g}" in r.grade.reason  # metrics recorded, weight 0


async def test_vf_reward_crash_is_a_counted_grader_failure(tmp_path: Path) -> None:
    env = VerifiersEnv(qa_vf_env(crash=True), id="vf_bad")
    summary, rollouts = await run_in_verihub(env, plus_one_responder, tmp_path / "run", n=2)
    # a crash on a response is that response's 0, counted apart, never an error left out of the mean
    assert summary.n_errors == 0 and summary.grader_failures == 2
    assert all(r.grade is not None and r.grade.grader_failed for r in rollouts)
    assert all("reward bug" in r.grade.reason for r in rollouts if r.grade is not None)


def test_load_verifiers_env_by_module(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from hub.env.errors import UsageError
    from hub.train.verifiers_adapter import load_verifiers_env

    (tmp_path / "vf_tiny_env.py").write_text(
        "import verifiers as vf\n"
        "from datasets import Dataset\n"
        "def load_environment(n=2):\n"
        "    ds = Dataset.from_list([{'question': f'q{i}', 'answer': str(i)} for i in range(n)])\n"
        "    return vf.SingleTurnEnv(dataset=ds, rubric=vf.Rubric(funcs=[lambda completion, **k: 1.0]))\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    env = load_verifiers_env("vf_tiny_env", n=3)
    assert env.id == "vf_tiny_env" and [t.id for t in env.tasks("train")] == ["0", "1", "2"]
    with pytest.raises(UsageError, match="pip install it"):
        load_verifiers_env("vf_no_such_module")


# -- direction 2: verihub -> verifiers ---------------------------------------------------------
class CountdownEnv(MultiTurnEnv):
    """verihub multi-turn env: the model must say 'go' after the environment says 'ready'."""

    max_turns = 3

    async def step(self, state: State, action: Message) -> Step:
        if state.turn == 1:
            return Step(messages=(Message(role="user", content="ready"),))
        return Step(terminated=True)


def _vf_client(server: FakeChatServer, monkeypatch: pytest.MonkeyPatch) -> Any:
    from verifiers.types import ClientConfig

    monkeypatch.setenv("VERIHUB_TEST_KEY", "test")
    return ClientConfig(api_base_url=server.base_url, api_key_var="VERIHUB_TEST_KEY", max_retries=0)


def _silent(*args: Any, **kwargs: Any) -> None:
    return None


async def test_verihub_env_in_verifiers_evaluate(monkeypatch: pytest.MonkeyPatch) -> None:
    tasks = [Task(id=f"t{i}", prompt=f"What is {i} + 1?", answer=str(i + 1)) for i in range(4)]
    env = SingleTurnEnv(id="toy", tasks=tasks, grader=ExactGrader())
    vf_env = to_verifiers(env, split="test")
    assert isinstance(vf_env, vf.MultiTurnEnv)
    async with FakeChatServer(responder=plus_one_responder) as server:
        results = await vf_env.evaluate(
            client=_vf_client(server, monkeypatch), model="fake", num_examples=4, on_progress=_silent
        )
    outputs = sorted(results["outputs"], key=lambda o: o["example_id"])
    assert [o["reward"] for o in outputs] == [1.0, 0.0, 1.0, 0.0]
    assert [o["metrics"]["verihub_passed"] for o in outputs] == [1.0, 0.0, 1.0, 0.0]


async def test_multi_turn_verihub_env_in_verifiers(monkeypatch: pytest.MonkeyPatch) -> None:
    class GoGrader:
        async def __call__(self, response: str, *, reference: Any) -> Any:
            from graders.grade import Grade

            return Grade.correct() if response.strip() == reference else Grade.incorrect()

    env = CountdownEnv(
        id="countdown", tasks=[Task(id="c0", prompt="Wait, then say go.", answer="go")], grader=GoGrader()
    )

    def responder(request: dict[str, Any]) -> str:
        return "go" if request["messages"][-1]["content"] == "ready" else "waiting"

    vf_env = to_verifiers(env, split="test")
    async with FakeChatServer(responder=responder) as server:
        results = await vf_env.evaluate(
            client=_vf_client(server, monkeypatch), model="fake", num_examples=1, on_progress=_silent
        )
    (out,) = results["outputs"]
    assert out["reward"] == 1.0
    roles = [m["role"] for m in out["completion"]]
    assert roles[:3] == ["assistant", "user", "assistant"]


def test_installed_api_is_detected_and_named_in_errors(monkeypatch: pytest.MonkeyPatch) -> None:
    from hub.env.errors import UsageError
    from hub.train import verifiers_adapter

    assert verifiers_adapter.installed_api()[0] == "classic"  # 0.3.1 in its test venv
    monkeypatch.setattr(verifiers_adapter, "installed_api", lambda: ("v1", "0.4.0"))
    with pytest.raises(
        UsageError, match=r"verifiers 0\.4\.0 is installed, which has only the verifiers\.v1 API"
    ):
        verifiers_adapter._vf()
    monkeypatch.setattr(verifiers_adapter, "installed_api", lambda: ("none", ""))
    with pytest.raises(UsageError, match=r"verihub\[verifiers-legacy\]"):
        verifiers_adapter._vf()
