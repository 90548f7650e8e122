"""``verihub check PATH_OR_ID``: stage the package read-only, run it sandboxed, collect a report.

Order of work: copy the package (a source folder is first built into a wheel by its own build
backend inside the sandbox, offline; an installed id is copied with its metadata), unpack it
into a read-only staging folder, run the static checks on its metadata and README, then start
the environment twice in the sandbox (:func:`hub.sandbox.remote.start_environment`, exactly
as ``verihub eval --sandbox`` does; the second copy runs with another hash seed to compare
task ids and tasks) and ask it questions from here (:mod:`hub.review.check.drive`). Every verdict is
drawn in this process.
"""

from __future__ import annotations

import asyncio
import os
import re
import shutil
import sys
import tempfile
import time
from dataclasses import dataclass, field
from email.parser import Parser
from pathlib import Path
from typing import Any

from hub.env import UsageError
from hub.env.aio import within
from hub.registry import (
    ENTRY_POINT_GROUP,
    EntryPointsError,
    InstallError,
    WheelError,
    parse_entry_points,
    unpack_wheel,
    verify_wheel,
)
from hub.review.check.drive import (
    Hung,
    Prober,
    death,
    elapsed,
    identity_checks,
    run_probes,
    run_sync,
    tripwire_results,
)
from hub.review.check.labels import measure_packaged_labels
from hub.review.check.report import CHECK_NAMES, CheckReport
from hub.review.check.stateful_probes import run_stateful_probes
from hub.sandbox import (
    STAGE_PREFIX,
    UNSAFE_BANNER,
    Limits,
    RemoteEnvironment,
    RemoteError,
    SandboxDiedError,
    StageError,
    clean,
    links_outside,
    make_writable,
    read_only_copy,
    stage_installed,
    start_environment,
    unavailable_reason,
)
from hub.sandbox import run as sandbox_run

__all__ = [
    "CheckOptions",
    "check",
    "require_sandbox",
    "run_check",
    "stage_path",
    "stage_wheel",
    "start_checked",
]

_README_SECTIONS = {
    "task": r"\btasks?\b",
    "data source": r"data\s+source|dataset",
    "licence": r"licen[cs]e",
    "grader": r"\bgrad(er|ing|ed)\b",
    "expected scores": r"expected\s+scores?|baseline",
}
_BUILD_WHEEL = """
import importlib, os, sys
try:
    import tomllib
except ImportError:
    import tomli as tomllib
src, out = sys.argv[1], sys.argv[2]
os.makedirs(out, exist_ok=True)
with open(os.path.join(src, "pyproject.toml"), "rb") as fh:
    system = tomllib.load(fh).get("build-system", {})
name = system.get("build-backend", "setuptools.build_meta:__legacy__")
sys.path[:0] = [os.path.join(src, p) for p in system.get("backend-path", [])]
mod, _, attr = name.partition(":")
backend = importlib.import_module(mod)
for part in filter(None, attr.split(".")):
    backend = getattr(backend, part)
print(backend.build_wheel(out))
"""
_DATA_SOURCE = re.compile(r"(data\s+source|dataset)[^\n:]{0,20}[:\-]\**\s*\S{2,}", re.IGNORECASE)


@dataclass(frozen=True)
class CheckOptions:
    """What and how hard to check."""

    env_args: dict[str, Any] = field(default_factory=dict)
    num_tasks: int = 50
    id_tasks: int = 2000  # ids are checked (unique, stable) on this many tasks per split
    gold_tasks: int = 100
    probe_tasks: int = 10
    grade_timeout_s: float = 10.0
    limits: Limits = field(default_factory=Limits)
    allow_read: tuple[str, ...] = ()
    unsafe_no_sandbox: bool = False  # run the package unsandboxed (every report says so first)


def require_sandbox(unsafe: bool) -> None:
    """Refuse to run untrusted code without a sandbox, with one line saying what to install."""
    reason = None if unsafe else unavailable_reason()
    if reason is not None:
        raise UsageError(f"cannot run the package's code safely: {reason}")


