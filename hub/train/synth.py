"""``verihub synth``: a model proposes new tasks from an environment's seed tasks; each is kept only
if it passes every check (see :mod:`hub.train.synth_filters`).

Checks, cheapest first: ``parse`` (a JSON ``{"prompt", "answer"}`` that validates as a Task),
``duplicate`` (MinHash over word shingles against the environment's tasks and the tasks kept
so far), ``contamination`` (no word n-gram shared with the environment's test split or the
gsm8k/math500/aime24/amc23 test questions), ``verify`` (the environment's solver agrees with the
answer; without one, at least ``agree`` of ``k`` model solutions graded by the environment pass)
and, with a calibration model, ``calibration`` (its pass rate over ``r`` rollouts in the band).

``DIR/tasks.jsonl`` (kept tasks, provenance under ``metadata["synth"]``) and ``DIR/report.json``
(the settings and how many candidates each check removed) are rewritten through a temporary
file and a rename after every candidate, so a run that stops early leaves both whole.
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from hub.env import Environment, Message, ModelError, Rollout, Sampling, Task, Timing, UsageError
from hub.env.settings import settings
from hub.run import ChatClient, EvalOptions, open_client, open_environment
from hub.train.synth_filters import (
    Contamination,
    NearDuplicates,
    benchmark_questions,
    parse_candidate,
    solver_for,
)

__all__ = ["FILTERS", "SynthConfig", "SynthReport", "synthesize", "synthesize_with"]

FILTERS = ("parse", "duplicate", "contamination", "verify", "calibration")

TEMPLATE = (
    "You write new tasks for the '{env}' environment. Here are examples of its tasks, each with "
    "its reference answer:\n\n{examples}\n\nWrite one new task of the same kind, different from "
    "the examples, and its correct answer. Reply with only a JSON object: "
    '{{"prompt": "<the task, in the same style>", "answer": "<the reference answer>"}}'
)


@dataclass(frozen=True)
class SynthConfig:
    """What to synthesise and how each check decides (all recorded in the report)."""

    n: int = 10
    """Candidates to ask the generator for (one request each)."""
    seed: int = 0
    shots: int = 3
    """Seed tasks shown in each prompt (drawn from the first ``pool`` train tasks)."""
    pool: int = 50
    reference_tasks: int = 500
    """Tasks read from each of the environment's splits for the duplicate and contamination checks."""
    dup_threshold: float = 0.8
    shingle: int = 3
    ngram: int = 13
    k: int = 3
    """Model solutions sampled to verify an answer where the environment has no solver."""
    agree: int = 2
    """... of which at least this many must pass the environment's grader."""
    calibrate_model: str | None = None
    rollouts: int = 4
    band: tuple[float, float] = (0.1, 0.9)
    temperature: float = 1.0
    max_tokens: int = 512
    data_dir: Path | None = None
    """Benchmark questions for the contamination check (default: VERIHUB_SHARED_DATA)."""


@dataclass
class SynthReport:
    """``report.json``: the settings, the counts and how the run ended."""

    env: str
    generator: str
    config: dict[str, Any]
    candidates: int = 0
    kept: int = 0
    removed: dict[str, int] = field(default_factory=lambda: dict.fromkeys(FILTERS, 0))
    detail: dict[str, int] = field(default_factory=dict)
    """Removals by reason where a check has several: ``verify/unsolved`` (the solver cannot read
    the prompt), ``verify/wrong`` (it gets another answer), ``verify/disagreed`` (too few of the
    model solutions pass)."""
    reference: dict[str, int] = field(default_factory=dict)
    """Texts read per reference set (the environment's splits, the benchmarks)."""
    verifier: str = ""
    stopped: str | None = None
    """Why the run ended before ``n`` candidates (an unreachable endpoint, ...), else None."""


def _write_atomic(path: Path, text: str) -> None:
    tmp = path.with_name(f".{path.name}.tmp")
    with tmp.open("w", encoding="utf-8") as fh:
        fh.write(text)
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, path)


