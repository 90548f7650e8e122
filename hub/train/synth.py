"""``verihub synth``: a model proposes new tasks from an environment's seed tasks; each is kept only
if it passes every check (see :mod:`hub.train.synth_filters`).

The generator is shown seed tasks as earlier turns of a chat (one JSON object of a task's fields
each, see :mod:`hub.train.synth_templates`) and asked for one more; the fields' JSON schema goes
with the request as ``response_format`` so a server that constrains decoding returns valid JSON.
An endpoint that refuses ``response_format`` is asked again without it, for the rest of the run
(the report's ``constrained`` is then False and ``notes`` says why).

Checks, cheapest first: ``parse`` (a JSON object that satisfies the fields' schema and makes a
prompt), ``duplicate`` (MinHash over word shingles of what varies between tasks, against the
environment's tasks and the tasks kept so far), ``contamination`` (no word n-gram of the prompt
shared with the environment's test split or the gsm8k/math500/aime24/amc23 test questions),
``verify`` (the environment's solver computes the answer, and agrees with the generator's where it
wrote one; without a solver, at least ``agree`` of ``k`` model solutions graded by the environment
pass) and, with a calibration model, ``calibration`` (its pass rate over ``r`` rollouts in the band).

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

from hub.env import (
    Environment,
    Message,
    ModelConfigError,
    ModelError,
    Rollout,
    Sampling,
    Task,
    Timing,
    UsageError,
)
from hub.env.settings import settings
from hub.run import ChatClient, EvalOptions, open_client, open_environment
from hub.train.synth_filters import (
    Contamination,
    NearDuplicates,
    benchmark_questions,
    json_objects,
    solver_for,
)
from hub.train.synth_templates import (
    RESPONSE_FORMATS,
    TaskTemplate,
    check_fields,
    response_format,
    template_for,
)

__all__ = ["FILTERS", "SynthConfig", "SynthReport", "synthesize", "synthesize_with"]

FILTERS = ("parse", "duplicate", "contamination", "verify", "calibration")

SYSTEM = (
    "You write new tasks for the '{env}' environment. A task is {form}. Each of your replies is one "
    "new task, different from every task before it, as a JSON object with the fields {fields}."
)
ASK = "New task."


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
    form: str = "auto"
    """``auto``: the environment's own task form where verihub knows one (the generator fills its
    fields, the solver answers); ``free``: whole prompts and answers."""
    constrain: bool = True
    """Send the fields' JSON schema as ``response_format``."""
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
    template: str = ""
    constrained: bool = False
    """Whether the requests carried ``response_format`` (False after an endpoint refused it)."""
    response_format: str = ""
    """The form they carried it in (``json_schema``, else ``json_object`` where that was refused)."""
    notes: list[str] = field(default_factory=list)
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
    env: Environment, template: TaskTemplate, config: SynthConfig, report: SynthReport
) -> tuple[NearDuplicates, Contamination, list[tuple[Task, dict[str, str]]]]:
    dups = NearDuplicates(config.dup_threshold, shingle=config.shingle)
    screen = Contamination(config.ngram)
    seeds: list[tuple[Task, dict[str, str]]] = []
    for split in env.splits:
        tasks: list[Task] = []
        for task in env.tasks(split, seed=config.seed):
            if len(tasks) >= config.reference_tasks:
                break
            if isinstance(task.prompt, str):
                tasks.append(task)
        shown: list[tuple[Task, dict[str, str]]] = []
        for task in tasks:
            fields = template.fields_of(task)
            dups.add(f"{env.id}/{split}/{task.id}", template.key(fields) if fields else str(task.prompt))
            if fields is not None:
                shown.append((task, fields))
        if split == "test":
            screen.add(f"{env.id}/test", (str(t.prompt) for t in tasks))
        if split == "train" or not seeds:
            seeds = shown[: config.pool]
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
    template = template_for(env, config.form)
    report.template, report.constrained = template.name, config.constrain
    report.response_format = RESPONSE_FORMATS[0] if config.constrain else ""
    if not template.answers and solver_for(env) is None:
        raise UsageError(f"the {template.name} form needs the environment's solver")
    output = _Output(out, report)
    dups, screen, seeds = _references(env, template, config, report)
    solver = solver_for(env)
    report.verifier = (
        f"solver:{env.id}" if solver else f"agreement: >= {config.agree} of {config.k} model solutions pass"
    )
    sampling = Sampling(temperature=config.temperature, max_tokens=config.max_tokens)
    rng = random.Random(config.seed)
    try:
        for i in range(config.n):
            verdict = await _candidate(
                env,
                template,
                generator,
                calibrator,
                config,
                i,
                rng,
                seeds,
                dups,
                screen,
                solver,
                sampling,
                report,
            )
            report.candidates = i + 1
            if isinstance(verdict, Task):
                dups.add(verdict.id, str(verdict.metadata["synth"]["key"]))
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


