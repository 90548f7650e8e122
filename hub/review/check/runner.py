"""``verihub check PATH_OR_ID``: stage the package read-only, run it sandboxed, collect a report.

Order of work: copy the package (a source folder is first installed with pip into a staging
folder, inside the sandbox; an installed id is copied with its metadata), make the staged copy
read-only, run the static checks on its metadata and README, then run
:mod:`hub.review.check.worker` twice in the sandbox (the full check, and a second load in another
process with another hash seed to compare task ids).
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import shutil
import signal
import sys
import tempfile
import time
from dataclasses import dataclass, field
from email.parser import Parser
from pathlib import Path
from typing import Any

from hub.env.errors import UsageError
from hub.registry.install import InstallError, unpack_wheel
from hub.review.check.report import CHECK_NAMES, CheckReport
from hub.review.check.sandbox import (
    Limits,
    SandboxResult,
    make_writable,
    mount_namespace_available,
    network_namespace_available,
    pid_namespace_available,
    read_only_copy,
    run_sandboxed,
)

__all__ = ["CheckOptions", "check"]

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


_SECRET_SUFFIXES = ("_KEY", "_TOKEN", "_SECRET", "_PASSWORD")


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
    isolate_network: bool = True
    read_only_mount: bool = True


def _child_env(run_dir: Path, hash_seed: int) -> dict[str, str]:
    import hub

    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": os.environ.get("HOME", str(run_dir)),
        "LANG": "C.UTF-8",
        "TMPDIR": str(run_dir),
        "PYTHONHASHSEED": str(hash_seed),
        "PYTHONDONTWRITEBYTECODE": "1",
        "PYTHONPATH": str(Path(hub.__file__).resolve().parent.parent),
        "HF_HUB_OFFLINE": "1",
        "HF_DATASETS_OFFLINE": "1",
        "PIP_NO_INPUT": "1",
    }
    for key, value in os.environ.items():  # data locations (VERIHUB_*_PATH, VERIHUB_SHARED_DATA, HF_HOME)
        if key.endswith(_SECRET_SUFFIXES):  # e.g. --api-key-env VERIHUB_BENCH_KEY: not for the package
            continue
        if key == "HF_HOME" or (key.startswith("VERIHUB_") and key != "VERIHUB_CONFIG"):
            env[key] = value
    return env


def _stage_path(src: Path, work: Path, opts: CheckOptions, report: CheckReport) -> Path | None:
    if not (src / "pyproject.toml").is_file() and not (src / "setup.py").is_file():
        raise UsageError(
            f"{src} is not a Python package folder (no pyproject.toml); see `verihub init --help`"
        )
    links = _links_outside(src)
    if links:
        # copying follows symlinks: it would read those files here, outside the sandbox, and hand
        # them to the package as its own
        report.add("installs", "fail", "the package has symlinks that lead outside it", links)
        report.add("file_access", "fail", "symlinks lead outside the package", links)
        return None
    build = work / "src"
    shutil.copytree(
        src,
        build,
        ignore=shutil.ignore_patterns("__pycache__", "*.pyc", ".git", "build", "dist", "*.egg-info", ".venv"),
    )
    wheels = work / "wheels"
    cmd = [sys.executable, "-c", _BUILD_WHEEL, str(build), str(wheels)]
    res = run_sandboxed(
        cmd, limits=opts.limits, env=_child_env(work, 0), cwd=build, isolate_network=opts.isolate_network
    )
    built = sorted(wheels.glob("*.whl")) if wheels.is_dir() else []
    if res.returncode != 0 or res.timed_out or len(built) != 1:
        lines = [ln.strip() for ln in res.stderr.splitlines() if ln.strip()]
        last = [ln for ln in lines if "error" in ln.lower()][:3] or lines[-3:]
        report.add(
            "installs", "fail", "the package does not build a wheel offline with its build backend", last
        )
        return None
    target = work / "installed"
    try:
        unpack_wheel(built[0], target)
    except InstallError as exc:
        report.add("installs", "fail", str(exc))
        return None
    report.add("installs", "pass", f"built and installed {built[0].name} offline")
    return read_only_copy(target, work / "stage")


def _links_outside(root: Path) -> list[str]:
    """Symlinks under ``root`` that resolve outside it (or nowhere), as 'link -> target'."""
    base = os.path.realpath(root)
    found = []
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            path = os.path.join(dirpath, name)
            if os.path.islink(path):
                target = os.path.realpath(path)
                if not (target == base or target.startswith(base + os.sep)) or not os.path.exists(target):
                    found.append(f"{os.path.relpath(path, root)} -> {os.readlink(path)}")
    return found


def _stage_installed(env_id: str, work: Path, report: CheckReport) -> Path:
    from hub.registry.entrypoints import _entry_points

    ep = _entry_points().get(env_id)
    if ep is None:
        raise UsageError(f"{env_id!r} is neither a folder nor an installed environment; see `verihub list`")
    module = ep.value.split(":", 1)[0].split(".", 1)[0]
    spec = importlib.util.find_spec(module)
    if spec is None or spec.origin is None:
        raise UsageError(f"cannot locate the package {module!r} of {env_id!r}; reinstall it")
    root = Path(spec.origin).parent if spec.submodule_search_locations else Path(spec.origin)
    links = _links_outside(root) if root.is_dir() else []
    if links:
        raise UsageError(f"{env_id!r}'s package has symlinks that lead outside it: {', '.join(links[:3])}")
    tmp = work / "copy"
    tmp.mkdir()
    if root.is_dir():
        shutil.copytree(root, tmp / root.name, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    else:
        shutil.copy2(root, tmp / root.name)
    dist_path = getattr(ep.dist, "_path", None)
    if dist_path is None or not Path(str(dist_path)).is_dir():
        raise UsageError(
            f"cannot find the metadata of {env_id!r}'s distribution; check it from its source folder"
        )
    shutil.copytree(Path(str(dist_path)), tmp / Path(str(dist_path)).name)
    report.add("installs", "pass", f"installed as {ep.dist.metadata['Name'] if ep.dist else '?'}")
    return read_only_copy(tmp, work / "stage")


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
    eps = eps_file.read_text(encoding="utf-8") if eps_file.exists() else ""
    ids = (
        re.findall(r"^\s*([A-Za-z0-9_.-]+)\s*=", eps.split("[verihub.environments]", 1)[1], re.MULTILINE)
        if "[verihub.environments]" in eps
        else []
    )
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


def _run_worker(
    mode: str,
    stage: Path,
    work: Path,
    env_id: str | None,
    opts: CheckOptions,
    seed: int,
    extra: dict[str, Any] | None = None,
) -> tuple[SandboxResult, list[dict[str, Any]]]:
    run_dir = work / f"run-{mode}"
    run_dir.mkdir()
    cfg = {
        "mode": mode,
        "stage": str(stage),
        "run_dir": str(run_dir),
        "env_id": env_id,
        "env_args": opts.env_args,
        "num_tasks": opts.num_tasks,
        "id_tasks": opts.id_tasks,
        "gold_tasks": opts.gold_tasks,
        "probe_tasks": opts.probe_tasks,
        "grade_timeout_s": opts.grade_timeout_s,
        "allow_read": list(opts.allow_read),
        "block_network": True,
        **(extra or {}),
    }
    if "rollouts" in cfg:  # the worker may read only inside its run directory
        shutil.copy2(cfg["rollouts"], run_dir / "rollouts.jsonl")
        cfg["rollouts"] = str(run_dir / "rollouts.jsonl")
    cfg_path = work / f"worker-{mode}.json"
    cfg_path.write_text(json.dumps(cfg), encoding="utf-8")
    res = run_sandboxed(
        [sys.executable, "-m", "hub.review.check.worker", str(cfg_path)],
        limits=opts.limits,
        env=_child_env(run_dir, seed),
        cwd=run_dir,
        isolate_network=opts.isolate_network,
        read_only=_read_only(stage) if opts.read_only_mount else (),
        writable_only=[run_dir] if opts.read_only_mount else None,
    )
    events = []
    for line in res.stdout.splitlines():
        try:
            ev = json.loads(line)
        except json.JSONDecodeError:
            continue
        if isinstance(ev, dict) and "event" in ev:
            events.append(ev)
    return res, events


def _read_only(stage: Path) -> list[Path]:
    """What the environment may not change: its staged package, and verihub's own code."""
    import graders
    import hub

    return [stage, Path(hub.__file__).resolve().parent, Path(graders.__file__).resolve().parent]


