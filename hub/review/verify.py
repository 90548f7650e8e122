"""``verihub verify-submission BUNDLE``: re-verify a bundle written by :func:`hub.review.submit.submit`.

:func:`verify_submission` refuses a bundle whose files differ from the manifest, that has files the
manifest does not list, whose recorded summary does not follow from its recorded rollouts
(recomputed with :class:`hub.run.metrics.SummaryBuilder`), whose wheel carries anything but its
import package and metadata or is not the build of its sdist (rebuilt in the sandbox and
compared: the import package's content hash and every entry point), whose evaluated package
is not the bundled wheel (content hash), whose recorded verdicts differ from what the bundled
grader gives when it grades the recorded rollouts again (sandboxed), or whose wheel no longer
passes the check.
"""

from __future__ import annotations

import json
import math
import os
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from hub.env import UsageError, VerihubError
from hub.registry import InstallError, WheelCheck, build_wheel, check_wheel
from hub.review.check import CheckOptions, CheckReport, check
from hub.review.submit import (
    BUNDLE_VERSION,
    MANIFEST,
    Manifest,
    SubmissionError,
    bundle_files,
    file_sha256,
    unpack_sdist,
)
from hub.run import RunDir, Summary, SummaryBuilder
from hub.sandbox import MAX_REASON, clean, host_secrets

__all__ = ["Verification", "bind_wheel_to_sdist", "verify_submission"]


@dataclass
class Verification:
    """What ``verify_submission`` found; ``ok`` when ``problems`` is empty."""

    bundle: Path
    manifest_sha256: str = ""
    problems: list[str] = field(default_factory=list)
    report: CheckReport | None = None

    @property
    def ok(self) -> bool:
        return not self.problems


def _close(a: Any, b: Any, where: str = "") -> list[str]:
    """Paths where two JSON-like values differ (floats compared with a tolerance)."""
    if isinstance(a, float) or isinstance(b, float):
        ok = isinstance(a, (int, float)) and isinstance(b, (int, float)) and math.isclose(a, b, abs_tol=1e-9)
        return [] if ok else [f"{where or '.'}: {a!r} != {b!r}"]
    if isinstance(a, dict) and isinstance(b, dict):
        out = [f"{where}.{k}: only on one side" for k in sorted(set(a) ^ set(b))]
        for k in sorted(set(a) & set(b)):
            out += _close(a[k], b[k], f"{where}.{k}")
        return out
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        if len(a) != len(b):
            return [f"{where}: {len(a)} items != {len(b)}"]
        return [d for i, (x, y) in enumerate(zip(a, b, strict=True)) for d in _close(x, y, f"{where}[{i}]")]
    return [] if a == b else [f"{where or '.'}: {a!r} != {b!r}"]


def _verify_eval(bundle: Path, manifest: Manifest) -> list[str]:
    rundir = RunDir(bundle / "eval")
    try:
        config = rundir.load_config()
        recorded = rundir.load_summary()
        keys = rundir.done_keys()
        rollouts = list(rundir.iter_rollouts())
    except VerihubError as exc:
        return [f"eval: {exc}"]
    problems = []
    if config.env_id != manifest.env_id:
        problems.append(f"eval: evaluated {config.env_id}, the manifest says {manifest.env_id}")
    expected = (config.num_tasks or 0) * config.rollouts_per_task
    if len(keys) != expected:
        problems.append(f"eval: {len(keys)} rollouts recorded, the config implies {expected}")
    builder = SummaryBuilder(
        env_id=recorded.env_id,
        env_version=recorded.env_version,
        model=recorded.model,
        rollouts_per_task=config.rollouts_per_task,
    )
    for t in recorded.per_task:
        builder.add_task(t.task_id)
    rebuilt: Summary = builder.extend(rollouts).build()
    if len(recorded.per_task) != config.num_tasks:
        problems.append(
            f"eval: the summary lists {len(recorded.per_task)} tasks, the config {config.num_tasks}"
        )
    diffs = _close(rebuilt.model_dump(mode="json"), recorded.model_dump(mode="json"))
    if diffs:
        problems.append("eval: summary.json does not match rollouts.jsonl (" + "; ".join(diffs[:3]) + ")")
    return problems


