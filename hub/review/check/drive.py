"""The check's questions, asked from outside the sandbox.

The environment runs in a sandbox (:func:`hub.sandbox.remote.start_environment`) exactly as in
``verihub eval --sandbox``; this module, in the trusted process, asks it for tasks, gold
responses and grades over the nonce-checked channel and draws every verdict itself. The package
can only answer the questions it is asked: it cannot report a result, and a message that
answers no question ends the check as tampering.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import hashlib
import itertools
import json
import random
import signal
import time
from collections.abc import Coroutine
from typing import Any, TypeVar

from hub.env import Message, Rollout, Task, Timing
from hub.env.aio import within
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
from hub.review.check.report import CheckReport
from hub.sandbox import RemoteEnvironment, RemoteError, SandboxDiedError

__all__ = ["Hung", "Prober", "run_sync", "task_digests", "task_ids"]

T = TypeVar("T")


class Hung(Exception):
    """A grading blocked the sandbox's event loop: no answer, not even to a ping."""

    def __init__(self, label: str, seconds: float) -> None:
        super().__init__(f"{label} hung: no answer within {seconds:g}s")
        self.label = label
        self.seconds = seconds


def _sample(env: Any, split: str, seed: int, n: int) -> list[Task]:
    return list(itertools.islice(env.tasks(split, seed=seed), n))


def task_digests(env: Any, n: int) -> dict[str, str]:
    """A hash of the first ``n`` tasks of every split for seeds 0 and 1 (compared across two
    sandboxes with different hash seeds)."""
    out = {}
    for split in env.splits:
        for seed in (0, 1):
            rows = [t.model_dump(mode="json") for t in _sample(env, split, seed, n)]
            text = json.dumps(rows, sort_keys=True, default=str)
            out[f"{split}/{seed}"] = hashlib.sha256(text.encode()).hexdigest()
    return out


def task_ids(env: Any, n: int) -> dict[str, list[str]]:
    """The ids of up to ``n`` tasks per split: far more than the sampled tasks, so that ids which
    repeat or change only after the first few are caught."""
    return {split: [t.id for t in _sample(env, split, 0, n)] for split in env.splits}


def _rewarded(grade: Any, *, has_gold: bool) -> bool:
    """Whether a wrong answer got what a right one gets: a pass, or the reward of one."""
    return bool(grade.passed) or float(grade.score) >= (0.5 if has_gold else 1.0)


def _verdict(grade: Any) -> str:
    return "passed" if grade.passed else f"scored {float(grade.score):g} (not passed, but rewarded)"


class Prober:
    """Grades answers in the sandboxed environment with time limits, and notes the phase."""

    def __init__(self, env: RemoteEnvironment, *, timeout_s: float, memory_mb: int) -> None:
        self.env = env
        self.timeout_s = timeout_s
        self.memory_mb = memory_mb
        self.phase = "load"
        self.noted: list[dict[str, str]] = []

    async def responsive(self) -> bool:
        try:
            self.noted += await within(self.env.acall("tripwire"), 2.0)
        except (asyncio.TimeoutError, SandboxDiedError, RemoteError):
            return False
        return True

    async def grade_rollout(self, task: Task, rollout: Rollout, label: str) -> tuple[str, Any]:
        """('ok', grade) | ('timeout', None) | ('error', message). Raises :class:`Hung` when the
        sandbox stops answering, :class:`SandboxDiedError` when it dies."""
        self.phase = f"grading {label}"
        try:
            grade = await within(self.env.grade(task, rollout), self.timeout_s)
        except asyncio.TimeoutError:
            if not await self.responsive():
                raise Hung(label, self.timeout_s + 2.0) from None
            return "timeout", None
        except RemoteError as exc:
            if exc.kind == "MemoryError":
                return "error", f"MemoryError: the grader ran past the memory limit ({self.memory_mb} MiB)"
            return "error", f"{exc.kind}: {exc.message[:200]}"
        if getattr(grade, "is_error", False):
            return "error", f"grade status {grade.status}: {grade.reason[:200]}"
        if getattr(grade, "grader_failed", False):  # a total grader caught its own crash: still a bug
            return "error", grade.reason[:200]
        return "ok", grade

    async def grade(self, task: Task, response: str, label: str) -> tuple[str, Any]:
        messages = [*task.messages(self.env.system_prompt), Message(role="assistant", content=response)]
        rollout = Rollout(  # shaped like an evaluation's single-turn rollout: one model turn
            task_id=task.id,
            rollout_index=0,
            messages=messages,
            completion=response,
            timing=Timing(started_at=time.time()),
            turns=1,
        )
        return await self.grade_rollout(task, rollout, label)