def _digest(
    res: SandboxResult, events: list[dict[str, Any]], report: CheckReport, cpu_s: int
) -> tuple[dict[str, list[str]] | None, bool]:
    ids: dict[str, list[str]] | None = None
    phase = "start"
    violations: dict[str, list[str]] = {"read": [], "write": [], "network": []}
    for ev in events:
        kind = ev["event"]
        if kind == "phase":
            phase = str(ev.get("phase"))
        elif kind == "result":
            report.add(ev["name"], ev["status"], ev.get("reason", ""), ev.get("details"))
        elif kind == "ids":
            ids = ev["ids"]
        elif kind == "loaded":
            report.env_id, report.version = ev.get("env_id"), ev.get("version")
        elif kind == "violation":
            violations.setdefault(ev["kind"], []).append(f"{ev['detail']} (during {ev.get('phase')})")
        elif kind == "hang":
            report.add(
                "grading_time",
                "fail",
                f"{ev['label']} hung: no answer within {ev['seconds']:g}s, "
                "the check stopped it (grading must be bounded in time)",
            )
    done = any(ev["event"] == "done" for ev in events)
    hung = any(ev["event"] == "hang" for ev in events)
    if res.timed_out and not done:
        where = "grading_time" if phase.startswith(("gold", "probes", "grading")) else "sandbox"
        report.add(where, "fail", f"the check ran past its wall-clock limit during '{phase}'")
    elif not done and not hung:
        tail = [ln for ln in res.stderr.splitlines() if ln.strip()][-2:]
        if res.returncode in (-signal.SIGXCPU, 128 + signal.SIGXCPU):
            where = "grading_time" if phase.startswith("grading") else "sandbox"
            why = f"killed by the CPU limit of {cpu_s}s"
        else:
            where, why = "sandbox", f"exit code {res.returncode}"
        report.add(where, "fail", f"the environment process died during '{phase}' ({why})", tail)
    reads = violations["read"] + [f"write: {w}" for w in violations["write"]]
    if reads:
        report.add(
            "file_access",
            "fail",
            "files were read outside the package and the run directory, or written outside the run directory",
            reads,
        )
    if violations["network"]:
        report.add("network", "fail", "network access was attempted", violations["network"])
    if violations.get("process") and not reads:
        report.add(
            "file_access",
            "warn",
            "the package started processes: the audit hook cannot see what they read or write "
            "(a reviewer must read what they do)",
            violations["process"],
        )
    return ids, done


