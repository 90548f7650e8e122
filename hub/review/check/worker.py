"""The process that runs an environment under check (``python -m hub.review.check.worker CONFIG``).

It is started by :mod:`hub.review.check.runner` inside the sandbox. It installs audit hooks (file and
network tripwires), loads the environment from the staged read-only package, runs the dynamic
checks and writes JSON-lines events to the original stdout; anything the environment prints
goes to stderr. Never import this module from library code: it is a program.
"""

from __future__ import annotations

import asyncio
import hashlib
import itertools
import json
import os
import random
import resource
import site
import socket
import sys
import sysconfig
import threading
import time
from collections.abc import Callable
from importlib.metadata import distributions
from pathlib import Path
from typing import Any

import graders
import hub

__all__ = ["main"]

_EVENTS_FD = -1
_STATE: dict[str, Any] = {"phase": "start", "armed": False}
_WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_APPEND | os.O_TRUNC


def emit(event: str, **fields: Any) -> None:
    line = json.dumps({"event": event, **fields}, default=str) + "\n"
    os.write(_EVENTS_FD, line.encode())


def result(name: str, status: str, reason: str = "", details: list[str] | None = None) -> None:
    emit("result", name=name, status=status, reason=reason, details=(details or [])[:5])


def phase(name: str) -> None:
    _STATE["phase"] = name
    emit("phase", phase=name)


# -- audit hooks ---------------------------------------------------------------------------------
class _Audit:
    def __init__(self, allowed_read: list[Path], allowed_write: list[Path], block_network: bool) -> None:
        self.allowed_read = [str(p) for p in allowed_read]
        self.allowed_write = [str(p) for p in allowed_write]
        self.block_network = block_network
        self.seen: set[str] = set()
        self.active = False

    @staticmethod
    def _under(path: str, roots: list[str]) -> bool:
        return any(path == r or path.startswith(r.rstrip("/") + "/") for r in roots)

    def _report(self, kind: str, detail: str) -> None:
        key = f"{kind}:{detail}"
        if key not in self.seen and len(self.seen) < 200:
            self.seen.add(key)
            emit("violation", kind=kind, detail=detail, phase=_STATE["phase"])

    def __call__(self, event: str, args: tuple[Any, ...]) -> None:
        if not self.active:
            return
        if event == "open":
            self._open(args)
        elif event in ("socket.connect", "socket.sendto", "socket.bind"):
            sock, address = args[0], args[1]
            family = getattr(sock, "family", None)
            if family in (socket.AF_INET, socket.AF_INET6):
                self._network(f"{event.split('.')[1]} {address!r}")
            elif family == getattr(socket, "AF_UNIX", None) and event != "socket.bind":
                # a unix socket outside the run directory is a local service (a database, a
                # container daemon, a helper that knows the answers): network namespaces do not
                # separate filesystem sockets, and abstract ones are shared without a namespace
                path = os.fsdecode(address) if isinstance(address, (str, bytes)) else ""
                if (
                    not path
                    or path.startswith("\0")
                    or not self._under(os.path.realpath(path), self.allowed_write)
                ):
                    self._network(f"{event.split('.')[1]} unix socket {address!r}")
        elif event in ("socket.getaddrinfo", "socket.gethostbyname", "socket.gethostbyaddr"):
            self._network(f"{event.split('.')[1]} {args[0]!r}")
        elif event in _SPAWN_EVENTS and not _started_by_verihub():
            # a child process is out of the hook's sight: what it reads or writes is not seen
            command = args[0] if event == "os.system" else args[_SPAWN_EVENTS[event]]
            self._report("process", f"{event}: {str(command)[:120]}")

    def _network(self, detail: str) -> None:
        self._report("network", detail)
        if self.block_network:
            raise PermissionError("verihub check: network access is not allowed")

    def _open(self, args: tuple[Any, ...]) -> None:
        path, mode, flags = args[0], args[1], args[2]
        if isinstance(path, int):
            return
        if isinstance(path, bytes):
            path = os.fsdecode(path)
        # realpath, not normpath: a symlink in the package, /proc/self/root/... or /proc/self/cwd/..
        # must be judged by where it leads
        full = os.path.realpath(os.path.join(os.getcwd(), str(path)))
        writing = (isinstance(mode, str) and any(c in mode for c in "wax+")) or (
            mode is None and isinstance(flags, int) and bool(flags & _WRITE_FLAGS)
        )
        if writing:
            if full != "/dev/null" and not self._under(full, self.allowed_write):
                self._report("write", full)
        elif not (
            self._under(full, self.allowed_read)
            or self._under(full, self.allowed_write)
            or _is_metadata(full)
        ):
            self._report("read", full)