class _Output:
    def __init__(self, out: Path, report: SynthReport) -> None:
        out.mkdir(parents=True, exist_ok=True)
        self.out, self.report = out, report
        self.lines: list[str] = []
        self.flush()

    def keep(self, task: Task) -> None:
        self.lines.append(task.model_dump_json())
        self.report.kept = len(self.lines)

    def flush(self) -> None:
        _write_atomic(self.out / "tasks.jsonl", "".join(line + "\n" for line in self.lines))
        _write_atomic(self.out / "report.json", json.dumps(asdict(self.report), indent=2, default=str) + "\n")


def _grade_text(env: Environment, task: Task, text: str) -> Any:
    messages = [*task.messages(env.system_prompt), Message(role="assistant", content=text)]
    rollout = Rollout(
        task_id=task.id, rollout_index=0, messages=messages, completion=text, timing=Timing(started_at=0.0)
    )
    return env.grade(task, rollout)


async def _pass_count(
    env: Environment, client: ChatClient, task: Task, n: int, sampling: Sampling, seed: int
) -> int:
    passed = 0
    for i in range(n):
        completion = await client.chat(task.messages(env.system_prompt), sampling=sampling, seed=seed + i)
        grade = await _grade_text(env, task, completion.message.content or "")
        passed += bool(grade.passed)
    return passed


def _references(
    env: Environment, config: SynthConfig, report: SynthReport
) -> tuple[NearDuplicates, Contamination, list[Task]]:
    dups = NearDuplicates(config.dup_threshold, shingle=config.shingle)
    screen = Contamination(config.ngram)
    seeds: list[Task] = []
    for split in env.splits:
        tasks: list[Task] = []
        for task in env.tasks(split, seed=config.seed):
            if len(tasks) >= config.reference_tasks:
                break
            if isinstance(task.prompt, str):
                tasks.append(task)
        for task in tasks:
            dups.add(f"{env.id}/{split}/{task.id}", str(task.prompt))
        if split == "test":
            screen.add(f"{env.id}/test", (str(t.prompt) for t in tasks))
        if split == "train" or not seeds:
            seeds = tasks[: config.pool]
        report.reference[f"{env.id}/{split}"] = len(tasks)
    data_dir = config.data_dir or settings().shared_data
    if data_dir is not None and Path(data_dir).is_dir():
        for name, question in benchmark_questions(Path(data_dir)):
            screen.add(name, [question])
    report.reference.update(screen.sources)
    if not seeds:
        raise UsageError(f"{env.id} has no text tasks to show the generator")
    return dups, screen, seeds


async def synthesize_with(
    env: Environment,
    generator: ChatClient,
    out: Path,
    config: SynthConfig,
    *,
    generator_name: str,
    calibrator: ChatClient | None = None,
    on_candidate: Callable[[int, str], None] | None = None,
) -> SynthReport:
    """Run the synthesis with open clients; returns the report (also in ``out/report.json``).

    A model failure (unreachable, refused) ends the run: the report says why in ``stopped`` and
    the tasks kept so far stay in ``out/tasks.jsonl``."""
    report = SynthReport(env=env.id, generator=generator_name, config=asdict(config))
    output = _Output(out, report)
    dups, screen, seeds = _references(env, config, report)
    solver = solver_for(env)
    report.verifier = (
        f"solver:{env.id}" if solver else f"agreement: >= {config.agree} of {config.k} model solutions pass"
    )
    sampling = Sampling(temperature=config.temperature, max_tokens=config.max_tokens)
    rng = random.Random(config.seed)
    try:
        for i in range(config.n):
            verdict = await _candidate(
                env, generator, calibrator, config, i, rng, seeds, dups, screen, solver, sampling, report
            )
            report.candidates = i + 1
            if isinstance(verdict, Task):
                dups.add(verdict.id, str(verdict.prompt))
                output.keep(verdict)
                verdict_name = "kept"
            else:
                report.removed[verdict.partition("/")[0]] += 1
                if "/" in verdict:
                    report.detail[verdict] = report.detail.get(verdict, 0) + 1
                verdict_name = verdict
            output.flush()
            if on_candidate is not None:
                on_candidate(i, verdict_name)
    except ModelError as exc:
        report.stopped = " ".join(str(exc).split()) or type(exc).__name__
        output.flush()
    return report