def _request(env: Environment, template: TaskTemplate, shown: list[dict[str, str]]) -> list[Message]:
    """The generator's chat: the form, then each shown task as an earlier reply, then the ask."""
    fields = ", ".join(f'"{name}"' for name in template.schema["properties"])
    messages = [Message(role="system", content=SYSTEM.format(env=env.id, form=template.form, fields=fields))]
    for example in shown:
        messages.append(Message(role="user", content=ASK))
        messages.append(Message(role="assistant", content=json.dumps(example)))
    messages.append(Message(role="user", content=ASK))
    return messages


async def _propose(
    generator: ChatClient,
    template: TaskTemplate,
    messages: list[Message],
    sampling: Sampling,
    seed: int,
    report: SynthReport,
) -> str:
    """The generator's reply, constrained to the fields' schema while the endpoint accepts that.

    A refused ``response_format`` (HTTP 400) is tried in the next form, then left out, for the
    rest of the run; a request refused for another reason fails without it too and stops the run."""
    kinds = RESPONSE_FORMATS[RESPONSE_FORMATS.index(report.response_format) :] if report.constrained else ()
    refused: list[str] = []
    for kind in kinds:
        try:
            completion = await generator.chat(
                messages, sampling=sampling, seed=seed, response_format=response_format(template, kind)
            )
        except ModelConfigError as exc:
            refused.append(f"{kind}: {' '.join(str(exc).split())[:200]}")
            continue
        if refused:
            report.response_format = kind
            report.notes.append(
                f"the endpoint refused response_format {'; '.join(refused)}; sent {kind} since"
            )
        return completion.message.content or ""
    completion = await generator.chat(messages, sampling=sampling, seed=seed)
    if refused:
        report.constrained, report.response_format = False, ""
        report.notes.append(
            f"the endpoint refused response_format ({'; '.join(refused)}); asked without it since"
        )
    return completion.message.content or ""


def _parse(template: TaskTemplate, text: str, task_id: str) -> tuple[Task, dict[str, str]] | None:
    """The first JSON object in ``text`` that satisfies the schema and makes a prompt."""
    for value in json_objects(text):
        fields = check_fields(template.schema, value)
        prompt = None if fields is None else template.render(fields)
        if fields is not None and prompt:
            return Task(id=task_id, prompt=prompt, answer=fields.get("answer")), fields
    return None


async def _candidate(
    env: Environment,
    template: TaskTemplate,
    generator: ChatClient,
    calibrator: ChatClient | None,
    config: SynthConfig,
    i: int,
    rng: random.Random,
    seeds: list[tuple[Task, dict[str, str]]],
    dups: NearDuplicates,
    screen: Contamination,
    solver: Any,
    sampling: Sampling,
    report: SynthReport,
) -> Task | str:
    """The kept task, or the check that removed candidate ``i`` (``check`` or ``check/reason``)."""
    shown = rng.sample(seeds, min(config.shots, len(seeds)))
    messages = _request(env, template, [fields for _, fields in shown])
    seed = config.seed * 1_000_003 + i
    constrained = report.constrained
    text = await _propose(generator, template, messages, sampling, seed, report)
    parsed = _parse(template, text, f"synth-{config.seed}-{i}")
    if parsed is None:
        return "parse"
    task, fields = parsed
    prompt = str(task.prompt)
    verdicts: dict[str, Any] = {"parse": {"pass": True, "constrained": constrained and report.constrained}}
    key = template.key(fields)
    if dups.match(key) is not None:
        return "duplicate"
    verdicts["duplicate"] = {"pass": True, "threshold": config.dup_threshold}
    if screen.hits(prompt):
        return "contamination"
    verdicts["contamination"] = {"pass": True, "ngram": config.ngram, "shared": 0}
    meta: dict[str, Any] = {}
    if solver is not None:
        solved = solver(prompt)
        if solved is None:
            return "verify/unsolved"
        reference, meta = solved
        if template.answers:
            check = task.model_copy(update={"answer": reference, "metadata": meta})
            grade = await _grade_text(env, check, f"Answer: {task.answer}")
            if not grade.passed:
                return "verify/wrong"
        task = task.model_copy(update={"answer": reference})
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
    request = json.dumps([m.to_openai() for m in messages], sort_keys=True)
    provenance = {
        "generator": report.generator,
        "template": template.name,
        "fields": fields,
        "key": key,
        "prompt_sha256": hashlib.sha256(request.encode()).hexdigest(),
        "seed": seed,
        "run_seed": config.seed,
        "candidate": i,
        "seed_tasks": [t.id for t, _ in shown],
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
