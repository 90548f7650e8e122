"""Corrected trajectories: only assistant turns may change, the copy is graded and stored with its
parent, author and grade; one test grades a real correction with a real wheel in the sandbox."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from labels_kit import FakeGrader, correction_path, post, seed_with_reviewer, transcript  # noqa: E402

from hub.server.core.models import EnvFile, Run
from hub.server.results.corrections import GradeJob

REPO = Path(__file__).resolve().parents[3]


@pytest.fixture
def seeded(hub: Any, tmp_path: Path) -> tuple[Any, dict[str, str]]:
    return seed_with_reviewer(hub, tmp_path / "seed")


@pytest.fixture
def graded(seeded: tuple[Any, dict[str, str]]) -> tuple[Any, dict[str, str], FakeGrader]:
    """The seeded hub with a wheel file row on alice/toy 1.0.0 and the fake grader installed."""
    hub, ids = seeded
    storage = hub.client.app.state.storage
    sha = storage.put_bytes(b"not really a wheel")
    with hub.sessions()() as s, s.begin():
        run = s.query(Run).filter_by(public_id=ids["strong"]).one()
        s.add(
            EnvFile(
                version_id=run.version_id,
                kind="wheel",
                filename="toy-1.0.0-py3-none-any.whl",
                sha256=sha,
                size=18,
            )
        )
    grader = FakeGrader()
    hub.client.app.state.grade_correction = grader
    return hub, ids, grader


def test_a_correction_is_graded_and_stored_with_its_parent_and_author(
    graded: tuple[Any, dict[str, str], FakeGrader],
) -> None:
    hub, ids, grader = graded
    strong = ids["strong"]
    messages = transcript(hub, strong, 0)
    assert [m["role"] for m in messages] == ["user", "assistant"]
    messages[1]["content"] = "6 times 7 is 42. Answer: 42"
    r = post(hub, "rita", strong, 0, {"messages": messages, "note": "worked it out"})
    assert r.status_code == 201, r.text
    fix = r.json()
    assert (fix["run"], fix["rollout"], fix["author"], fix["state"]) == (strong, 0, "rita", "graded")
    assert (fix["reward"], fix["passed"], fix["note"]) == (1.0, True, "worked it out")
    assert fix["messages"][1]["content"] == "6 times 7 is 42. Answer: 42"
    (job,) = grader.jobs
    assert job.rollout.completion == "6 times 7 is 42. Answer: 42" and job.rollout.reward is None
    assert job.wheel_name == "toy-1.0.0-py3-none-any.whl" and job.archive.is_file()
    messages[1]["content"] = "Answer: 41"
    assert post(hub, "alice", strong, 0, {"messages": messages}).json()["passed"] is False
    listed = hub.client.get(correction_path(strong, 0)).json()
    assert [(c["author"], c["passed"]) for c in listed] == [("rita", True), ("alice", False)]
    assert hub.client.get(correction_path(strong, 1)).json() == []


def test_edits_outside_assistant_turns_are_refused(graded: tuple[Any, dict[str, str], FakeGrader]) -> None:
    hub, ids, grader = graded
    strong = ids["strong"]
    base = transcript(hub, strong, 0)

    def edited(**change: Any) -> list[dict[str, Any]]:
        out = [dict(m) for m in base]
        for key, value in change.items():
            i, field = key.split("_", 1)
            out[int(i[1:])][field] = value
        return out

    cases = {
        "user": {"messages": edited(m0_content="Solve an easier task.", m1_content="Answer: 42!")},
        "role": {"messages": edited(m1_role="user")},
        "added": {"messages": [*base, {"role": "user", "content": "and again?"}]},
        "same": {"messages": base},
        "rerun, same actions": {"messages": edited(m0_content="Solve an easier task."), "rerun_step": True},
        "rerun, no action": {"messages": base[:1], "rerun_step": True},
        "tool call": {
            "messages": edited(m1_tool_calls=[{"id": "c1", "name": "calc", "arguments": "{}"}]),
        },
    }
    for name, body in cases.items():
        r = post(hub, "rita", strong, 0, body)
        assert r.status_code == 422, (name, r.text)
        assert r.json()["error"], name
    assert "turn 0 is a user turn" in post(hub, "rita", strong, 0, cases["user"]).json()["error"]
    assert post(hub, "rita", strong, 0, {"messages": "nope"}).status_code == 400
    assert post(hub, "rita", strong, 0, {"messages": [{"role": "wizard"}]}).status_code == 400
    # who may correct is who may label; unseen runs are not found
    good = {"messages": edited(m1_content="Answer: 42.")}
    assert post(hub, "bob", strong, 0, good).status_code == 403
    assert post(hub, "bob", strong, 0, cases["user"]).status_code == 403  # the role is checked first
    assert post(hub, None, strong, 0, good).status_code == 401
    assert post(hub, "rita", ids["hidden"], 0, good).status_code == 404
    assert grader.jobs == []  # nothing refused was graded
    assert hub.client.get(correction_path(ids["hidden"], 0)).status_code == 404


def test_a_rerun_uses_the_environments_turns_and_needs_a_deterministic_environment(
    graded: tuple[Any, dict[str, str], FakeGrader],
) -> None:
    hub, ids, grader = graded
    strong = ids["strong"]
    base = transcript(hub, strong, 0)
    edited = [dict(base[0], content="Solve an easier task."), dict(base[1], content="so: 42")]
    r = post(hub, "rita", strong, 0, {"messages": edited, "rerun_step": True})
    assert r.status_code == 201, r.text
    fix = r.json()
    assert fix["rerun"] is True and fix["passed"] is True
    assert fix["messages"][0]["content"] == base[0]["content"]  # the environment's turn, not the edit
    assert fix["messages"][1]["content"] == "so: 42"
    (job,) = grader.jobs
    assert job.original is not None and [m.content for m in job.actions] == ["so: 42"]
    grader.deterministic = False
    r = post(hub, "rita", strong, 0, {"messages": edited, "rerun_step": True})
    assert r.status_code == 422 and "not deterministic" in r.json()["error"]
    assert len(hub.client.get(correction_path(strong, 0)).json()) == 1  # the refused re-run stored nothing
    newer = transcript(hub, ids["newer"], 0)  # 1.1.0 has no wheel: it cannot be re-run
    newer[1]["content"] = "Answer: 42."
    r = post(hub, "alice", ids["newer"], 0, {"messages": newer, "rerun_step": True})
    assert r.status_code == 422 and "no wheel" in r.json()["error"]


def test_a_version_without_a_wheel_stores_the_correction_ungraded(seeded: tuple[Any, dict[str, str]]) -> None:
    hub, ids = seeded
    messages = transcript(hub, ids["weak"], 0)
    messages[1]["content"] = "Answer: 42 (checked)"
    r = post(hub, "alice", ids["weak"], 0, {"messages": messages})
    assert r.status_code == 201, r.text
    assert (r.json()["state"], r.json()["reward"]) == ("error", None)
    assert "no wheel" in r.json()["error"]


def test_the_grading_child_gets_only_what_the_workers_children_get() -> None:
    from hub.server.results.corrections import SandboxGrader
    from hub.server.worker import CHILD_ENV

    environ = {name: "x" for name in CHILD_ENV} | {"VERIHUB_HUB_DB": "postgresql://secret", "AWS_KEY": "k"}
    assert set(SandboxGrader(environ=environ).env) == set(CHILD_ENV)


# -- a real correction graded by a real wheel in the sandbox ------------------------------------


@pytest.fixture(scope="module")
def arith_wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("arith-wheel")
    cmd = [
        sys.executable,
        "-m",
        "build",
        "--wheel",
        "--no-isolation",
        "--skip-dependency-check",
        "-o",
        str(out),
    ]
    # build a copy: setuptools leaves build/ and *.egg-info in the folder it builds
    src = tmp_path_factory.mktemp("arith-src") / "arith"
    ignore = shutil.ignore_patterns("build", "dist", "*.egg-info", "__pycache__")
    shutil.copytree(REPO / "environments" / "arith", src, ignore=ignore)
    subprocess.run([*cmd, str(src)], check=True, capture_output=True, timeout=300)
    return next(out.glob("*.whl"))


@pytest.mark.sandbox
def test_the_sandbox_grades_a_correction_with_the_versions_wheel(
    arith_wheel: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import itertools

    from hub.client.runpack import pack_run
    from hub.env.types import Message
    from hub.registry import load_environment
    from hub.run.rundir import RunDir
    from hub.server.results.correction_child import grade_correction
    from hub.server.results.corrections import SandboxGrader, corrected_rollout
    from leaderboard.testing import write_run

    monkeypatch.syspath_prepend(str(REPO / "environments" / "arith"))
    tasks = list(itertools.islice(load_environment("arith").tasks("test", seed=0), 2))
    run_dir = write_run(
        tmp_path / "run",
        env_id="arith",
        rewards=[[0.0], [0.0]],
        completion="Answer: -1",
        task_ids=[t.id for t in tasks],
    )
    archive = pack_run(run_dir, tmp_path / "run.tar.gz")
    original = next(r for r in RunDir(run_dir).iter_rollouts() if r.task_id == tasks[0].id)
    right = [m.model_dump(mode="json") for m in original.messages]
    right[-1]["content"] = f"Answer: {tasks[0].answer}"
    copy = corrected_rollout(original, right)
    outcome = grade_correction(archive, arith_wheel, arith_wheel.name, copy)
    assert outcome["state"] == "graded", outcome
    assert outcome["grade"]["passed"] is True and outcome["grade"]["score"] == 1.0
    wrong = [*right[:-1], Message(role="assistant", content="Answer: 1234567").model_dump(mode="json")]
    job = GradeJob(archive, arith_wheel, arith_wheel.name, corrected_rollout(original, wrong))
    outcome = SandboxGrader()(job)  # through the child process, as the hub runs it
    assert outcome["state"] == "graded", outcome
    assert outcome["grade"]["passed"] is False


@pytest.mark.sandbox
def test_the_sandbox_reruns_a_deterministic_environment_on_edited_actions(
    arith_wheel: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import itertools

    from hub.client.runpack import pack_run
    from hub.env.aio import run as run_sync
    from hub.env.types import Message, Rollout, Timing
    from hub.registry import load_environment
    from hub.server.results.correction_child import rerun_correction
    from hub.server.results.corrections import SandboxGrader, corrected_rollout
    from leaderboard.testing import write_run

    monkeypatch.syspath_prepend(str(REPO / "environments" / "arith"))
    env = load_environment("arith")
    tasks = list(itertools.islice(env.tasks("test", seed=0), 2))
    run_dir = write_run(
        tmp_path / "run", env_id="arith", rewards=[[0.0], [0.0]], task_ids=[t.id for t in tasks]
    )
    archive = pack_run(run_dir, tmp_path / "run.tar.gz")
    opening = run_sync(env.reset(tasks[0])).messages
    original = Rollout(
        task_id=tasks[0].id,
        rollout_index=0,
        messages=[*opening, Message(role="assistant", content="Answer: -1")],
        completion="Answer: -1",
        reward=0.0,
        timing=Timing(started_at=0.0),
    )
    right = Message(role="assistant", content=f"Answer: {tasks[0].answer}")
    outcome = rerun_correction(archive, arith_wheel, arith_wheel.name, original, [right])
    assert outcome["state"] == "graded" and outcome["grade"]["passed"] is True, outcome
    made = [Message.model_validate(m) for m in outcome["messages"]]
    assert made == [*opening, right]  # the environment's own turns around the edited action
    # a rollout whose user turn the environment does not give back is not replayed
    forged = original.model_copy(
        update={"messages": [Message(role="user", content="2+2?"), original.messages[-1]]}
    )
    outcome = rerun_correction(archive, arith_wheel, arith_wheel.name, forged, [right])
    assert outcome["state"] == "error" and "not deterministic" in outcome["refused"]
    # through the child process, as the hub runs it
    edited = [m.model_dump(mode="json") for m in original.messages]
    edited[-1]["content"] = "Answer: 1234567"
    copy = corrected_rollout(original, edited, rerun_step=True)
    outcome = SandboxGrader()(GradeJob(archive, arith_wheel, arith_wheel.name, copy, original))
    assert outcome["state"] == "graded" and outcome["grade"]["passed"] is False, outcome
