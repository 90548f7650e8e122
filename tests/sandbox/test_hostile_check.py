"""Hostile packages against ``verihub check``, the regrade and ``verihub eval --sandbox``.

Each test has a negative case (the defence switched off: ``unsafe_no_sandbox``, a lenient
channel, or a different setup) that shows the test can fail.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tempfile
import uuid
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

import hub
from hub.review.check import CheckOptions, CheckReport, Limits, check
from hub.review.check.runner import stage_path, start_checked
from hub.run.evaluate import EvalOptions, open_environment
from hub.sandbox import unavailable_reason
from hub.sandbox.channel import Channel, TamperingError
from hub.sandbox.stage import STAGE_PREFIX, make_writable

pytestmark = [
    pytest.mark.sandbox,
    pytest.mark.skipif(unavailable_reason() is not None, reason=str(unavailable_reason())),
]

HOSTILE = Path(__file__).parent / "hostile"
FAST = CheckOptions(num_tasks=10, gold_tasks=8, probe_tasks=2, grade_timeout_s=2.0, limits=Limits(wall_s=90))


def failed(report: CheckReport) -> dict[str, str]:
    return {r.name: r.reason + " | " + " | ".join(r.details) for r in report.failures()}


@pytest.mark.parametrize("sandboxed", [True, False])
def test_build_step_cannot_write_home_or_patch_verihub(sandboxed: bool, tmp_path: Path) -> None:
    """setup.py runs in the sandbox: the stand-in $HOME file and the file in verihub's own
    package are not written (without the sandbox both are)."""
    pkg = tmp_path / "pkg"
    shutil.copytree(HOSTILE / "setup_writes", pkg)
    home = tmp_path / "home"
    home.mkdir()
    in_home = home / ".bashrc"
    in_hub = Path(hub.__file__).resolve().parent / f"_pwned_{uuid.uuid4().hex}.py"
    (pkg / "targets.txt").write_text(f"{in_home}\n{in_hub}\n")
    try:
        report = check(str(pkg), options=replace(FAST, unsafe_no_sandbox=not sandboxed))
        assert report.result("installs") is not None and report.result("installs").status == "pass"  # type: ignore[union-attr]
        assert in_home.exists() is not sandboxed
        assert in_hub.exists() is not sandboxed
        assert report.to_text().startswith("UNSAFE") is not sandboxed
    finally:
        in_hub.unlink(missing_ok=True)


def _lenient_answer(self: Channel, line: bytes) -> None:
    """The channel with its defence removed: lines that answer nothing are dropped."""
    try:
        Channel._strict_answer(self, line)  # type: ignore[attr-defined]
    except TamperingError:
        return


@pytest.mark.parametrize("defended", [True, False])
def test_forged_answers_fail_the_check(defended: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    """The package writes 'passing grades' for guessed request ids into the channel."""
    if not defended:
        monkeypatch.setattr(Channel, "_strict_answer", Channel._answer, raising=False)
        monkeypatch.setattr(Channel, "_answer", _lenient_answer)
    report = check(str(HOSTILE / "forger"), options=FAST)
    if defended:
        fails = failed(report)
        assert "sandbox" in fails and "tampered" in fails["sandbox"], report.to_text()
    else:
        assert report.passed, report.to_text()  # the test depends on the defence


@pytest.mark.parametrize("defended", [True, False])
def test_forged_answers_fail_the_regrade(
    defended: bool, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """verify-submission's regrade runs the same way: the forger's lines end it as tampering."""
    from graders.grade import Grade
    from hub.env.types import Message, Rollout, Timing
    from hub.review.check.regrade import regrade_sandboxed

    if not defended:
        monkeypatch.setattr(Channel, "_strict_answer", Channel._answer, raising=False)
        monkeypatch.setattr(Channel, "_answer", _lenient_answer)
    words = ["apple", "river", "stone"]
    rows = [
        Rollout(
            task_id=f"w{i}",
            rollout_index=0,
            messages=[Message(role="assistant", content=w)],
            completion=w,
            reward=1.0,
            passed=True,
            grade=Grade.correct(),
            timing=Timing(started_at=0.0),
        )
        for i, w in enumerate(words)
    ]
    rollouts = tmp_path / "rollouts.jsonl"
    rollouts.write_text("".join(r.model_dump_json() + "\n" for r in rows))
    result = regrade_sandboxed(
        HOSTILE / "forger", rollouts, env_id="hostile_forger", split="test", seed=0, num_tasks=8, options=FAST
    )
    if defended:
        assert result.error is not None and "tampering" in result.error, result
    else:
        assert result.ok and result.graded == 3, result  # the test depends on the defence


@pytest.mark.parametrize(("memory_mb", "caught"), [(512, True), (4096, False)])
def test_memory_of_all_processes_counts(memory_mb: int, caught: bool) -> None:
    """6 x 100 MiB processes: each under any per-process limit, together over 512 MiB."""
    opts = replace(FAST, limits=Limits(wall_s=90, memory_mb=memory_mb))
    report = check(str(HOSTILE / "proc_memory"), options=opts)
    text = report.to_text()
    assert ("memory:" in text and not report.passed) is caught, text


def _view(env: Any) -> dict[str, Any]:
    try:
        task = next(iter(env.tasks("test")))
        return dict(json.loads(task.prompt))
    finally:
        env.close()


@pytest.mark.parametrize("same_limits", [True, False])
def test_check_and_eval_look_the_same_from_inside(
    same_limits: bool, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What a package sees in the check equals what it sees in `verihub eval --sandbox`; a
    check with other limits (the negative case) is told apart, so the fingerprint can see."""
    work = Path(tempfile.mkdtemp(prefix=STAGE_PREFIX))  # where the check stages
    stage = stage_path((HOSTILE / "fingerprint").resolve(), work, FAST, CheckReport(target="x"))
    assert stage is not None
    opts = FAST if same_limits else replace(FAST, limits=Limits(wall_s=90, memory_mb=2048))
    in_check = _view(start_checked(stage, "hostile_fingerprint", opts))
    monkeypatch.syspath_prepend(str(stage))  # "installed": its metadata is on the path
    in_eval = _view(open_environment("hostile_fingerprint", {}, EvalOptions(sandbox=True)))
    make_writable(work)
    shutil.rmtree(work)
    differ = sorted(k for k in in_check if in_check[k] != in_eval.get(k))
    for k in differ:
        print(k, in_check[k], in_eval.get(k), sep="\n  ")
    assert (differ == []) is same_limits, differ
    if same_limits:
        assert in_check["cwd"] == "/home/sandbox" and in_check["pid"] == 2 and in_check["uid"] == 65534


