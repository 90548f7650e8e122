"""Red-team fixtures for `verihub check`: bad or malicious packages that once passed, now caught."""

from __future__ import annotations

import dataclasses
import json
import os
import random
import re
import shutil
import socket
import threading
import time
from pathlib import Path

import pytest

from hub.env.types import Task
from hub.review.check import CheckOptions, CheckReport, Limits, check
from hub.review.check.probes import other_answers, perturb_randomly

BAD = Path(__file__).parent / "bad_envs"
FAST = CheckOptions(num_tasks=10, gold_tasks=8, probe_tasks=2, grade_timeout_s=1.5, limits=Limits(wall_s=60))
WORDS = ["apple", "river", "stone", "cloud", "tiger", "maple", "ocean", "piano"]


def failed(report: CheckReport) -> dict[str, str]:
    return {r.name: r.reason + " | " + " | ".join(r.details) for r in report.failures()}


@pytest.mark.parametrize(
    ("name", "check_name", "reason"),
    [
        # ids unique / stable on the first tasks, duplicated / random after them (a generator)
        ("late_dup_ids", "task_ids", "not unique"),
        ("late_random_ids", "task_ids", "differ between two loads"),
        # passes long answers in the window the fixed probes leave open (short ones vs 200k and 1M)
        ("length_window", "hacking_probes", "probe 'long filler (2,000 to 8,000 characters)' on w0 passed"),
        # exact on the test split, lax on train (where RL trains)
        ("train_lenient", "hacking_probes", "probe 'empty' on train-w0 passed"),
        # tasks that follow the hash seed: the same within a process, different across processes
        ("hash_order", "determinism", "tasks differ for the same seed between two processes"),
        # "not passed" but full reward: training pays the hack all the same
        ("score_not_passed", "hacking_probes", "probe 'empty' on w0 passed"),
        ("score_not_passed", "perturbed_gold", "scored 1 (not passed, but rewarded)"),
        # exact where a reference exists, lax on the tasks without one (most of them)
        ("partial_gold", "gold", "7 of 8 sampled tasks have no reference answer"),
        # passes any plausible wrong answer that is not shaped like a known probe or perturbation
        ("probe_detector", "hacking_probes", "the answers of 3 other tasks all passed on w0"),
    ],
)
@pytest.mark.sandbox
def test_redteam_environment_is_caught(name: str, check_name: str, reason: str) -> None:
    report = check(str(BAD / name), options=FAST)
    fails = failed(report)
    assert not report.passed
    assert check_name in fails, report.to_text()
    assert reason in fails[check_name], report.to_text()


@pytest.mark.sandbox
def test_a_probe_detector_is_paid_by_the_random_perturbation() -> None:
    """The random perturbation replaces a word's first letter with one of the 25 others, so it
    takes the detector's one known shape (first letter + 1) once in 25 tries: on one task it can
    be refused by chance, on all eight probed tasks only once in 25**8 checks."""
    report = check(str(BAD / "probe_detector"), options=dataclasses.replace(FAST, probe_tasks=len(WORDS)))
    fails = failed(report)
    assert "hacking_probes" in fails, report.to_text()
    assert re.search(r"probe 'randomly perturbed reference' on w\d passed", fails["hacking_probes"]), (
        report.to_text()
    )


