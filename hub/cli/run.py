"""``verihub eval``, ``verihub show`` and ``verihub regrade``."""

from __future__ import annotations

import re
import time
from pathlib import Path

import typer
from rich.table import Table

from hub.cli.app import app
from hub.cli.consoles import make_console
from hub.cli.options import EnvArgOpt, parse_env_args
from hub.cli.progress import RunProgress
from hub.env import RunInterrupted, Sampling, UsageError, aio
from hub.run import EvalOptions, RunDir, Summary, SummaryBuilder, resume
from hub.run.evaluate import evaluate, regrade

__all__ = ["eval_cmd", "print_summary", "regrade_cmd", "show_cmd", "view_cmd"]

console = make_console()
err = make_console(stderr=True)


def _default_out(env_id: str, model: str) -> Path:
    slug = re.sub(r"[^A-Za-z0-9_.-]+", "-", model).strip("-")[:60]
    return Path("runs") / f"{env_id}-{slug}-{time.strftime('%Y%m%d-%H%M%S')}"


RUN_DEFINING = (
    "env_id",
    "model",
    "num_tasks",
    "rollouts",
    "max_turns",
    "seed",
    "split",
    "out",
    "temperature",
    "top_p",
    "max_tokens",
    "stop",
    "env_arg",
    "group_advantages",
    "shuffle",
    "logprobs",
)
"""``eval`` parameters that define a run (its saved config): a resume may not change them. The
others (endpoint, key, concurrency, rate limits, timeouts, retries, grading) are operational."""


def sandbox_default() -> bool:
    """``[eval] sandbox = true`` in the user config file (see ``hub.registry.config.config_path``)."""
    from hub.registry import config_path, read_config

    path = config_path()
    if not path.is_file():
        return False
    value = read_config(path).get("eval", {}).get("sandbox", False)
    if not isinstance(value, bool):
        raise UsageError(f"{path}: [eval] sandbox must be true or false")
    return value


def _given(ctx: typer.Context, names: tuple[str, ...]) -> list[str]:
    """The flags among ``names`` that were set on the command line (not left at the default)."""
    out: list[str] = []
    for param in ctx.command.params:
        if param.name not in names:
            continue
        source = ctx.get_parameter_source(param.name)
        if source is not None and source.name != "DEFAULT":
            longs = [o for o in param.opts if o.startswith("--")]
            out.append(longs[0] if longs else param.name.upper())
    return out


