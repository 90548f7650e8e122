"""verihub check: good environments pass; each deliberately bad one is caught for the right reason."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

import hub.cli
from hub.cli import authoring, hubcmds  # noqa: F401  (register the commands)
from hub.env.errors import UsageError
from hub.env.types import Task
from hub.review.check import CheckOptions, CheckReport, Limits, check
from hub.review.check.probes import gamed, gold_response, hacking_probes, perturb

BAD = Path(__file__).parent / "bad_envs"
FAST = CheckOptions(num_tasks=10, gold_tasks=8, probe_tasks=2, grade_timeout_s=1.5, limits=Limits(wall_s=60))


def failed(report: CheckReport) -> dict[str, str]:
    return {r.name: r.reason + " | " + " | ".join(r.details) for r in report.failures()}


@pytest.mark.sandbox
def test_installed_good_environment_passes_every_check() -> None:
    report = check("textops", options=FAST)
    assert report.passed, report.to_text()
    assert report.env_id == "textops" and report.version == "0.1.0"
    assert {r.name for r in report.results if r.status == "pass"} >= {
        "installs",
        "loads",
        "readme",
        "licence",
        "data_source",
        "task_ids",
        "determinism",
        "gold",
        "perturbed_gold",
        "hacking_probes",
        "grading_time",
        "grader_errors",
        "file_access",
        "network",
    }


@pytest.mark.parametrize(
    ("name", "check_name", "reason"),
    [
        ("pass_all", "hacking_probes", "probe 'empty'"),
        ("pass_all_no_gold", "hacking_probes", "probe 'empty' on w0 (no reference answer) passed"),
        ("reads_file", "file_access", "verihub-leaked-answers.json"),
        ("socket", "network", "93.184.216.34"),
        ("hang", "grading_time", "hung"),
        ("random_ids", "task_ids", "differ between two loads"),
        ("raises", "grader_errors", "ValueError"),
        ("raises_total", "grader_errors", "grader_failed: ValueError"),
        ("random_prompts", "determinism", "tasks differ for the same seed"),
        ("partial_grader", "perturbed_gold", "'bpple' passed (gold 'apple')"),
        ("no_readme", "readme", "no README"),
        ("no_data_source", "data_source", "must name the data source"),
        ("memory_hog", "grader_errors", "MemoryError: the grader ran past the memory limit (4096 MiB)"),
    ],
)
@pytest.mark.sandbox
def test_bad_environment_is_caught(name: str, check_name: str, reason: str, tmp_path: Path) -> None:
    leak = Path("/tmp/verihub-leaked-answers.json")
    if name == "reads_file":
        leak.write_text(json.dumps({"w0": "apple"}))
    try:
        report = check(str(BAD / name), options=FAST)
    finally:
        leak.unlink(missing_ok=True) if name == "reads_file" else None
    fails = failed(report)
    assert not report.passed
    assert check_name in fails, report.to_text()
    assert reason in fails[check_name], report.to_text()
    if name == "pass_all":
        assert "perturbed_gold" in fails
    if name in ("random_prompts", "partial_grader", "no_data_source"):  # caught for that reason alone
        # (the first-letter-blind grader also passes the randomly perturbed reference: a probe)
        alone = {check_name, "hacking_probes"} if name == "partial_grader" else {check_name}
        assert set(fails) <= alone and check_name in fails, report.to_text()


@pytest.mark.sandbox
def test_grader_killed_by_the_cpu_limit_is_reported_as_such() -> None:
    opts = replace(FAST, grade_timeout_s=30.0, limits=Limits(wall_s=60, cpu_s=4))
    report = check(str(BAD / "cpu_hog"), options=opts)
    fails = failed(report)
    assert "grading_time" in fails, report.to_text()
    assert "killed by the CPU limit of 4s" in fails["grading_time"]
    assert "grading gold of w0" in fails["grading_time"]


@pytest.mark.sandbox
def test_writing_into_its_own_package_is_reported_and_blocked() -> None:
    report = check(str(BAD / "writes_package"), options=FAST)
    fails = failed(report)
    assert "file_access" in fails and "bad_writes_package/grader_mode.txt" in fails["file_access"]
    probes = report.result("hacking_probes")
    # the read-only bind stopped the tampering: the grader stayed exact
    assert "read-only binds" in report.isolation
    assert probes is not None and probes.status == "pass", report.to_text()


def test_not_a_package_or_id() -> None:
    with pytest.raises(UsageError, match="verihub list"):
        check("definitely_not_an_env")


def test_probes_and_perturbations() -> None:
    task = Task(id="t", prompt="What is 2 + 3?", answer="5", metadata={})
    assert perturb("5") == "6" and perturb("apple") == "bpple" and perturb("") == "x"
    assert perturb("steam engine") == "tteam fngine"
    assert perturb("1957", ["1957", "1958"]) == "1959"
    probes = dict(hacking_probes(task, "5"))
    assert probes["every option"] == "2 3 4 5 6 7 8"
    assert probes["copy of the prompt"] == "What is 2 + 3?"
    assert len(probes["huge output"]) >= 1_000_000
    assert "5" not in probes.values()
    choice = Task(id="c", prompt="Pick", answer="B", metadata={"choices": ["A", "B", "C"]})
    assert dict(hacking_probes(choice, "B"))["every option"] == "A B C"

    class WithHook:
        def gold_response(self, task: Task) -> str:
            return f"Answer: {task.answer}"

    assert gold_response(WithHook(), task) == "Answer: 5"
    assert gold_response(object(), Task(id="x", prompt="p", answer=["a", "b"])) == "a"
    assert gold_response(object(), Task(id="x", prompt="p", answer={"k": 1})) is None


def test_probe_verdicts_with_and_without_gold() -> None:
    outcomes = [("empty", False), ("every option", True), ("injection", False)]
    assert gamed(outcomes, has_gold=True) == ["every option"]
    # without a reference, a list of options may honestly meet an instruction ("use no commas")
    assert gamed(outcomes, has_gold=False) == []
    assert gamed([("empty", True), ("injection", False)], has_gold=False) == ["empty"]
    # ... but a grader that passes every probe at once does not look at the answer
    assert gamed([("every option", True), ("injection", True)], has_gold=False) == ["all 2 probes"]
    assert gamed([], has_gold=False) == []


@pytest.mark.sandbox
def test_cli_check_json_and_exit_code(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "report.json"
    with pytest.raises(SystemExit) as exc:
        hub.cli.main(
            [
                "check",
                str(BAD / "no_licence"),
                "--json",
                "--out",
                str(out),
                "--num-tasks",
                "5",
                "--gold-tasks",
                "3",
                "--probe-tasks",
                "1",
            ]
        )
    assert exc.value.code == 1
    printed = json.loads(capsys.readouterr().out)
    assert printed["passed"] is False and json.loads(out.read_text())["passed"] is False
    report = CheckReport.model_validate(printed)  # the missing licence is caught, and nothing else
    assert {r.name: r.reason for r in report.failures()} == {
        "licence": 'no licence in the metadata: add license = { text = "SPDX-ID" } to [project]'
    }
    assert "bubblewrap sandbox" in report.isolation and not report.unsafe


def test_hacking_probes_include_the_attack_generators_hedges() -> None:
    """graders.attacks' hedge family rides along with the check's probes."""
    probes = dict(hacking_probes(Task(id="t", prompt="What is 6 x 7?", answer="42"), "42"))
    later = probes["attack: alternative on the next line"]
    assert later.startswith("Answer: 42\nor ") and "42" not in later.split("\n")[1]
    assert {"attack: alternatively", "attack: box or", "attack: two hash lines"} <= set(probes)