async def _candidate(
    env: Environment,
    generator: ChatClient,
    calibrator: ChatClient | None,
    config: SynthConfig,
    i: int,
    rng: random.Random,
    seeds: list[Task],
    dups: NearDuplicates,
    screen: Contamination,
    solver: Any,
    sampling: Sampling,
    report: SynthReport,
) -> Task | str:
    """The kept task, or the check that removed candidate ``i`` (``check`` or ``check/reason``)."""
    shown = rng.sample(seeds, min(config.shots, len(seeds)))
    examples = "\n\n".join(json.dumps({"prompt": t.prompt, "answer": t.answer}) for t in shown)
    prompt = TEMPLATE.format(env=env.id, examples=examples)
    seed = config.seed * 1_000_003 + i
    completion = await generator.chat([Message(role="user", content=prompt)], sampling=sampling, seed=seed)
    task = parse_candidate(completion.message.content or "", f"synth-{config.seed}-{i}")
    if task is None:
        return "parse"
    text = str(task.prompt)
    verdicts: dict[str, Any] = {"parse": "pass"}
    near = dups.match(text)
    if near is not None:
        return "duplicate"
    verdicts["duplicate"] = {"pass": True, "threshold": config.dup_threshold}
    hits = screen.hits(text)
    if hits:
        return "contamination"
    verdicts["contamination"] = {"pass": True, "ngram": config.ngram, "shared": 0}
    meta: dict[str, Any] = {}
    if solver is not None:
        solved = solver(text)
        if solved is None:
            return "verify/unsolved"
        reference, meta = solved
        check = task.model_copy(update={"answer": reference, "metadata": meta})
        grade = await _grade_text(env, check, f"Answer: {task.answer}")
        if not grade.passed:
            return "verify/wrong"
        verdicts["verify"] = {"method": "solver", "reference": reference}
    else:
        passed = await _pass_count(env, generator, task, config.k, sampling, seed * 31)
        if passed < config.agree:
            return "verify/disagreed"
        verdicts["verify"] = {"method": "agreement", "k": config.k, "agree": config.agree, "passed": passed}
    if calibrator is not None:
        probe = task.model_copy(update={"metadata": meta})
        passed = await _pass_count(env, calibrator, probe, config.rollouts, sampling, seed * 37)
        rate = passed / config.rollouts
        if not config.band[0] <= rate <= config.band[1]:
            return "calibration"
        verdicts["calibration"] = {"model": config.calibrate_model, "pass_rate": rate, "band": config.band}
    else:
        verdicts["calibration"] = "skipped"
    provenance = {
        "generator": report.generator,
        "prompt_sha256": hashlib.sha256(prompt.encode()).hexdigest(),
        "seed": seed,
        "run_seed": config.seed,
        "candidate": i,
        "seed_tasks": [t.id for t in shown],
        "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "filters": verdicts,
    }
    return task.model_copy(update={"metadata": {**meta, "split": "synth", "synth": provenance}})


async def synthesize(
    env_id: str,
    *,
    model: str,
    base_url: str | None,
    out: Path,
    config: SynthConfig,
    env_args: dict[str, Any] | None = None,
    options: EvalOptions | None = None,
    calibrate_base_url: str | None = None,
    on_candidate: Callable[[int, str], None] | None = None,
) -> SynthReport:
    """Load ``env_id``, open the model clients as ``verihub eval`` does and run the synthesis.

    An endpoint that cannot be reached at the start still leaves an empty ``tasks.jsonl`` and a
    report whose ``stopped`` says why."""
    opts = options or EvalOptions(concurrency=1)
    env = open_environment(env_id, env_args or {})
    report = SynthReport(env=env_id, generator=model, config=asdict(config))
    try:
        async with open_client(model, base_url, opts) as generator:
            if config.calibrate_model is None:
                return await synthesize_with(
                    env, generator, out, config, generator_name=model, on_candidate=on_candidate
                )
            async with open_client(config.calibrate_model, calibrate_base_url or base_url, opts) as calib:
                return await synthesize_with(
                    env,
                    generator,
                    out,
                    config,
                    generator_name=model,
                    calibrator=calib,
                    on_candidate=on_candidate,
                )
    except ModelError as exc:  # the endpoint failed before the first candidate
        report.stopped = " ".join(str(exc).split()) or type(exc).__name__
        _Output(out, report)
        return report
    finally:
        await env.aclose()