def _build_env(home: Path) -> dict[str, str]:
    return {
        "PATH": "/usr/local/bin:/usr/bin:/bin",
        "HOME": str(home),
        "LANG": "C.UTF-8",
        "TMPDIR": str(home),
        "PYTHONDONTWRITEBYTECODE": "1",
        "PIP_NO_INPUT": "1",
    }


def stage_path(src: Path, work: Path, opts: CheckOptions, report: CheckReport) -> Path | None:
    """A package folder is built into a wheel in the build sandbox and staged like one."""
    if not (src / "pyproject.toml").is_file() and not (src / "setup.py").is_file():
        raise UsageError(
            f"{src} is not a Python package folder (no pyproject.toml); see `verihub init --help`"
        )
    links = links_outside(src)
    if links:
        # copying follows symlinks: it would read those files here, outside the sandbox, and hand
        # them to the package as its own
        report.add("installs", "fail", "the package has symlinks that lead outside it", links)
        report.add("file_access", "fail", "symlinks lead outside the package", links)
        return None
    # the build runs the package's own code (setup.py, a custom backend): in the sandbox, with
    # nothing writable but this folder (its copy of the source, the wheel, a home)
    area = work / "build"
    build = area / "src"
    shutil.copytree(
        src,
        build,
        ignore=shutil.ignore_patterns("__pycache__", "*.pyc", ".git", "build", "dist", "*.egg-info", ".venv"),
    )
    wheels, home = area / "wheels", area / "home"
    home.mkdir()
    cmd = [sys.executable, "-c", _BUILD_WHEEL, str(build), str(wheels)]
    res = sandbox_run(
        cmd,
        rw_dir=area,
        limits=opts.limits,
        env=_build_env(home),
        cwd=build,
        unsafe=opts.unsafe_no_sandbox,
    )
    built = sorted(wheels.glob("*.whl")) if wheels.is_dir() else []
    if res.returncode != 0 or len(built) != 1:
        lines = [ln.strip() for ln in res.stderr.splitlines() if ln.strip()]
        last = [ln for ln in lines if "error" in ln.lower()][:3] or lines[-3:]
        report.add(
            "installs", "fail", "the package does not build a wheel offline with its build backend", last
        )
        return None
    if not _unpack_verified(built[0], work / "installed", report):
        return None
    report.add("installs", "pass", f"built and installed {built[0].name} offline")
    return read_only_copy(work / "installed", work / "stage")


def _unpack_verified(wheel: Path, target: Path, report: CheckReport) -> bool:
    """Unpack ``wheel`` once it passes what ``verihub install`` verifies (else an installs fail):
    the check must not pass a wheel that an install refuses, nor exercise bytecode or a target
    that an install would not run."""
    try:
        verify_wheel(str(wheel), env_id=None)
        unpack_wheel(wheel, target)
    except WheelError as exc:
        report.add("installs", "fail", f"verihub install would refuse it: {exc}")
        return False
    except InstallError as exc:
        report.add("installs", "fail", str(exc))
        return False
    return True


def _stage_installed(env_id: str, work: Path, report: CheckReport) -> Path:
    try:
        stage, name = stage_installed(env_id, work / "stage")
    except StageError as exc:
        raise UsageError(str(exc)) from None
    report.add("installs", "pass", f"installed as {name}")
    return stage


