"""Submission bundles: ``verihub submit PATH`` and ``verihub verify-submission BUNDLE``.

A bundle is a folder::

    dist/            the sdist and the wheel built from it (``python -m build``)
    check/           report.json and report.txt of ``verihub check`` on the unpacked sdist
    eval/            config.json, rollouts.jsonl and summary.json of a smoke evaluation
    manifest.json    bundle_version, environment id and version, and the sha256 of every file

``verify_submission`` refuses a bundle whose files differ from the manifest, that has files the
manifest does not list, whose recorded summary does not follow from its recorded rollouts
(recomputed with :class:`hub.run.metrics.SummaryBuilder`), whose recorded verdicts differ from
what the bundled grader gives when it grades the recorded rollouts again (sandboxed), whose
evaluated package is not the
bundled wheel (content hash), or whose sdist no longer passes the check. The manifest itself is
not signed: compare its sha256 (printed by both commands) with the one posted with the submission.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field, ValidationError

from hub.env.errors import UsageError, VerihubError
from hub.registry.install import unpack_wheel, wheel_package_hash
from hub.review.check import CheckOptions, CheckReport, check
from hub.run.metrics import Summary, SummaryBuilder
from hub.run.rundir import RunDir

__all__ = [
    "BUNDLE_VERSION",
    "Manifest",
    "SubmissionError",
    "Verification",
    "file_sha256",
    "submit",
    "verify_submission",
]

BUNDLE_VERSION = 1
MANIFEST = "manifest.json"


class SubmissionError(VerihubError):
    """A submission could not be built, or a bundle failed verification."""


class Manifest(BaseModel):
    """Contents of ``manifest.json``."""

    bundle_version: int = BUNDLE_VERSION
    env_id: str
    distribution: str
    version: str
    created_at: float = Field(default_factory=time.time)
    verihub_version: str
    check_passed: bool
    smoke_eval: dict[str, Any] = Field(description="model, num_tasks, rollouts, mean_reward, isolation.")
    files: dict[str, str] = Field(description="Relative path -> sha256:<hex> of every other file.")


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


def file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            digest.update(chunk)
    return "sha256:" + digest.hexdigest()


def _files(root: Path) -> dict[str, str]:
    manifest = root / MANIFEST
    return {
        p.relative_to(root).as_posix(): file_sha256(p)
        for p in sorted(root.rglob("*"))
        if p.is_file() and p != manifest
    }


def _build(src: Path, dist: Path) -> tuple[Path, Path]:
    try:
        import build  # noqa: F401
    except ModuleNotFoundError as exc:
        raise SubmissionError("building a submission needs the `build` package: pip install build") from exc
    with tempfile.TemporaryDirectory(prefix="verihub-build-") as tmp:
        copy = Path(tmp) / "src"
        shutil.copytree(
            src,
            copy,
            ignore=shutil.ignore_patterns(
                "__pycache__", "*.pyc", ".git", "build", "dist", "*.egg-info", ".venv"
            ),
        )
        cmd = [
            sys.executable,
            "-m",
            "build",
            "--no-isolation",
            "--skip-dependency-check",
            "--outdir",
            str(dist),
            str(copy),
        ]
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=600, check=False)
    if proc.returncode != 0:
        lines = [ln for ln in (proc.stderr + proc.stdout).splitlines() if ln.strip()]
        raise SubmissionError(f"python -m build failed: {lines[-1] if lines else 'no output'}")
    sdists, wheels = sorted(dist.glob("*.tar.gz")), sorted(dist.glob("*.whl"))
    if len(sdists) != 1 or len(wheels) != 1:
        raise SubmissionError(f"expected one sdist and one wheel in {dist}")
    return sdists[0], wheels[0]


def _unpack_sdist(sdist: Path, dest: Path) -> Path:
    with tarfile.open(sdist) as tf:
        for member in tf.getmembers():
            target = (dest / member.name).resolve()
            if not target.is_relative_to(dest.resolve()) or member.issym() or member.islnk():
                raise SubmissionError(f"{sdist.name} contains an unsafe member {member.name!r}")
        if hasattr(tarfile, "data_filter"):
            tf.extractall(dest, filter="data")
        else:  # pragma: no cover (old Pythons: members were checked above)
            tf.extractall(dest)  # noqa: S202
    tops = [p for p in dest.iterdir() if p.is_dir()]
    if len(tops) != 1:
        raise SubmissionError(f"{sdist.name} does not unpack to one folder")
    return tops[0]


def _wheel_env(wheel: Path) -> tuple[str, str, str]:
    """(environment id, distribution name, version) from the wheel's metadata."""
    from email.parser import Parser

    with tempfile.TemporaryDirectory() as tmp:
        root = unpack_wheel(wheel, Path(tmp))
        info = next(root.glob("*.dist-info"))
        meta = Parser().parsestr((info / "METADATA").read_text(encoding="utf-8"))
        eps = (
            (info / "entry_points.txt").read_text(encoding="utf-8")
            if (info / "entry_points.txt").exists()
            else ""
        )
    section = eps.split("[verihub.environments]", 1)
    names = (
        [ln.split("=", 1)[0].strip() for ln in section[1].split("[", 1)[0].splitlines() if "=" in ln]
        if len(section) == 2
        else []
    )
    if len(names) != 1:
        raise SubmissionError(f"{wheel.name} must declare exactly one verihub.environments entry point")
    return names[0], str(meta["Name"]), str(meta["Version"])