def check(target: str, *, options: CheckOptions | None = None) -> CheckReport:
    """Check an environment package folder (or an installed environment id) and report."""
    opts = options or CheckOptions()
    t0 = time.perf_counter()
    report = CheckReport(target=target)
    work = Path(tempfile.mkdtemp(prefix="verihub-check-"))
    try:
        src = Path(target)
        stage = (
            _stage_path(src.resolve(), work, opts, report)
            if src.exists()
            else _stage_installed(target, work, report)
        )
        isolation = (
            "own network namespace (unshare -rn)"
            if opts.isolate_network and network_namespace_available()
            else "sockets blocked by an audit hook (no network namespace available)"
        )
        files = (
            "read-only bind mount of the staged copy, every other folder but the run directory "
            "read-only too (own mount namespace)"
            if opts.read_only_mount and mount_namespace_available()
            else "staged copy read-only by file mode only (no read-only mount: a root process can write it)"
        )
        report.isolation = (
            f"{isolation}; rlimits cpu={opts.limits.cpu_s}s "
            f"memory={opts.limits.memory_bytes // 1024**2}MiB; wall {opts.limits.wall_s:g}s; "
            f"{files}; "
            + (
                "own pid namespace (no process outlives the check)"
                if pid_namespace_available()
                else "no pid namespace"
            )
            + "; audit hook on open"
        )
        if stage is None:
            return _finish(report, t0)
        env_id = _static_checks(stage, report)
        res, events = _run_worker("full", stage, work, env_id, opts, seed=0)
        ids, finished = _digest(res, events, report, opts.limits.cpu_s)
        if report.result("loads") is None:
            report.add("loads", "fail", "the environment process ended before loading finished")
        if ids is not None and report.result("loads") and report.result("loads").status == "pass":  # type: ignore[union-attr]
            res2, events2 = _run_worker("ids", stage, work, env_id, opts, seed=1)
            ids2 = next((ev["ids"] for ev in events2 if ev["event"] == "ids"), None)
            tasks1 = next((ev["digests"] for ev in events if ev["event"] == "tasks"), None)
            tasks2 = next((ev["digests"] for ev in events2 if ev["event"] == "tasks"), None)
            if tasks1 is not None and tasks2 is not None and tasks1 != tasks2:
                report.add(
                    "determinism",
                    "fail",
                    "tasks differ between two processes for the same seed "
                    "(they must not depend on hash(), set order, time or unseeded randomness)",
                    sorted(k for k in tasks1 if tasks1.get(k) != tasks2.get(k)),
                )
            if ids2 != ids:
                report.add(
                    "task_ids",
                    "fail",
                    "task ids differ between two loads in two processes "
                    "(ids must not depend on hash(), time or unseeded randomness)",
                )
            else:
                report.add("task_ids", "pass", f"{sum(len(v) for v in ids.values())} ids, stable")
        for name in ("file_access", "network"):
            if report.result(name) is None:
                report.add(
                    name,
                    "pass" if finished else "warn",
                    "" if finished else "nothing seen, but the run stopped early",
                )
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