# audit event -> index of its argv (or command) argument
_SPAWN_EVENTS = {"subprocess.Popen": 1, "os.system": 0, "os.exec": 1, "os.posix_spawn": 1, "os.spawn": 2}
_TRUSTED = tuple(str(Path(str(m.__file__)).resolve().parent) + os.sep for m in (graders, hub))
_STDLIB = str(Path(sysconfig.get_paths()["stdlib"]).resolve()) + os.sep


def _started_by_verihub() -> bool:
    """True when the nearest caller outside the standard library is verihub's own code (the
    proof graders start coqc and Lean): a process the package starts itself is reported."""
    frame = sys._getframe(2)
    while frame is not None:
        name = os.path.realpath(frame.f_code.co_filename)
        if not name.startswith(_STDLIB) and name != os.path.realpath(__file__):
            return name.startswith(_TRUSTED)
        frame = frame.f_back  # type: ignore[assignment]
    return False


def _is_metadata(path: str) -> bool:
    """Distribution metadata (entry points, METADATA) anywhere on sys.path: harmless to read."""
    return any(part.endswith((".dist-info", ".egg-info")) for part in Path(path).parts[:-1])


def _allowed_read(stage: Path, extra: list[str]) -> list[Path]:
    import graders
    import hub

    roots = {stage, Path(hub.__file__).parent, Path(graders.__file__).parent}
    for key in ("stdlib", "platstdlib", "purelib", "platlib"):
        roots.add(Path(sysconfig.get_paths()[key]))
    roots.update(Path(p) for p in site.getsitepackages())
    roots.update(Path(p) for p in (sys.prefix, sys.base_prefix, sys.exec_prefix))
    hf = os.environ.get("HF_HOME") or str(Path.home() / ".cache" / "huggingface")
    roots.add(Path(hf))
    roots.update(Path(p) for p in extra)
    fixed = [
        "/dev/null",
        "/dev/urandom",
        "/etc/localtime",
        "/usr/share/zoneinfo",
        "/etc/ssl",
        "/proc/self",
        "/proc/sys/kernel/random",
    ]
    roots.update(Path(p) for p in fixed)
    return sorted({Path(os.path.realpath(p)) for p in roots} | {Path(os.path.abspath(p)) for p in roots})


# -- grading with time limits --------------------------------------------------------------------
def _hang(label: str, seconds: float) -> None:
    emit("hang", label=label, seconds=seconds)
    os._exit(3)


async def _grade(env: Any, task: Any, response: str, label: str, timeout_s: float) -> tuple[str, Any]:
    """('ok', grade) | ('timeout', None) | ('error', message), for a one-answer rollout."""
    from hub.env.types import Message, Rollout, Timing

    messages = [*task.messages(env.system_prompt), Message(role="assistant", content=response)]
    rollout = Rollout(
        task_id=task.id,
        rollout_index=0,
        messages=messages,
        completion=response,
        timing=Timing(started_at=0.0),
    )
    return await _grade_rollout(env, task, rollout, label, timeout_s)


async def _grade_rollout(env: Any, task: Any, rollout: Any, label: str, timeout_s: float) -> tuple[str, Any]:
    phase(f"grading {label}")
    hang_s = timeout_s * 1.5 + 0.5  # past wait_for's timeout: only a blocked event loop gets here
    watchdog = threading.Timer(hang_s, _hang, args=(label, hang_s))
    watchdog.daemon = True
    watchdog.start()
    try:
        grade = await asyncio.wait_for(env.grade(task, rollout), timeout=timeout_s)
    except asyncio.TimeoutError:
        return "timeout", None
    except MemoryError:
        cap = resource.getrlimit(resource.RLIMIT_AS)[0]
        return "error", f"MemoryError: the grader ran past the memory limit ({cap // 1024**2} MiB)"
    except Exception as exc:
        return "error", f"{type(exc).__name__}: {str(exc)[:200]}"
    finally:
        watchdog.cancel()
    if getattr(grade, "is_error", False):
        return "error", f"grade status {grade.status}: {grade.reason[:200]}"
    return "ok", grade