def bind_wheel_to_sdist(sdist: Path, bundled: WheelCheck, *, unsafe: bool = False) -> list[str]:
    """Rebuild the wheel from ``sdist`` in the sandbox and compare it with the bundled wheel's check:
    its import package (content hash) and every entry point it declares, so that a wheel
    repointed at another function of the same files does not pass as the sdist's build."""
    with tempfile.TemporaryDirectory(prefix="verihub-bind-") as tmp:
        try:
            folder = unpack_sdist(sdist, Path(tmp) / "sdist")
            rebuilt = check_wheel(build_wheel(folder, Path(tmp) / "wheels", unsafe=unsafe), bundled.env_id)
        except (InstallError, SubmissionError) as exc:
            return [f"the sdist does not rebuild into a verifiable wheel: {exc}"]
    problems = []
    if rebuilt.content_hash != bundled.content_hash:
        problems.append(
            "the bundled wheel is not the sdist's build: its import package differs from the wheel "
            f"rebuilt from the sdist ({bundled.content_hash} vs {rebuilt.content_hash}); the wheel was "
            "swapped or changed"
        )
    if rebuilt.entry_points != bundled.entry_points:
        problems.append(
            "the bundled wheel is not the sdist's build: its entry points differ from the rebuilt "
            f"wheel's ({_entry_points(bundled)} vs {_entry_points(rebuilt)}); it runs another target"
        )
    return problems


def _entry_points(check: WheelCheck) -> str:
    return ", ".join(f"[{group}] {name} = {target}" for group, name, target in check.entry_points)


def verify_submission(
    bundle: str | os.PathLike[str], *, check_options: CheckOptions | None = None, rerun_check: bool = True
) -> Verification:
    """Re-verify a bundle written by :func:`submit` (see the module docstring). Its problems
    quote the package (a regrade's error, a build's last line): each is capped and stripped of
    this process's secrets, as the check report's lines are."""
    result = _verify(bundle, check_options=check_options, rerun_check=rerun_check)
    secrets = host_secrets()
    result.problems = [clean(p, MAX_REASON, secrets) for p in result.problems]
    return result


def _verify(
    bundle: str | os.PathLike[str], *, check_options: CheckOptions | None, rerun_check: bool
) -> Verification:
    root = Path(bundle)
    result = Verification(bundle=root)
    mpath = root / MANIFEST
    if not mpath.is_file():
        raise UsageError(f"{root} is not a submission bundle (no {MANIFEST})")
    result.manifest_sha256 = file_sha256(mpath)
    try:
        manifest = Manifest.model_validate_json(mpath.read_bytes())
    except ValidationError as exc:
        result.problems.append(f"{MANIFEST} is malformed ({exc.error_count()} problems)")
        return result
    if manifest.bundle_version > BUNDLE_VERSION:
        result.problems.append(
            f"bundle_version {manifest.bundle_version} is newer than this verihub; upgrade"
        )
        return result
    actual = bundle_files(root)
    for rel, digest in manifest.files.items():
        if rel not in actual:
            result.problems.append(f"{rel} is missing")
        elif actual[rel] != digest:
            result.problems.append(f"{rel} was modified (sha256 differs from the manifest)")
    result.problems += [
        f"{rel} is not listed in the manifest" for rel in sorted(set(actual) - set(manifest.files))
    ]
    if result.problems:
        return result
    result.problems += _verify_eval(root, manifest)
    wheels = sorted((root / "dist").glob("*.whl"))
    sdists = sorted((root / "dist").glob("*.tar.gz"))
    if len(wheels) != 1 or len(sdists) != 1:
        result.problems.append("dist/ must hold exactly one wheel and one sdist")
        return result
    config = RunDir(root / "eval").load_config()
    try:
        bundled = check_wheel(wheels[0], manifest.env_id)
    except InstallError as exc:
        result.problems.append(f"the bundled wheel is refused: {exc}")
        return result
    bundled_hash = bundled.content_hash
    if bundled_hash != config.env_hash:
        result.problems.append("the evaluated package is not the bundled wheel (content hashes differ)")
    if rerun_check and not result.problems:
        unsafe = check_options is not None and check_options.unsafe_no_sandbox
        result.problems += bind_wheel_to_sdist(sdists[0], bundled, unsafe=unsafe)
    if rerun_check and not result.problems:
        from hub.review.check.regrade import regrade_sandboxed

        regraded = regrade_sandboxed(
            wheels[0],  # the verified wheel, bound to the sdist above
            root / "eval" / "rollouts.jsonl",
            env_id=manifest.env_id,
            split=config.split,
            seed=config.seed,
            num_tasks=config.num_tasks or 0,
            options=check_options,
        )
        if regraded.error is not None:
            result.problems.append(f"regrading the rollouts failed: {regraded.error}")
        elif regraded.n_differ:
            result.problems.append(
                f"{regraded.n_differ} recorded verdicts differ from the bundled grader's "
                f"(e.g. {regraded.differ[0]})"
            )
        if result.problems:
            return result
        report = check(str(wheels[0]), options=check_options)  # the same verified wheel
        result.report = report
        if not report.passed:
            result.problems.append(f"the check fails now: {', '.join(r.name for r in report.failures())}")
        recorded = json.loads((root / "check" / "report.json").read_text(encoding="utf-8"))
        if recorded.get("passed") != report.passed:
            result.problems.append("the recorded check report disagrees with the check run now")
    return result