def _static_checks(stage: Path, report: CheckReport) -> str | None:
    """Metadata, README, licence and data source; returns the environment id declared."""
    infos = list(stage.glob("*.dist-info")) + list(stage.glob("*.egg-info"))
    if len(infos) != 1:
        report.add("metadata", "fail", f"expected one distribution, found {len(infos)}")
        return None
    meta = Parser().parsestr(
        (infos[0] / "METADATA" if (infos[0] / "METADATA").exists() else infos[0] / "PKG-INFO").read_text(
            encoding="utf-8"
        )
    )
    eps_file = infos[0] / "entry_points.txt"
    try:  # the one strict reader an install uses too: the check exercises what an install runs
        groups = parse_entry_points(eps_file.read_bytes() if eps_file.exists() else b"")
    except EntryPointsError as exc:
        report.add("metadata", "fail", f"entry_points.txt is refused: {exc}")
        return None
    ids = list(groups.get(ENTRY_POINT_GROUP, {}))
    if len(ids) > 1:
        report.add("metadata", "fail", f"more than one {ENTRY_POINT_GROUP} entry point: {', '.join(ids)}")
        return None
    missing = [k for k in ("Name", "Version", "Summary") if not (meta.get(k) or "").strip()]
    if not ids:
        missing.append('a [project.entry-points."verihub.environments"] entry')
    report.add(
        "metadata",
        "fail" if missing else "pass",
        f"missing: {', '.join(missing)}" if missing else f"{meta.get('Name')} {meta.get('Version')}",
    )
    payload = meta.get_payload()
    readme = (
        payload if isinstance(payload, str) and payload.strip() else meta.get("Description") or ""
    ).strip()
    if not readme:
        report.add("readme", "fail", 'no README: set readme = "README.md" in [project]')
    else:
        lacking = [s for s, rx in _README_SECTIONS.items() if not re.search(rx, readme, re.IGNORECASE)]
        report.add(
            "readme",
            "fail" if lacking else "pass",
            f"the README does not cover: {', '.join(lacking)}" if lacking else "",
        )
    licence = (meta.get("License-Expression") or meta.get("License") or "").strip()
    classifiers = [c for c in meta.get_all("Classifier") or [] if c.startswith("License ::")]
    if licence or classifiers:
        report.add("licence", "pass", licence or classifiers[0])
    else:
        report.add(
            "licence", "fail", 'no licence in the metadata: add license = { text = "SPDX-ID" } to [project]'
        )
    report.add(
        "data_source",
        "pass" if _DATA_SOURCE.search(readme) else "fail",
        ""
        if _DATA_SOURCE.search(readme)
        else "the README must name the data source "
        "(a line 'Data source: ...', or 'generated by this package')",
    )
    return ids[0] if ids else None


def _isolation(opts: CheckOptions) -> str:
    lim = opts.limits
    limits = (
        f"memory {lim.memory_mb} MiB summed over its processes and tmpfs folders, {lim.processes} "
        f"processes, {lim.disk_mb} MiB tmpfs for the run directory, /tmp and /dev/shm, cpu "
        f"{lim.cpu_s}s per process, wall {lim.wall_s:g}s"
    )
    if opts.unsafe_no_sandbox:
        return f"{UNSAFE_BANNER}; limits: {limits}"
    return (
        "bubblewrap sandbox: own user, pid, net, mount, ipc and uts namespaces, uid 65534, no "
        "capabilities, seccomp filter (memfd and System V shared memory refused), read-only binds of "
        "the interpreter, verihub and the staged package only, device nodes only in /dev, an "
        f"allow-listed environment; limits: {limits}; verdicts drawn outside the sandbox over a "
        "nonce-checked channel"
    )


def start_checked(stage: Path, env_id: str | None, opts: CheckOptions) -> RemoteEnvironment:
    """The staged environment started in the check sandbox under ``opts``' limits."""
    return start_environment(
        stage,
        env_id,
        opts.env_args,
        limits=opts.limits,
        read=opts.allow_read,
        unsafe=opts.unsafe_no_sandbox,
    )


def _answers(prober: Prober, seconds: float) -> bool:
    """Whether the sandbox answers a ping within ``seconds`` (what it noted is kept)."""

    async def ping() -> bool:
        try:
            prober.noted += await within(prober.env.acall("tripwire"), seconds)
        except (asyncio.TimeoutError, RemoteError):
            return False
        return True

    return run_sync(ping())


