"""Submission bundles: ``verihub submit PATH`` writes one.

A bundle is a folder::

    dist/            the sdist and the wheel built from it (``python -m build``)
    check/           report.json and report.txt of ``verihub check`` on the unpacked sdist
    eval/            config.json, rollouts.jsonl and summary.json of a smoke evaluation
    manifest.json    bundle_version, environment id and version, and the sha256 of every file

:func:`hub.review.verify.verify_submission` re-verifies a bundle (see that module). The manifest
itself is not signed: compare its sha256 (printed by both commands) with the one posted with the
submission.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from hub.env import UsageError, VerihubError
from hub.registry import ENTRY_POINT_GROUP, EntryPointsError, parse_entry_points, unpack_wheel
from hub.review.check import CheckOptions, check
from hub.run import RunDir
from hub.sandbox import Limits

__all__ = [
    "BUILD_LIMITS",
    "BUNDLE_VERSION",
    "MANIFEST",
    "Manifest",
    "SubmissionError",
    "file_sha256",
    "submit",
    "bundle_files",
    "unpack_sdist",
]

#: The sandbox limits of building a package's wheel and sdist with its own build backend.
BUILD_LIMITS = Limits(wall_s=600.0, cpu_s=600, memory_mb=4096, disk_mb=1024)

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


def file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            digest.update(chunk)
    return "sha256:" + digest.hexdigest()


def bundle_files(root: Path) -> dict[str, str]:
    manifest = root / MANIFEST
    return {
        p.relative_to(root).as_posix(): file_sha256(p)
        for p in sorted(root.rglob("*"))
        if p.is_file() and p != manifest
    }


def _build(src: Path, dist: Path, *, unsafe: bool = False) -> tuple[Path, Path]:
    """``python -m build`` (sdist, then the wheel from it) in the sandbox: the package's build
    code runs with nothing writable but a scratch folder, and no network."""
    from hub.sandbox import run as sandbox_run

    try:
        import build  # noqa: F401
    except ModuleNotFoundError as exc:
        raise SubmissionError("building a submission needs the `build` package: pip install build") from exc
    with tempfile.TemporaryDirectory(prefix="verihub-build-") as tmp:
        area = Path(tmp)
        copy, out, home = area / "src", area / "out", area / "home"
        shutil.copytree(
            src,
            copy,
            ignore=shutil.ignore_patterns(
                "__pycache__", "*.pyc", ".git", "build", "dist", "*.egg-info", ".venv"
            ),
        )
        home.mkdir()
        cmd = [
            sys.executable,
            "-m",
            "build",
            "--no-isolation",
            "--skip-dependency-check",
            "--outdir",
            str(out),
            str(copy),
        ]
        env = {
            "PATH": "/usr/local/bin:/usr/bin:/bin",
            "HOME": str(home),
            "TMPDIR": str(home),
            "LANG": "C.UTF-8",
        }
        proc = sandbox_run(
            cmd,
            rw_dir=area,
            env=env,
            cwd=copy,
            limits=BUILD_LIMITS,
            unsafe=unsafe,
        )
        if proc.returncode == 0:
            dist.mkdir(parents=True, exist_ok=True)
            for built in sorted(out.glob("*.tar.gz")) + sorted(out.glob("*.whl")):
                shutil.copy2(built, dist / built.name)
    if proc.returncode != 0:
        lines = [ln for ln in (proc.stderr + proc.stdout).splitlines() if ln.strip()]
        raise SubmissionError(f"python -m build failed: {lines[-1] if lines else 'no output'}")
    sdists, wheels = sorted(dist.glob("*.tar.gz")), sorted(dist.glob("*.whl"))
    if len(sdists) != 1 or len(wheels) != 1:
        raise SubmissionError(f"expected one sdist and one wheel in {dist}")
    return sdists[0], wheels[0]


def unpack_sdist(sdist: Path, dest: Path) -> Path:
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
        eps_file = info / "entry_points.txt"
        eps = eps_file.read_bytes() if eps_file.exists() else b""
    try:
        names = list(parse_entry_points(eps).get(ENTRY_POINT_GROUP, {}))
    except EntryPointsError as exc:
        raise SubmissionError(f"{wheel.name}: entry_points.txt is refused: {exc}") from exc
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
    unsafe: bool = False,
) -> str:
    """Evaluate the bundled wheel with ``verihub eval --sandbox``: the runner and the model run
    in a child process of verihub's own code, the package's code only in the sandbox (it is
    staged from the unpacked wheel, whose folder is on the child's path for its metadata only).
    Returns how it was isolated."""
    import hub

    with tempfile.TemporaryDirectory(prefix="verihub-smoke-") as tmp:
        site = unpack_wheel(wheel, Path(tmp) / "site")
        env = {
            k: v for k, v in os.environ.items() if not k.endswith(("_KEY", "_TOKEN", "_SECRET", "_PASSWORD"))
        }
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
            "--sandbox",
            *(["--unsafe-no-sandbox"] if unsafe else []),
        ]
        try:
            res = subprocess.run(
                cmd, env=env, cwd=tmp, capture_output=True, text=True, timeout=timeout_s, check=False
            )
        except subprocess.TimeoutExpired:
            raise SubmissionError(f"the smoke evaluation took longer than {timeout_s:g}s") from None
    if res.returncode != 0:
        last = [ln for ln in res.stderr.splitlines() if ln.strip()][-1:] or [f"exit code {res.returncode}"]
        raise SubmissionError(f"the smoke evaluation failed: {last[0]}")
    if unsafe:
        return "UNSAFE: no sandbox (--unsafe-no-sandbox)"
    return "verihub eval --sandbox: the environment in the bubblewrap sandbox, runner and model outside"


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
    from hub import __version__

    src = Path(path).resolve()
    if not (src / "pyproject.toml").is_file():
        raise UsageError(f"{src} has no pyproject.toml; `verihub submit` takes an environment package folder")
    if num_tasks < 5 or rollouts < 3:
        raise UsageError("a submission's smoke evaluation needs at least 5 tasks x 3 rollouts")
    bundle = Path(out) if out is not None else Path("submissions") / src.name
    if bundle.exists() and any(bundle.iterdir()):
        raise UsageError(f"{bundle} exists and is not empty; choose another --out")
    bundle.mkdir(parents=True, exist_ok=True)
    unsafe = check_options is not None and check_options.unsafe_no_sandbox
    if not unsafe:
        from hub.review.check.runner import require_sandbox

        require_sandbox(False)
    sdist, wheel = _build(src, bundle / "dist", unsafe=unsafe)
    env_id, dist_name, version = _wheel_env(wheel)
    with tempfile.TemporaryDirectory(prefix="verihub-submit-") as tmp:
        report = check(str(unpack_sdist(sdist, Path(tmp))), options=check_options)
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
        unsafe=unsafe,
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
        files=bundle_files(bundle),
    )
    (bundle / MANIFEST).write_text(manifest.model_dump_json(indent=2), encoding="utf-8")
    return bundle, manifest