def _rewarded(grade: Any, *, has_gold: bool) -> bool:
    """Whether a wrong answer got what a right one gets: a pass, or the reward of one.

    Training uses the score, not the pass flag: a grader that says "not passed" but scores a
    probe 1.0 (or, where a reference exists, at least half of it) pays the hack all the same.
    """
    return bool(grade.passed) or float(grade.score) >= (0.5 if has_gold else 1.0)


def _verdict(grade: Any) -> str:
    return "passed" if grade.passed else f"scored {float(grade.score):g} (not passed, but rewarded)"


async def _regrade(env: Any, cfg: dict[str, Any]) -> None:
    """Grade recorded rollouts again and report every verdict that differs from the record."""
    from hub.env.types import Rollout

    phase("regrade")
    tasks = {t.id: t for t in _sample(env, str(cfg["split"]), int(cfg["seed"]), int(cfg["eval_num_tasks"]))}
    differ: list[str] = []
    n = 0
    for line in Path(cfg["rollouts"]).read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        rec = Rollout.model_validate_json(line)
        if rec.error is not None and rec.error.kind != "grader":
            continue  # the model or the environment failed: nothing to grade
        task = tasks.get(rec.task_id)
        label = f"{rec.task_id}#{rec.rollout_index}"
        if task is None:
            differ.append(f"{label}: not a task of this environment")
            continue
        n += 1
        base = rec.model_copy(update={"grade": None, "reward": None, "passed": False, "error": None})
        status, grade = await _grade_rollout(env, task, base, label, float(cfg["grade_timeout_s"]))
        if status != "ok":
            if rec.error is None:
                differ.append(f"{label}: recorded reward {rec.reward}, the grader now fails ({status})")
        elif (
            rec.error is not None
            or rec.passed != grade.passed
            or abs((rec.reward or 0.0) - grade.score) > 1e-9
        ):
            differ.append(
                f"{label}: recorded passed={rec.passed} reward={rec.reward}, "
                f"regraded passed={grade.passed} reward={grade.score:g}"
            )
    emit("regrade", graded=n, differ=differ[:20], n_differ=len(differ))


# -- the checks ----------------------------------------------------------------------------------
def _load(stage: Path, env_id: str | None, env_args: dict[str, Any]) -> tuple[Any, str]:
    from hub.env.environment import Environment

    found = [
        ep
        for dist in distributions(path=[str(stage)])
        for ep in dist.entry_points
        if ep.group == "verihub.environments" and (env_id is None or ep.name == env_id)
    ]
    if not found:
        raise LookupError("no verihub.environments entry point found in the package")
    ep = found[0]
    env = ep.load()(**env_args)
    if not isinstance(env, Environment):
        raise TypeError(f"load_environment returned {type(env).__name__}, not a verihub Environment")
    env.id = ep.name
    if ep.dist is not None:
        env.version = ep.dist.version
    return env, ep.name


def _sample(env: Any, split: str, seed: int, n: int) -> list[Any]:
    return list(itertools.islice(env.tasks(split, seed=seed), n))


def _task_digests(env: Any, n: int) -> dict[str, str]:
    """A hash of the first ``n`` tasks of every split for seeds 0 and 1: the same in every process
    (tasks that follow the hash seed or set order are the same within one process only)."""
    out = {}
    for split in env.splits:
        for seed in (0, 1):
            rows = [t.model_dump(mode="json") for t in _sample(env, split, seed, n)]
            text = json.dumps(rows, sort_keys=True, default=str)
            out[f"{split}/{seed}"] = hashlib.sha256(text.encode()).hexdigest()
    return out


def _id_sample_size(cfg: dict[str, Any]) -> int:
    return max(int(cfg["num_tasks"]), int(cfg.get("id_tasks", 0)))


def _ids(env: Any, split: str, n: int) -> list[str]:
    """The ids of up to ``n`` tasks: far more than the sampled tasks, so that ids which repeat or
    change only after the first few (a list that is unique where the check looks) are caught."""
    return [t.id for t in _sample(env, split, 0, n)]