def death(exc: SandboxDiedError, phase: str, report: CheckReport, cpu_s: int) -> None:
    """Report a sandbox that died (or was killed, or tampered) during ``phase``."""
    text = str(exc)
    code = exc.returncode
    if text.startswith("tampering"):
        report.add(
            "sandbox", "fail", f"the package tampered with the check's channel during '{phase}'", [text]
        )
        return
    grading = phase.startswith(("grading", "gold", "probes"))
    if "killed by the sandbox supervisor (cpu" in text or code in (-signal.SIGXCPU, 128 + signal.SIGXCPU):
        report.add(
            "grading_time" if grading else "sandbox",
            "fail",
            f"the environment process died during '{phase}' (killed by the CPU limit of {cpu_s}s)",
        )
    elif "wall clock" in text:
        report.add(
            "grading_time" if grading else "sandbox",
            "fail",
            f"the check ran past its wall-clock limit during '{phase}'",
        )
    else:
        report.add("sandbox", "fail", f"the environment process died during '{phase}'", [text])


async def run_probes(prober: Prober, report: CheckReport, *, gold_tasks: int, probe_tasks: int) -> None:
    """Gold answers, perturbed gold answers and the hacking probes, on every split."""
    env = prober.env
    timeout_s = prober.timeout_s
    main_split = "test" if "test" in env.splits else env.splits[0]
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

    n_sampled = 0
    for split in [main_split, *(s for s in env.splits if s != main_split)]:
        prober.phase = f"tasks {split}"
        tasks = _sample(env, split, 0, gold_tasks)
        n_sampled += len(tasks)
        for i, task in enumerate(tasks):
            prober.phase = f"gold {task.id}"
            gold = gold_response(env, task)
            if gold is None:
                no_gold.append(task.id)
            else:
                n_gold += 1
                status, g = await prober.grade(task, gold, f"gold of {task.id}")
                if note(status, g, f"gold of {task.id}") and not (g.passed and g.score > 0):
                    why = "passed with score 0 (no reward)" if g.passed else (g.reason or g.status)
                    gold_fail.append(f"{task.id}: {why}")
                wrong = perturbed_response(env, task, gold)
                status, g = await prober.grade(task, wrong, f"perturbed gold of {task.id}")
                if note(status, g, f"perturbed gold of {task.id}") and _rewarded(g, has_gold=True):
                    pert_pass.append(f"{task.id}: {wrong[:40]!r} {_verdict(g)} (gold {gold[:40]!r})")
            if i >= probe_tasks:
                continue
            prober.phase = f"probes {task.id}"
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
                status, g = await prober.grade(task, text, label)
                if note(status, g, label):
                    outcomes.append((name, _rewarded(g, has_gold=gold is not None)))
            others = other_answers(env, task, tasks[i + 1 :] + tasks[:i]) if gold is not None else []
            paid = []
            for j, text in enumerate(others):
                label = f"probe 'answer of another task' #{j + 1} on {task.id}"
                status, g = await prober.grade(task, text, label)
                if note(status, g, label):
                    paid.append(_rewarded(g, has_gold=True))
            if others and len(paid) == len(others) and all(paid):  # all: another task may share the value
                hacks.append(f"the answers of {len(others)} other tasks all passed on {task.id}")
            suffix = "" if gold is not None else " (no reference answer)"
            hacks += [
                f"probe '{n}' on {task.id}{suffix} passed" for n in gamed(outcomes, has_gold=gold is not None)
            ]
    if n_gold == 0:
        report.add(
            "gold", "warn", "no task has a reference answer the check can render; define gold_response(task)"
        )
        report.add("perturbed_gold", "skip", "no gold responses")
    elif n_gold < n_sampled:
        report.add(
            "gold",
            "fail",
            f"{n_sampled - n_gold} of {n_sampled} sampled tasks have no reference answer the check "
            "can render, while the others do; give every task one (or define gold_response(task))",
            [*gold_fail, *(f"{t}: no reference answer" for t in no_gold)],
        )
    else:
        report.add(
            "gold",
            "fail" if gold_fail else "pass",
            f"{len(gold_fail)} of {n_gold} gold answers fail" if gold_fail else f"{n_gold} gold answers pass",
            gold_fail,
        )
    if n_gold:
        report.add(
            "perturbed_gold",
            "fail" if pert_pass else "pass",
            f"{len(pert_pass)} perturbed gold answers pass" if pert_pass else "",
            pert_pass,
        )
    report.add(
        "hacking_probes",
        "fail" if hacks else "pass",
        f"{len(hacks)} reward-hacking probes passed: the grader can be gamed"
        if hacks
        else f"no probe passed on {n_probed} tasks",
        hacks,
    )
    report.add(
        "grading_time", "fail" if slow else "pass", f"{len(slow)} gradings timed out" if slow else "", slow
    )
    report.add(
        "grader_errors",
        "fail" if errors else "pass",
        f"the grader failed {len(errors)} times (it must return incorrect for bad output)" if errors else "",
        errors,
    )


