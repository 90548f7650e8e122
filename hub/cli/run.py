"""``verihub eval``, ``verihub show`` and ``verihub regrade``."""

from __future__ import annotations

import re
import time
from pathlib import Path
from typing import Literal

import typer
from rich.table import Table

from hub.cli.app import app
from hub.cli.consoles import make_console
from hub.cli.eval_flags import RUN_DEFINING, EvalFlags
from hub.cli.options import flags_command, parse_env_args
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
@flags_command(EvalFlags)
def eval_cmd(ctx: typer.Context, flags: EvalFlags) -> None:
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

    push_to = push_settings(flags.public, flags.push_env, push=flags.push)
    if flags.curriculum:
        _refuse_with_curriculum(ctx, flags)
    target = _run_target(ctx, flags)
    grade_on = _grade_on(flags)
    sampling = Sampling(
        temperature=flags.temperature,
        top_p=flags.top_p,
        max_tokens=flags.max_tokens,
        stop=tuple(flags.stop) if flags.stop else None,
    )
    if flags.curriculum:
        _eval_curriculum(flags, target, sampling)
        return
    with RunProgress(enabled=flags.progress) as bar:
        options = _options(flags, grade_on, bar)
        try:
            if flags.resume_dir is not None:
                summary = aio.run(resume(target, options=options, base_url=flags.base_url))
            else:
                summary = aio.run(_evaluate(flags, target, sampling, options))
        except KeyboardInterrupt:
            if RunDir(target).config_path.exists():
                hint = f"finished rollouts are saved. Continue with `verihub eval --resume {target}`"
                if push_to is not None:
                    hint += " (the run was not pushed; add --push to the resume)"
                raise RunInterrupted(f"interrupted; {hint}") from None
            raise
    print_summary(summary, run_dir=target)
    if push_to is not None:
        push_after_eval(target, push_to, env=flags.push_env, public=flags.public)


def _run_target(ctx: typer.Context, flags: EvalFlags) -> Path:
    """The run directory ``eval`` writes: the one resumed (whose saved config no run-defining flag
    may change), or a new one for the environment and model; a refusal says what to do instead."""
    resume_dir = flags.resume_dir
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
    if flags.env_id is None:
        raise UsageError("name an environment (see `verihub list`) or pass --resume DIR")
    if flags.model is None:
        raise UsageError("pass --model NAME (with --base-url URL), or --model local:smollm2")
    if flags.retry_errors:
        raise UsageError("--retry-errors needs --resume DIR (a new run has no errors to retry)")
    return flags.out or _default_out(flags.env_id, flags.model)


def _refuse_with_curriculum(ctx: typer.Context, flags: EvalFlags) -> None:
    """``eval --curriculum`` takes a new run's flags only: refuse the others in one line."""
    clash = _given(ctx, ("resume_dir", "shuffle", "push", "group_advantages", "retry_errors", "logprobs"))
    if clash or flags.sandbox:
        raise UsageError(f"--curriculum cannot be combined with {', '.join(clash) or '--sandbox'}")
    if flags.env_id is None or flags.model is None:
        raise UsageError("--curriculum needs an environment and --model NAME")


def _grade_on(flags: EvalFlags) -> Literal["local", "ray"]:
    if flags.grade_on not in ("local", "ray"):
        raise UsageError(f"--grade-on must be local or ray, not {flags.grade_on!r}")
    if flags.ray_address is not None and flags.grade_on != "ray":
        raise UsageError("--ray-address needs --grade-on ray")
    return "ray" if flags.grade_on == "ray" else "local"


def _options(flags: EvalFlags, grade_on: Literal["local", "ray"], bar: RunProgress) -> EvalOptions:
    """The operational flags (those a resume may change), reporting to the progress ``bar``."""
    return EvalOptions(
        concurrency=flags.concurrency,
        api_key_env=flags.api_key_env,
        timeout_s=flags.timeout,
        max_retries=flags.max_retries,
        requests_per_minute=flags.rpm,
        tokens_per_minute=flags.tpm,
        grade_timeout_s=flags.grade_timeout,
        grade_on=grade_on,
        ray_address=flags.ray_address,
        sandbox=sandbox_default() if flags.sandbox is None else flags.sandbox,
        unsafe_no_sandbox=flags.unsafe_no_sandbox,
        stream=flags.stream,
        retry_errors=flags.retry_errors,
        on_rollout=bar.update,
        on_start=bar.start,
    )


async def _evaluate(flags: EvalFlags, target: Path, sampling: Sampling, options: EvalOptions) -> Summary:
    """A new run (:func:`_run_target` has checked that it names an environment and a model)."""
    assert flags.env_id is not None and flags.model is not None
    return await evaluate(
        flags.env_id,
        model=flags.model,
        base_url=flags.base_url,
        out=target,
        num_tasks=flags.num_tasks,
        rollouts=flags.rollouts,
        max_turns=flags.max_turns,
        seed=flags.seed,
        split=flags.split,
        sampling=sampling,
        env_args=parse_env_args(flags.env_arg),
        group_advantages=flags.group_advantages,
        shuffle=flags.shuffle,
        logprobs=flags.logprobs,
        options=options,
    )


def _eval_curriculum(flags: EvalFlags, target: Path, sampling: Sampling) -> None:
    """``eval --curriculum``: a new run whose tasks' difficulty a curriculum chooses batch by batch."""
    from hub.cli.curriculum import eval_curriculum

    assert flags.env_id is not None and flags.model is not None
    options = EvalOptions(
        concurrency=flags.concurrency,
        api_key_env=flags.api_key_env,
        timeout_s=flags.timeout,
        max_retries=flags.max_retries,
        grade_timeout_s=flags.grade_timeout,
    )
    eval_curriculum(
        flags.env_id,
        model=flags.model,
        base_url=flags.base_url,
        out=target,
        num_tasks=flags.num_tasks,
        batch_size=flags.batch_size,
        band=flags.band,
        rollouts=flags.rollouts,
        seed=flags.seed,
        split=flags.split,
        sampling=sampling,
        env_args=parse_env_args(flags.env_arg),
        options=options,
    )


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