@app.command("eval")
def eval_cmd(
    ctx: typer.Context,
    env_id: str = typer.Argument(None, help="Environment id (see `verihub list`). Omit with --resume."),
    model: str = typer.Option(None, "--model", "-m", help="Model name at --base-url, or local:smollm2."),
    base_url: str = typer.Option(
        None, "--base-url", help="OpenAI-compatible endpoint, e.g. http://127.0.0.1:8000/v1."
    ),
    api_key_env: str = typer.Option("OPENAI_API_KEY", "--api-key-env", help="Variable holding the API key."),
    num_tasks: int = typer.Option(None, "--num-tasks", "-n", min=1, help="Evaluate the first N tasks."),
    shuffle: bool = typer.Option(
        False,
        "--shuffle",
        help="With --num-tasks: a random sample of N tasks (seeded by --seed), not the first N.",
    ),
    rollouts: int = typer.Option(1, "--rollouts", "-r", min=1, help="Rollouts per task."),
    concurrency: int = typer.Option(32, "--concurrency", "-c", min=1, help="Rollouts in flight."),
    max_turns: int = typer.Option(None, "--max-turns", min=1, help="Model turns per rollout."),
    seed: int = typer.Option(0, "--seed", help="Task generation and sampling seed."),
    split: str = typer.Option("test", "--split", help="Task split."),
    out: Path = typer.Option(None, "--out", "-o", help="Run directory (default runs/ENV-MODEL-TIME)."),
    resume_dir: Path = typer.Option(None, "--resume", help="Finish an interrupted run in this directory."),
    temperature: float = typer.Option(None, "--temperature", min=0.0, help="Sampling temperature."),
    top_p: float = typer.Option(None, "--top-p", min=0.0, max=1.0, help="Nucleus sampling."),
    max_tokens: int = typer.Option(512, "--max-tokens", min=1, help="Completion token limit per turn."),
    stop: list[str] = typer.Option(None, "--stop", help="Stop sequence (repeatable)."),
    rpm: float = typer.Option(None, "--rpm", min=0.001, help="Request-per-minute limit."),
    tpm: float = typer.Option(None, "--tpm", min=1.0, help="Token-per-minute limit."),
    timeout: float = typer.Option(120.0, "--timeout", min=0.1, help="Per-request timeout in seconds."),
    max_retries: int = typer.Option(5, "--max-retries", min=0, help="Retries per request."),
    grade_timeout: float = typer.Option(60.0, "--grade-timeout", min=0.1, help="Grading time limit (s)."),
    grade_on: str = typer.Option(
        "local",
        "--grade-on",
        help="Where grading runs: local (this process) or ray (Ray workers; needs `pip install ray`). "
        "May differ between a run and its --resume.",
    ),
    ray_address: str = typer.Option(
        None, "--ray-address", help="With --grade-on ray: the Ray cluster (default: start a local one)."
    ),
    env_arg: list[str] = EnvArgOpt,
    stream: bool = typer.Option(
        False, "--stream", help="Ask the server for streamed answers (SSE); for servers that require it."
    ),
    progress: bool = typer.Option(True, "--progress/--no-progress", help="Show a progress bar."),
    logprobs: bool = typer.Option(
        False,
        "--logprobs",
        help="Record each answer's tokens and log-probabilities (and token ids when the server sends "
        "them) in rollouts.jsonl (extra.tokens); `verihub export` carries them.",
    ),
    retry_errors: bool = typer.Option(
        False,
        "--retry-errors",
        help="With --resume: run again the rollouts that ended in a model or environment error "
        "(the failed attempts are kept in failed_attempts.jsonl and in each new record).",
    ),
    group_advantages: bool = typer.Option(
        False, "--group-advantages", help="GRPO groups: write each rollout's (r - mean) / std over its task."
    ),
    sandbox: bool = typer.Option(
        None,
        "--sandbox/--no-sandbox",
        help="Run the environment's code in the bubblewrap sandbox, as `verihub check` does "
        "(default: [eval] sandbox in the config file, else off).",
    ),
    unsafe_no_sandbox: bool = typer.Option(
        False, "--unsafe-no-sandbox", help="With --sandbox where bubblewrap is missing: run it unsandboxed."
    ),
    push: bool = typer.Option(
        False,
        "--push",
        help="Once the run has finished complete, push it to the hub you logged in to, as "
        "`verihub results push DIR` does (private unless --public). An interrupted or incomplete "
        "run is not pushed.",
    ),
    public: bool = typer.Option(False, "--public", help="With --push: make the pushed run public."),
    push_env: str = typer.Option(
        None, "--push-env", help="With --push: the hub environment OWNER/ID the run is of (as --env there)."
    ),
    curriculum: bool = typer.Option(
        False,
        "--curriculum",
        help="Let a curriculum choose the tasks' difficulty batch by batch from the outcomes; the "
        "level trajectory goes to DIR/curriculum.jsonl (needs an environment with a difficulty space).",
    ),
    batch_size: int = typer.Option(8, "--batch-size", min=1, help="With --curriculum: tasks per batch."),
    band: str = typer.Option(
        None,
        "--band",
        help="With --curriculum: pass-rate band LOW,HIGH (default: calibrate's learnable band).",
    ),
) -> None:
    """Evaluate an environment against a model and write a run directory.

    Writes DIR/config.json, DIR/rollouts.jsonl (one line per finished rollout) and
    DIR/summary.json, then prints the summary. An interrupted run continues with
    `verihub eval --resume DIR`, which reuses the saved config: only operational flags
    (--base-url, --api-key-env, --concurrency, --rpm, --tpm, --timeout, --max-retries,
    --grade-timeout, --grade-on, --ray-address, --sandbox, --stream, --no-progress,
    --retry-errors) may be given with it.
    `--grade-on ray` grades on Ray workers (the CPU-heavy part); the rest of the run stays
    in this process. With --push the finished run is uploaded to your hub (see
    `verihub results push`); --push may also be given with --resume.
    """
    from hub.cli.results import push_after_eval, push_settings

    push_to = push_settings(public, push_env, push=push)
    if curriculum:
        _refuse_with_curriculum(ctx, sandbox=sandbox, env_id=env_id, model=model)
    target = _run_target(
        ctx, resume_dir=resume_dir, env_id=env_id, model=model, out=out, retry_errors=retry_errors
    )
    if grade_on not in ("local", "ray"):
        raise UsageError(f"--grade-on must be local or ray, not {grade_on!r}")
    if ray_address is not None and grade_on != "ray":
        raise UsageError("--ray-address needs --grade-on ray")
    sampling = Sampling(
        temperature=temperature, top_p=top_p, max_tokens=max_tokens, stop=tuple(stop) if stop else None
    )
    if curriculum:
        from hub.cli.curriculum import eval_curriculum

        opts = EvalOptions(
            concurrency=concurrency,
            api_key_env=api_key_env,
            timeout_s=timeout,
            max_retries=max_retries,
            grade_timeout_s=grade_timeout,
        )
        eval_curriculum(
            env_id, model=model, base_url=base_url, out=target, num_tasks=num_tasks, batch_size=batch_size,
            band=band, rollouts=rollouts, seed=seed, split=split, sampling=sampling,
            env_args=parse_env_args(env_arg), options=opts,
        )  # fmt: skip
        return
    with RunProgress(enabled=progress) as bar:
        options = EvalOptions(
            concurrency=concurrency,
            api_key_env=api_key_env,
            timeout_s=timeout,
            max_retries=max_retries,
            requests_per_minute=rpm,
            tokens_per_minute=tpm,
            grade_timeout_s=grade_timeout,
            grade_on="ray" if grade_on == "ray" else "local",
            ray_address=ray_address,
            sandbox=sandbox_default() if sandbox is None else sandbox,
            unsafe_no_sandbox=unsafe_no_sandbox,
            stream=stream,
            retry_errors=retry_errors,
            on_rollout=bar.update,
            on_start=bar.start,
        )
        try:
            if resume_dir is not None:
                summary = aio.run(resume(target, options=options, base_url=base_url))
            else:
                summary = aio.run(
                    evaluate(
                        env_id,
                        model=model,
                        base_url=base_url,
                        out=target,
                        num_tasks=num_tasks,
                        rollouts=rollouts,
                        max_turns=max_turns,
                        seed=seed,
                        split=split,
                        sampling=sampling,
                        env_args=parse_env_args(env_arg),
                        group_advantages=group_advantages,
                        shuffle=shuffle,
                        logprobs=logprobs,
                        options=options,
                    )
                )
        except KeyboardInterrupt:
            if RunDir(target).config_path.exists():
                hint = f"finished rollouts are saved. Continue with `verihub eval --resume {target}`"
                if push_to is not None:
                    hint += " (the run was not pushed; add --push to the resume)"
                raise RunInterrupted(f"interrupted; {hint}") from None
            raise
    print_summary(summary, run_dir=target)
    if push_to is not None:
        push_after_eval(target, push_to, env=push_env, public=public)