@pytest.mark.sandbox
def test_read_through_proc_self_root_is_reported(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The host's ``VERIHUB_TEST_LEAK`` does not reach the sandbox (its environment is an
    allow-list), so the package reads its default path through /proc/self/root: reported."""
    leak = tmp_path / "verihub-leaked-answers.json"
    leak.write_text(json.dumps({f"w{i}": w for i, w in enumerate(WORDS)}))
    monkeypatch.setenv("VERIHUB_TEST_LEAK", str(leak))
    report = check(str(BAD / "proc_root_read"), options=FAST)
    fails = failed(report)
    assert "file_access" in fails, report.to_text()
    assert "/tmp/verihub-leaked-answers.json" in fails["file_access"]
    assert str(leak) not in report.to_text()


@pytest.mark.sandbox
def test_unix_socket_to_a_local_service_is_a_network_call() -> None:
    path = "/tmp/verihub-redteam.sock"
    if os.path.exists(path):
        os.unlink(path)
    got: list[bytes] = []
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as srv:
        srv.bind(path)
        srv.listen(50)

        def serve() -> None:
            while True:
                try:
                    conn, _ = srv.accept()
                except OSError:
                    return
                with conn:
                    got.append(conn.recv(100))

        threading.Thread(target=serve, daemon=True).start()
        try:
            report = check(str(BAD / "unix_socket"), options=FAST)
        finally:
            os.unlink(path)
    fails = failed(report)
    assert "network" in fails and "unix socket" in fails["network"], report.to_text()
    assert got == []  # blocked, not just reported


@pytest.mark.sandbox
def test_no_process_outlives_the_check(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    mark = tmp_path / "daemon-alive"
    monkeypatch.setenv("VERIHUB_TEST_MARK", str(mark))
    report = check(str(BAD / "daemon"), options=FAST)
    assert "pid" in report.isolation
    time.sleep(3.5)  # the daemon sleeps 2s, then writes the mark
    assert not mark.exists(), "a process started by the environment outlived the check"


def test_random_perturbations_are_wrong_and_unforeseeable() -> None:
    rng = random.Random(7)
    numbers = {perturb_randomly("42", [], rng) for _ in range(20)}
    assert "42" not in numbers and "43" not in numbers and len(numbers) > 10
    assert all(abs(int(n) - 42) >= 2 for n in numbers)
    words = {perturb_randomly("steam engine", ["Steam engine"], rng) for _ in range(20)}
    assert len(words) > 10
    for w in words:
        a, b = w.split(" ")
        assert a[0] != "s" and a[1:] == "team" and b[0] != "e" and b[1:] == "ngine"
    assert perturb_randomly("", [], rng) != ""


def test_other_answers_skip_equal_references() -> None:
    tasks = [
        Task(id=f"t{i}", prompt="p", answer=a) for i, a in enumerate(["5", "5.0", "Apple", "7", "8", "9"])
    ]
    assert other_answers(object(), tasks[0], tasks) == ["Apple", "7", "8"]
    aliased = Task(id="a", prompt="p", answer=["apple", "7"])
    assert other_answers(object(), aliased, tasks, k=2) == ["5", "8"]


@pytest.mark.sandbox
def test_symlink_out_of_the_package_is_refused_before_it_is_copied(tmp_path: Path) -> None:
    secret = tmp_path / "secret-answers.json"
    secret.write_text(json.dumps({"w0": "apple"}))
    pkg = tmp_path / "pkg"
    shutil.copytree(BAD / "symlink_leak", pkg)
    (pkg / "bad_symlink_leak" / "answers.json").symlink_to(secret)
    report = check(str(pkg), options=FAST)
    fails = failed(report)
    assert "installs" in fails and "answers.json -> " in fails["installs"], report.to_text()
    assert "file_access" in fails
    # without the link the same package passes
    (pkg / "bad_symlink_leak" / "answers.json").unlink()
    assert check(str(pkg), options=FAST).passed


@pytest.mark.sandbox
def test_processes_the_package_starts_are_reported() -> None:
    report = check(str(BAD / "daemon"), options=FAST)
    access = report.result("file_access")
    assert access is not None and access.status == "warn", report.to_text()
    assert "started processes" in access.reason and "subprocess.Popen" in access.details[0]


@pytest.mark.sandbox
def test_forged_event_stream_is_caught() -> None:
    report = check(str(BAD / "forged_events"), options=FAST)
    assert not report.passed, report.to_text()


@pytest.mark.sandbox
def test_nothing_outside_the_run_directory_is_writable(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    mark = tmp_path / "pwned"
    monkeypatch.setenv("VERIHUB_TEST_MARK", str(mark))
    report = check(str(BAD / "shell_write"), options=FAST)
    assert "read-only binds" in report.isolation
    assert not mark.exists(), "a child process of the environment wrote outside the run directory"
    access = report.result("file_access")
    assert access is not None and access.status == "warn" and "subprocess.Popen" in access.details[0]


@pytest.mark.sandbox
def test_secrets_and_other_processes_are_hidden(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("VERIHUB_BENCH_KEY", "sk-not-for-the-package")
    report = check(str(BAD / "env_secrets"), options=FAST)
    loads = report.result("loads")
    assert loads is not None and "saw secrets" not in loads.reason, report.to_text()
    assert loads.status == "pass", report.to_text()