async def _run_checks(env: Any, factory: Callable[[], Any], cfg: dict[str, Any]) -> None:
    from hub.review.check.probes import (
        gamed,
        gold_response,
        hacking_probes,
        long_fillers,
        other_answers,
        perturbed_response,
        probe_answer,
        randomly_perturbed_response,
    )

    n_ids = int(cfg["num_tasks"])
    phase("task ids")
    n_all = _id_sample_size(cfg)
    ids: dict[str, list[str]] = {}
    dup: list[str] = []
    for split in env.splits:
        ids[split] = _ids(env, split, n_all)
        if len(set(ids[split])) != len(ids[split]):
            dup.append(f"split {split!r}: {len(ids[split]) - len(set(ids[split]))} duplicate ids")
    emit("ids", ids=ids)
    again = factory()
    unstable = [s for s in env.splits if _ids(again, s, n_all) != ids[s]]
    if dup:
        result("task_ids", "fail", "task ids are not unique", dup)
    elif unstable:
        result("task_ids", "fail", "task ids differ between two loads", [f"split {s!r}" for s in unstable])

    phase("determinism")
    changed = []
    for split in env.splits:
        for seed in (0, 1):
            a = [t.model_dump(mode="json") for t in _sample(env, split, seed, n_ids)]
            b = [t.model_dump(mode="json") for t in _sample(again, split, seed, n_ids)]
            if a != b:
                changed.append(f"split {split!r} seed {seed}")
    emit("tasks", digests=_task_digests(env, n_ids))  # compared with another process's
    result(
        "determinism",
        "fail" if changed else "pass",
        "tasks differ for the same seed" if changed else "",
        changed,
    )

    main_split = "test" if "test" in env.splits else env.splits[0]
    timeout_s = float(cfg["grade_timeout_s"])
    errors: list[str] = []
    slow: list[str] = []
    gold_fail: list[str] = []
    pert_pass: list[str] = []
    hacks: list[str] = []
    n_gold = n_probed = 0
    no_gold: list[str] = []
    rng = random.SystemRandom()  # probes the environment cannot precompute

    def note(status: str, info: Any, label: str) -> bool:
        if status == "timeout":
            slow.append(f"{label}: no grade within {timeout_s:g}s")
        elif status == "error":
            errors.append(f"{label}: {info}")
        return status == "ok"

    # every split: a grader may be exact on the test split and lax on train (where RL trains)
    n_sampled = 0
    for split in [main_split, *(s for s in env.splits if s != main_split)]:
        tasks = _sample(env, split, 0, int(cfg["gold_tasks"]))
        n_sampled += len(tasks)
        for i, task in enumerate(tasks):
            gold = gold_response(env, task)
            if gold is None:
                no_gold.append(task.id)
            else:
                n_gold += 1
                phase(f"gold {task.id}")
                status, g = await _grade(env, task, gold, f"gold of {task.id}", timeout_s)
                if note(status, g, f"gold of {task.id}") and not (g.passed and g.score > 0):
                    why = "passed with score 0 (no reward)" if g.passed else (g.reason or g.status)
                    gold_fail.append(f"{task.id}: {why}")
                wrong = perturbed_response(env, task, gold)
                status, g = await _grade(env, task, wrong, f"perturbed gold of {task.id}", timeout_s)
                if note(status, g, f"perturbed gold of {task.id}") and _rewarded(g, has_gold=True):
                    pert_pass.append(f"{task.id}: {wrong[:40]!r} {_verdict(g)} (gold {gold[:40]!r})")
            if i >= int(cfg["probe_tasks"]):
                continue
            # A task without a reference answer is probed too (with generic options and letters):
            # a grader that accepts anything must not pass just because there is no gold to compare.
            phase(f"probes {task.id}")
            n_probed += 1
            outcomes: list[tuple[str, bool]] = []
            probes = hacking_probes(task, probe_answer(env, task, gold))
            if gold is not None:  # unforeseeable: a grader cannot tell it from a real wrong answer
                probes.append(
                    ("randomly perturbed reference", randomly_perturbed_response(env, task, gold, rng))
                )
            probes += long_fillers(rng)
            for name, text in probes:
                label = f"probe '{name}' on {task.id}"
                status, g = await _grade(env, task, text, label, timeout_s)
                if note(status, g, label):
                    outcomes.append((name, _rewarded(g, has_gold=gold is not None)))
            others = other_answers(env, task, tasks[i + 1 :] + tasks[:i]) if gold is not None else []
            paid = []
            for j, text in enumerate(others):
                label = f"probe 'answer of another task' #{j + 1} on {task.id}"
                status, g = await _grade(env, task, text, label, timeout_s)
                if note(status, g, label):
                    paid.append(_rewarded(g, has_gold=True))
            if others and len(paid) == len(others) and all(paid):  # all: another task may share the value
                hacks.append(f"the answers of {len(others)} other tasks all passed on {task.id}")
            suffix = "" if gold is not None else " (no reference answer)"
            hacks += [
                f"probe '{n}' on {task.id}{suffix} passed" for n in gamed(outcomes, has_gold=gold is not None)
            ]
    if n_gold == 0:
        result(
            "gold", "warn", "no task has a reference answer the check can render; define gold_response(task)"
        )
        result("perturbed_gold", "skip", "no gold responses")
    elif n_gold < n_sampled:
        # tasks without a reference are probed only for empty answers (or every probe passing at
        # once): a grader that is exact where a reference exists and lax elsewhere would pass
        result(
            "gold",
            "fail",
            f"{n_sampled - n_gold} of {n_sampled} sampled tasks have no reference answer the check "
            "can render, while the others do; give every task one (or define gold_response(task))",
            [*gold_fail, *(f"{t}: no reference answer" for t in no_gold)],
        )
        result(
            "perturbed_gold",
            "fail" if pert_pass else "pass",
            f"{len(pert_pass)} perturbed gold answers pass" if pert_pass else "",
            pert_pass,
        )
    else:
        result(
            "gold",
            "fail" if gold_fail else "pass",
            f"{len(gold_fail)} of {n_gold} gold answers fail" if gold_fail else f"{n_gold} gold answers pass",
            gold_fail,
        )
        result(
            "perturbed_gold",
            "fail" if pert_pass else "pass",
            f"{len(pert_pass)} perturbed gold answers pass" if pert_pass else "",
            pert_pass,
        )
    result(
        "hacking_probes",
        "fail" if hacks else "pass",
        f"{len(hacks)} reward-hacking probes passed: the grader can be gamed"
        if hacks
        else f"no probe passed on {n_probed} tasks",
        hacks,
    )
    result(
        "grading_time", "fail" if slow else "pass", f"{len(slow)} gradings timed out" if slow else "", slow
    )
    result(
        "grader_errors",
        "fail" if errors else "pass",
        f"the grader failed {len(errors)} times (it must return incorrect for bad output)" if errors else "",
        errors,
    )