def _run_target(
    ctx: typer.Context,
    *,
    resume_dir: Path | None,
    env_id: str | None,
    model: str | None,
    out: Path | None,
    retry_errors: bool,
) -> Path:
    """The run directory ``eval`` writes: the one resumed (whose saved config no run-defining flag
    may change), or a new one for ``env_id`` and ``model``; a refusal says what to do instead."""
    if resume_dir is not None:
        fixed = _given(ctx, RUN_DEFINING)
        if fixed:
            raise UsageError(
                f"{', '.join(fixed)} cannot change on --resume: a resume reuses the run's saved config "
                f"({resume_dir / 'config.json'}); drop {'it' if len(fixed) == 1 else 'them'}, or start "
                "a new run with another --out"
            )
        if (resume_dir / "curriculum.jsonl").exists():
            raise UsageError(
                f"{resume_dir} is a curriculum run, which cannot be resumed (its tasks depend on its "
                "outcomes); start a new run with --curriculum"
            )
        return resume_dir
    if env_id is None:
        raise UsageError("name an environment (see `verihub list`) or pass --resume DIR")
    if model is None:
        raise UsageError("pass --model NAME (with --base-url URL), or --model local:smollm2")
    if retry_errors:
        raise UsageError("--retry-errors needs --resume DIR (a new run has no errors to retry)")
    return out or _default_out(env_id, model)


def _refuse_with_curriculum(
    ctx: typer.Context, *, sandbox: bool | None, env_id: str | None, model: str | None
) -> None:
    """``eval --curriculum`` takes a new run's flags only: refuse the others in one line."""
    clash = _given(ctx, ("resume_dir", "shuffle", "push", "group_advantages", "retry_errors", "logprobs"))
    if clash or sandbox:
        raise UsageError(f"--curriculum cannot be combined with {', '.join(clash) or '--sandbox'}")
    if env_id is None or model is None:
        raise UsageError("--curriculum needs an environment and --model NAME")