def test_missing_bubblewrap_is_one_clear_line() -> None:
    from hub.env.errors import UsageError
    from hub.sandbox import bwrap

    with pytest.MonkeyPatch.context() as mp:
        bwrap.unavailable_reason.cache_clear()
        mp.setattr(bwrap.shutil, "which", lambda name: None)
        try:
            with pytest.raises(UsageError, match="apt-get install bubblewrap") as exc:
                check(str(HOSTILE / "forger"), options=FAST)
            assert "\n" not in str(exc.value)
            with pytest.raises(UsageError, match="apt-get install bubblewrap"):
                open_environment("arith", {}, EvalOptions(sandbox=True))
        finally:
            bwrap.unavailable_reason.cache_clear()
    assert unavailable_reason() is None  # here, with bubblewrap installed, the same call passes


def test_run_check_takes_a_built_wheel(tmp_path: Path) -> None:
    """The hub server's entry point: a wheel is unpacked (no build step) and checked the same way."""
    from hub.review.check import run_check

    bad = Path(__file__).parents[1] / "hub" / "bad_envs" / "pass_all"
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "-q",
            "--no-deps",
            "--no-build-isolation",
            "-w",
            str(tmp_path),
            str(bad),
        ],
        check=True,
        capture_output=True,
    )
    wheel = next(tmp_path.glob("*.whl"))
    report = run_check(wheel, options=FAST)
    fails = failed(report)
    assert report.result("installs") is not None and "unpacked" in report.result("installs").reason  # type: ignore[union-attr]
    assert "hacking_probes" in fails, report.to_text()


def test_no_user_namespaces_is_one_clear_line(tmp_path: Path) -> None:
    """A bubblewrap that cannot make namespaces (a kernel with them off) is named, not hidden."""
    from hub.env.errors import UsageError
    from hub.sandbox import bwrap

    fake = tmp_path / "bwrap"
    fake.write_text("#!/bin/sh\necho 'bwrap: No permissions to create new namespace' >&2\nexit 1\n")
    fake.chmod(0o755)
    with pytest.MonkeyPatch.context() as mp:
        bwrap.unavailable_reason.cache_clear()
        mp.setattr(bwrap.shutil, "which", lambda name: str(fake))
        try:
            with pytest.raises(UsageError, match="user namespaces") as exc:
                check(str(HOSTILE / "forger"), options=FAST)
            assert "\n" not in str(exc.value) and "No permissions" in str(exc.value)
        finally:
            bwrap.unavailable_reason.cache_clear()
    assert unavailable_reason() is None