def _smoke_eval(
    wheel: Path,
    env_id: str,
    out: Path,
    *,
    model: str,
    num_tasks: int,
    rollouts: int,
    max_tokens: int,
    timeout_s: float,
) -> str:
    """Evaluate the bundled wheel in a sandboxed process (own network namespace with only
    loopback up, resource limits); returns how it was isolated."""
    import hub
    from hub.review.check.sandbox import Limits, network_namespace_available, run_sandboxed

    with tempfile.TemporaryDirectory(prefix="verihub-smoke-") as tmp:
        site = unpack_wheel(wheel, Path(tmp) / "site")
        env = {k: v for k, v in os.environ.items() if not k.endswith(("_KEY", "_TOKEN", "_SECRET"))}
        env["PYTHONPATH"] = os.pathsep.join([str(site), str(Path(hub.__file__).resolve().parent.parent)])
        env["HF_HUB_OFFLINE"] = env["HF_DATASETS_OFFLINE"] = "1"
        cmd = [
            sys.executable,
            "-m",
            "hub",
            "eval",
            env_id,
            "--model",
            model,
            "--num-tasks",
            str(num_tasks),
            "--rollouts",
            str(rollouts),
            "--max-tokens",
            str(max_tokens),
            "--out",
            str(out.resolve()),
            "--no-progress",
        ]
        limits = Limits(wall_s=timeout_s, cpu_s=int(timeout_s) * 2, memory_bytes=16 * 1024**3)
        res = run_sandboxed(cmd, limits=limits, env=env, cwd=Path(tmp), isolate_network=True, loopback=True)
    if res.timed_out:
        raise SubmissionError(f"the smoke evaluation took longer than {timeout_s:g}s")
    if res.returncode != 0:
        last = [ln for ln in res.stderr.splitlines() if ln.strip()][-1:] or [f"exit code {res.returncode}"]
        raise SubmissionError(f"the smoke evaluation failed: {last[0]}")
    if network_namespace_available():
        return "own network namespace (loopback only), rlimits"
    return "rlimits only (no network namespace on this platform)"


def submit(
    path: str | os.PathLike[str],
    *,
    out: str | os.PathLike[str] | None = None,
    model: str = "local:smollm2",
    num_tasks: int = 5,
    rollouts: int = 3,
    max_tokens: int = 64,
    check_options: CheckOptions | None = None,
    smoke_timeout_s: float = 900.0,
) -> tuple[Path, Manifest]:
    """Build, check and smoke-evaluate the package at ``path`` into a bundle folder."""
    from hub.version import __version__

    src = Path(path).resolve()
    if not (src / "pyproject.toml").is_file():
        raise UsageError(f"{src} has no pyproject.toml; `verihub submit` takes an environment package folder")
    if num_tasks < 5 or rollouts < 3:
        raise UsageError("a submission's smoke evaluation needs at least 5 tasks x 3 rollouts")
    bundle = Path(out) if out is not None else Path("submissions") / src.name
    if bundle.exists() and any(bundle.iterdir()):
        raise UsageError(f"{bundle} exists and is not empty; choose another --out")
    bundle.mkdir(parents=True, exist_ok=True)
    sdist, wheel = _build(src, bundle / "dist")
    env_id, dist_name, version = _wheel_env(wheel)
    with tempfile.TemporaryDirectory(prefix="verihub-submit-") as tmp:
        report = check(str(_unpack_sdist(sdist, Path(tmp))), options=check_options)
    (bundle / "check").mkdir()
    (bundle / "check" / "report.json").write_text(report.model_dump_json(indent=2), encoding="utf-8")
    (bundle / "check" / "report.txt").write_text(report.to_text() + "\n", encoding="utf-8")
    isolation = _smoke_eval(
        wheel,
        env_id,
        bundle / "eval",
        model=model,
        num_tasks=num_tasks,
        rollouts=rollouts,
        max_tokens=max_tokens,
        timeout_s=smoke_timeout_s,
    )
    summary = RunDir(bundle / "eval").load_summary()
    manifest = Manifest(
        env_id=env_id,
        distribution=dist_name,
        version=version,
        verihub_version=__version__,
        check_passed=report.passed,
        smoke_eval={
            "model": model,
            "num_tasks": num_tasks,
            "rollouts": rollouts,
            "mean_reward": summary.mean_reward,
            "isolation": isolation,
        },
        files=_files(bundle),
    )
    (bundle / MANIFEST).write_text(manifest.model_dump_json(indent=2), encoding="utf-8")
    return bundle, manifest


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


def verify_submission(
    bundle: str | os.PathLike[str], *, check_options: CheckOptions | None = None, rerun_check: bool = True
) -> Verification:
    """Re-verify a bundle written by :func:`submit` (see the module docstring)."""
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
    actual = _files(root)
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
    if wheel_package_hash(wheels[0], manifest.env_id) != config.env_hash:
        result.problems.append("the evaluated package is not the bundled wheel (content hashes differ)")
    if rerun_check and not result.problems:
        from hub.review.check.regrade import regrade_sandboxed

        with tempfile.TemporaryDirectory(prefix="verihub-verify-") as tmp:
            regraded = regrade_sandboxed(
                _unpack_sdist(sdists[0], Path(tmp)),
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
        with tempfile.TemporaryDirectory(prefix="verihub-verify-") as tmp:
            report = check(str(_unpack_sdist(sdists[0], Path(tmp))), options=check_options)
        result.report = report
        if not report.passed:
            result.problems.append(f"the check fails now: {', '.join(r.name for r in report.failures())}")
        recorded = json.loads((root / "check" / "report.json").read_text(encoding="utf-8"))
        if recorded.get("passed") != report.passed:
            result.problems.append("the recorded check report disagrees with the check run now")
    return result