def main(argv: list[str] | None = None) -> None:
    global _EVENTS_FD
    args = sys.argv[1:] if argv is None else argv
    cfg = json.loads(Path(args[0]).read_text(encoding="utf-8"))
    _EVENTS_FD = os.dup(1)
    os.dup2(2, 1)  # whatever the environment prints goes to stderr, not into the event stream
    stage, run_dir = Path(cfg["stage"]), Path(cfg["run_dir"])
    os.chdir(run_dir)
    sys.path.insert(0, str(stage))
    audit = _Audit(_allowed_read(stage, cfg.get("allow_read", [])), [run_dir], bool(cfg["block_network"]))
    sys.addaudithook(audit)
    import hub.env.environment  # noqa: F401  (import the core before the audit starts counting)
    import hub.env.types  # noqa: F401

    env_args: dict[str, Any] = cfg.get("env_args", {})
    audit.active = True
    phase("load")
    t0 = time.perf_counter()
    try:
        env, env_id = _load(stage, cfg.get("env_id"), env_args)
    except Exception as exc:
        result("loads", "fail", f"{type(exc).__name__}: {str(exc)[:300]}")
        emit("done")
        return
    result("loads", "pass", f"{env!r} in {time.perf_counter() - t0:.2f}s")
    emit("loaded", env_id=env_id, version=getattr(env, "version", ""))
    if cfg["mode"] == "ids":
        ids = {s: _ids(env, s, _id_sample_size(cfg)) for s in env.splits}
        emit("ids", ids=ids)
        emit("tasks", digests=_task_digests(env, int(cfg["num_tasks"])))
    elif cfg["mode"] == "regrade":
        asyncio.run(_regrade(env, cfg))
    else:
        asyncio.run(_run_checks(env, lambda: _load(stage, env_id, env_args)[0], cfg))
    emit("done")


if __name__ == "__main__":
    main()