def identity_checks(
    env: RemoteEnvironment, again: RemoteEnvironment, report: CheckReport, *, num_tasks: int, id_tasks: int
) -> None:
    """Task ids unique and equal in two sandboxes; tasks equal for a seed within one sandbox and
    across the two (which run with different hash seeds)."""
    n_all = max(num_tasks, id_tasks)
    ids, ids2 = task_ids(env, n_all), task_ids(again, n_all)
    dup = [
        f"split {s!r}: {len(v) - len(set(v))} duplicate ids" for s, v in ids.items() if len(set(v)) != len(v)
    ]
    unstable = [f"split {s!r}" for s in env.splits if ids.get(s) != ids2.get(s)]
    if dup:
        report.add("task_ids", "fail", "task ids are not unique", dup)
    elif unstable:
        report.add(
            "task_ids",
            "fail",
            "task ids differ between two loads in two processes "
            "(ids must not depend on hash(), time or unseeded randomness)",
            unstable,
        )
    else:
        report.add("task_ids", "pass", f"{sum(len(v) for v in ids.values())} ids, stable")
    changed = []
    for split in env.splits:
        for seed in (0, 1):
            a = [t.model_dump(mode="json") for t in _sample(env, split, seed, num_tasks)]
            b = [t.model_dump(mode="json") for t in _sample(env, split, seed, num_tasks)]
            if a != b:
                changed.append(f"split {split!r} seed {seed}")
    if changed:
        report.add("determinism", "fail", "tasks differ for the same seed", changed)
        return
    d1, d2 = task_digests(env, num_tasks), task_digests(again, num_tasks)
    if d1 != d2:
        report.add(
            "determinism",
            "fail",
            "tasks differ for the same seed between two processes "
            "(they must not depend on hash(), set order, time or unseeded randomness)",
            sorted(k for k in d1 if d1.get(k) != d2.get(k)),
        )
    else:
        report.add("determinism", "pass")


def tripwire_results(noted: list[dict[str, str]], report: CheckReport, *, finished: bool) -> None:
    """Turn what the sandbox's tripwire noted into the file_access and network results."""
    kinds: dict[str, list[str]] = {"read": [], "write": [], "network": [], "process": []}
    for v in noted:
        kinds.setdefault(v.get("kind", "?"), []).append(f"{v.get('detail')} (during {v.get('phase')})")
    reads = kinds["read"] + [f"write: {w}" for w in kinds["write"]]
    if reads:
        report.add(
            "file_access",
            "fail",
            "files were read outside the package and the run directory, or written outside the run directory",
            reads,
        )
    if kinds["network"]:
        report.add("network", "fail", "network access was attempted", kinds["network"])
    if kinds["process"] and not reads:
        report.add(
            "file_access",
            "warn",
            "the package started processes: the audit hook cannot see what they read or write "
            "(the sandbox holds them all the same)",
            kinds["process"],
        )
    for name in ("file_access", "network"):
        if report.result(name) is None:
            report.add(
                name,
                "pass" if finished else "warn",
                "" if finished else "nothing seen, but the run stopped early",
            )


def run_sync(coro: Coroutine[Any, Any, T]) -> T:
    """``asyncio.run(coro)``, also from code that already runs an event loop (then in a thread
    of its own: the check is synchronous for its callers)."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coro)
    with concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="verihub-check") as pool:
        return pool.submit(asyncio.run, coro).result()


def elapsed(t0: float) -> str:
    return f"{time.perf_counter() - t0:.2f}s"