def print_summary(summary: Summary, *, run_dir: Path | None = None, per_task: int = 0) -> None:
    """Print a run summary as tables."""
    title = f"{summary.env_id} @ {summary.model}"
    table = Table(title=title, show_header=False)
    table.add_column("metric", style="bold")
    table.add_column("value")
    mean = "-" if summary.mean_reward is None else f"{summary.mean_reward:.4f}"
    ci = "-" if summary.ci95 is None else f"[{summary.ci95[0]:.4f}, {summary.ci95[1]:.4f}]"
    table.add_row("tasks x rollouts", f"{summary.n_tasks} x {summary.rollouts_per_task}")
    table.add_row("rollouts recorded", str(summary.n_rollouts))
    errors = str(summary.n_errors)
    if summary.errors_by_kind:
        errors += " (" + ", ".join(f"{k}: {v}" for k, v in summary.errors_by_kind.items()) + ")"
    table.add_row("errors", errors)
    if summary.grader_failures:
        table.add_row("grader failures", f"{summary.grader_failures} (scored 0, counted in the mean)")
    table.add_row("mean reward", mean)
    table.add_row("95% CI", ci)
    for k, v in summary.pass_at_k.items():
        table.add_row(f"pass@{k}", f"{v:.4f}")
    for k, v in summary.pass_all_k.items():
        if k != "1":
            table.add_row(f"pass^{k}", f"{v:.4f}")
    for name, value in summary.metrics.items():
        table.add_row(name, f"{value:.4f}")
    if summary.zero_variance_fraction is not None:
        table.add_row("zero-variance groups", f"{summary.zero_variance_fraction:.1%}")
    if summary.usage:
        table.add_row(
            "tokens",
            f"{summary.usage.get('prompt_tokens', 0)} in / {summary.usage.get('completion_tokens', 0)} out",
        )
    if run_dir is not None:
        table.add_row("run directory", str(run_dir))
    console.print(table)
    if per_task:
        tasks = Table(title="per task")
        for col in ("task", "n", "passed", "pass rate", "errors"):
            tasks.add_column(col)
        for t in summary.per_task[:per_task]:
            rate = "-" if t.pass_rate is None else f"{t.pass_rate:.2f}"
            tasks.add_row(t.task_id, str(t.n), str(t.n_passed), rate, str(t.n_errors))
        console.print(tasks)


@app.command("show")
def show_cmd(
    run_dir: Path = typer.Argument(..., help="A run directory."),
    tasks: int = typer.Option(0, "--tasks", help="Also list the first N tasks' pass rates."),
    recompute: bool = typer.Option(False, "--recompute", help="Rebuild the summary from rollouts.jsonl."),
) -> None:
    """Print a run's summary as a table (read-only: safe while the run is being written)."""
    rd = RunDir(run_dir)
    config = rd.load_config()
    holder = rd.writer_holder()
    if holder is not None:
        err.print(f"note: the run is being written by {holder.describe()}; showing what is saved so far")
    if recompute or holder is not None or not rd.summary_path.exists():
        builder = SummaryBuilder(
            env_id=config.env_id,
            env_version=config.env_version,
            model=config.model,
            rollouts_per_task=config.rollouts_per_task,
        )
        summary = builder.extend(rd.iter_rollouts()).build()
        if holder is None and not rd.summary_path.exists():
            err.print("note: the run has no summary.json (unfinished?); showing what rollouts.jsonl holds")
    else:
        summary = rd.load_summary()
    print_summary(summary, run_dir=run_dir, per_task=tasks)


@app.command("regrade")
def regrade_cmd(
    run_dir: Path = typer.Argument(..., help="A run directory."),
    grade_timeout: float = typer.Option(60.0, "--grade-timeout", min=0.1, help="Grading time limit (s)."),
    grade_on: str = typer.Option("local", "--grade-on", help="local, or ray (grade on Ray workers)."),
    ray_address: str = typer.Option(
        None, "--ray-address", help="With --grade-on ray: the Ray cluster (default: start a local one)."
    ),
) -> None:
    """Re-grade saved rollouts with the installed grader, without calling the model."""
    if grade_on not in ("local", "ray"):
        raise UsageError(f"--grade-on must be local or ray, not {grade_on!r}")
    if ray_address is not None and grade_on != "ray":
        raise UsageError("--ray-address needs --grade-on ray")
    if grade_on == "ray":
        from hub.run import regrade_on_ray

        summary, changed = aio.run(
            regrade_on_ray(run_dir, grade_timeout_s=grade_timeout, ray_address=ray_address)
        )
    else:
        summary, changed = aio.run(regrade(run_dir, grade_timeout_s=grade_timeout))
    err.print(f"regraded {summary.n_rollouts} rollouts; {changed} verdicts changed")
    print_summary(summary, run_dir=run_dir)


@app.command("view")
def view_cmd(
    run_dir: Path = typer.Argument(..., help="A run directory."),
    out: Path = typer.Option(None, "--out", "-o", help="Where to write the page (default DIR/view.html)."),
    limit: int = typer.Option(2000, "--limit", min=1, help="Show at most this many rollouts."),
    open_page: bool = typer.Option(True, "--open/--no-open", help="Open the page in a browser."),
) -> None:
    """Write a static HTML viewer of a run (transcripts, grades, filters) and open it."""
    import webbrowser

    from hub.run import write_view

    page = write_view(run_dir, out=out, limit=limit)
    print(page)
    if open_page:
        webbrowser.open(page.resolve().as_uri())