def _dynamic_checks(stage: Path, env_id: str | None, opts: CheckOptions, report: CheckReport) -> bool:
    """Load the environment in two sandboxes and ask it the check's questions; True when the
    run got to the end."""
    t0 = time.perf_counter()
    try:
        env = start_checked(stage, env_id, opts)
    except RemoteError as exc:
        report.add("loads", "fail", f"{exc.kind}: {exc.message[:300]}")
        return False
    except SandboxDiedError as exc:
        report.add("loads", "fail", "the environment process ended before loading finished", [str(exc)])
        death(exc, "load", report, opts.limits.cpu_s)
        return False
    report.add("loads", "pass", f"{env!r} in {elapsed(t0)}".replace(" (sandboxed)", ""))
    report.env_id, report.version = clean(env.id, 200), clean(env.version, 100)
    prober = Prober(env, timeout_s=opts.grade_timeout_s, memory_mb=opts.limits.memory_mb)
    finished = False
    try:
        prober.phase = "task ids"
        again = start_checked(stage, env.id, opts)  # another hash seed: tasks must not depend on it
        try:
            identity_checks(env, again, report, num_tasks=opts.num_tasks, id_tasks=opts.id_tasks)
            prober.noted += again.tripwire()
        finally:
            again.close()
        run_sync(run_probes(prober, report, gold_tasks=opts.gold_tasks, probe_tasks=opts.probe_tasks))
        run_sync(
            run_stateful_probes(prober, report, gold_tasks=opts.gold_tasks, probe_tasks=opts.probe_tasks)
        )
        prober.phase = "label file"
        graded = run_sync(measure_packaged_labels(env, stage, report, timeout_s=opts.grade_timeout_s))
        if graded and not _answers(prober, opts.grade_timeout_s + 2.0):  # a grading still holds it
            raise Hung("grading the label file", opts.grade_timeout_s + 2.0)
        prober.noted += env.tripwire()
        finished = True
    except Hung as exc:
        report.add(
            "grading_time",
            "fail",
            f"{exc.label} hung: no answer within {exc.seconds:g}s, the check stopped it "
            "(grading must be bounded in time)",
        )
    except SandboxDiedError as exc:
        death(exc, prober.phase, report, opts.limits.cpu_s)
    except RemoteError as exc:
        report.add("sandbox", "fail", f"the environment failed during '{prober.phase}': {exc}")
    finally:
        env.close()
    tripwire_results(prober.noted, report, finished=finished)
    return finished


def stage_wheel(wheel: Path, work: Path, report: CheckReport) -> Path | None:
    """A built wheel is unpacked, not built: nothing of the package runs to stage it."""
    if not _unpack_verified(wheel, work / "installed", report):
        return None
    report.add("installs", "pass", f"unpacked {wheel.name}")
    return read_only_copy(work / "installed", work / "stage")


def run_check(target: str | os.PathLike[str], *, options: CheckOptions | None = None) -> CheckReport:
    """The check's entry point for other rooms (the hub server's review): a package folder, a
    built ``.whl`` or an installed id. Same as :func:`check`."""
    return check(str(target), options=options)


def check(target: str, *, options: CheckOptions | None = None) -> CheckReport:
    """Check an environment package folder, a built wheel (``*.whl``) or an installed
    environment id, and report.

    Raises :class:`~hub.env.errors.UsageError` when no sandbox can be made here (unless
    ``options.unsafe_no_sandbox``)."""
    opts = options or CheckOptions()
    require_sandbox(opts.unsafe_no_sandbox)
    t0 = time.perf_counter()
    report = CheckReport(target=target, unsafe=opts.unsafe_no_sandbox, isolation=_isolation(opts))
    # the same kind of folder as `verihub eval --sandbox` stages into: its path shows in mountinfo
    work = Path(tempfile.mkdtemp(prefix=STAGE_PREFIX))
    try:
        src = Path(target)
        if src.is_file() and src.suffix == ".whl":
            stage = stage_wheel(src.resolve(), work, report)
        elif src.exists():
            stage = stage_path(src.resolve(), work, opts, report)
        else:
            stage = _stage_installed(target, work, report)
        if stage is None:
            return _finish(report, t0)
        env_id = _static_checks(stage, report)
        finished = _dynamic_checks(stage, env_id, opts, report)
        if finished and report.result("sandbox") is None:
            report.add("sandbox", "pass", "the environment process finished within its limits")
        for name in CHECK_NAMES:
            if report.result(name) is None:
                report.add(name, "skip", "not reached: the environment process stopped first")
        return _finish(report, t0)
    finally:
        make_writable(work)
        shutil.rmtree(work, ignore_errors=True)


def _finish(report: CheckReport, t0: float) -> CheckReport:
    report.duration_s = time.perf_counter() - t0
    return report.finish()
