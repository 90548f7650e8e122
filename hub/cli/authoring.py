"""Authoring commands: ``init``, ``check``, ``calibrate``, ``submit`` and ``verify-submission``."""

from __future__ import annotations

import asyncio
from pathlib import Path

import typer
from rich.table import Table

from hub.cli.app import app
from hub.cli.consoles import make_console
from hub.cli.options import EnvArgOpt, parse_env_args
from hub.env import UsageError
from hub.review import Calibration

__all__ = ["calibrate_cmd", "check_cmd", "init_cmd", "submit_cmd", "verify_cmd"]

console = make_console()
err_console = make_console(stderr=True)


@app.command("init")
def init_cmd(
    name: str = typer.Argument(..., help="Environment id: lowercase letters, digits and _."),
    kind: str = typer.Option("single-turn", "--kind", help="single-turn, multi-turn or tools."),
    path: Path = typer.Option(None, "--path", help="Where to create it (default environments/NAME)."),
    license: str = typer.Option("Apache-2.0", "--license", help="SPDX licence of the code and data."),
    author: str = typer.Option("", "--author", help="Author name for pyproject.toml."),
    force: bool = typer.Option(False, "--force", help="Write into a non-empty folder."),
) -> None:
    """Create a new environment package that passes `verihub check` as generated."""
    from hub.review import KINDS
    from hub.review.scaffold import scaffold

    if kind not in KINDS:
        raise UsageError(f"--kind must be one of {', '.join(KINDS)}")
    root = scaffold(name, kind=kind, dest=path, license=license, author=author, force=force)
    console.print(f"created {root}; next: `verihub check {root}`, then edit the tasks and README")


@app.command("check")
def check_cmd(
    target: str = typer.Argument(..., help="An environment package folder, or an installed environment id."),
    as_json: bool = typer.Option(False, "--json", help="Print the report as JSON."),
    out: Path = typer.Option(None, "--out", help="Also write the JSON report to this file."),
    env_arg: list[str] = EnvArgOpt,
    num_tasks: int = typer.Option(50, "--num-tasks", min=1, help="Tasks read per split for the id checks."),
    gold_tasks: int = typer.Option(100, "--gold-tasks", min=1, help="Tasks whose gold answer is graded."),
    probe_tasks: int = typer.Option(10, "--probe-tasks", min=1, help="Tasks that get the hacking probes."),
    grade_timeout: float = typer.Option(10.0, "--grade-timeout", min=0.1, help="Seconds per grading."),
    time_limit: float = typer.Option(
        300.0, "--time-limit", min=1.0, help="Wall-clock limit per process (s)."
    ),
    memory_mb: int = typer.Option(
        4096, "--memory-mb", min=256, help="Memory of all the sandbox's processes together (MiB)."
    ),
    allow_read: list[str] = typer.Option(None, "--allow-read", help="Extra folder the environment may read."),
    unsafe_no_sandbox: bool = typer.Option(
        False,
        "--unsafe-no-sandbox",
        help="Run the package without the bubblewrap sandbox (trusted code only).",
    ),
) -> None:
    """Run the automatic reviewer on an environment (sandboxed, no network). Exit 1 on failure."""
    from hub.review import CheckOptions, Limits
    from hub.review.check import check

    opts = CheckOptions(
        env_args=parse_env_args(env_arg),
        num_tasks=num_tasks,
        gold_tasks=gold_tasks,
        probe_tasks=probe_tasks,
        grade_timeout_s=grade_timeout,
        limits=Limits(wall_s=time_limit, cpu_s=int(time_limit) + 1, memory_mb=memory_mb),
        allow_read=tuple(allow_read or ()),
        unsafe_no_sandbox=unsafe_no_sandbox,
    )
    report = check(target, options=opts)
    if out is not None:
        out.write_text(report.model_dump_json(indent=2), encoding="utf-8")
    print(report.model_dump_json(indent=2) if as_json else report.to_text())
    if not report.passed:
        raise typer.Exit(1)


@app.command("calibrate")
def calibrate_cmd(
    env_id: str = typer.Argument(..., help="Installed environment id."),
    model: str = typer.Option(..., "--model", "-m", help="Model name at --base-url, or local:smollm2."),
    base_url: str = typer.Option(None, "--base-url", help="OpenAI-compatible endpoint."),
    rollouts: int = typer.Option(16, "--rollouts", "-r", min=1, help="Rollouts per task."),
    num_tasks: int = typer.Option(None, "--num-tasks", "-n", min=1, help="Calibrate the first N tasks."),
    band_low: float = typer.Option(
        1 / 64, "--band-low", min=0.0, max=1.0, help="Learnable band: p >= LOW (default 1/64), some pass."
    ),
    band_high: float = typer.Option(0.7, "--band-high", min=0.0, max=1.0, help="Learnable band: p <= HIGH."),
    saturated_at: float = typer.Option(0.9, "--saturated-at", min=0.0, max=1.0, help="Saturated: p >= this."),
    max_tokens: int = typer.Option(512, "--max-tokens", min=1, help="Completion token limit per turn."),
    temperature: float = typer.Option(None, "--temperature", min=0.0, help="Sampling temperature."),
    concurrency: int = typer.Option(32, "--concurrency", "-c", min=1, help="Rollouts in flight."),
    split: str = typer.Option(
        "train", "--split", help="Task split (train: calibration picks tasks to train on; test warns)."
    ),
    env_arg: list[str] = EnvArgOpt,
    out: Path = typer.Option(..., "--out", "-o", help="Output folder (run/, calibration.json, learnable.*)."),
    tasks: int = typer.Option(50, "--tasks", min=0, help="Rows of the per-task table to print (0: none)."),
) -> None:
    """Per-task pass rates with Wilson intervals; export the learnable band for RL."""
    from hub.env import Sampling
    from hub.review import TEST_SPLIT_WARNING, histogram_text
    from hub.review.calibrate import calibrate
    from hub.run import EvalOptions

    if band_low >= band_high:
        raise UsageError("--band-low must be below --band-high")
    if split == "test":
        err_console.print(TEST_SPLIT_WARNING)
    cal = asyncio.run(
        calibrate(
            env_id,
            model=model,
            out=out,
            rollouts=rollouts,
            num_tasks=num_tasks,
            band=(band_low, band_high),
            saturated_at=saturated_at,
            base_url=base_url,
            split=split,
            env_args=parse_env_args(env_arg),
            sampling=Sampling(max_tokens=max_tokens, temperature=temperature),
            options=EvalOptions(concurrency=concurrency),
        )
    )
    console.print(f"{cal.env_id} @ {cal.model}: {len(cal.tasks)} tasks x {cal.rollouts_per_task} rollouts")
    if tasks:
        console.print(per_task_table(cal, limit=tasks))
    console.print(histogram_text(cal))
    console.print(
        f"0% tasks: {len(cal.zero)} (possibly infeasible, gold does not pass: {len(cal.possibly_infeasible)})"
    )
    console.print(f"saturated (p >= {cal.saturated_at:g}): {len(cal.saturated)}")
    console.print(
        f"learnable ({band_low:.3g} <= p <= {band_high:g}, p > 0): {len(cal.learnable)} -> "
        f"{out}/learnable.jsonl, "
        f"{out}/learnable_dataset"
    )


def per_task_table(cal: Calibration, *, limit: int) -> Table:
    """The first ``limit`` tasks: graded rollouts, passes, pass rate, Wilson 95% interval, class."""
    learnable, saturated, zero = set(cal.learnable), set(cal.saturated), set(cal.zero)
    table = Table(title=f"per task (first {min(limit, len(cal.tasks))} of {len(cal.tasks)})")
    for col in ("task", "n", "passed", "pass rate", "95% CI", "errors", "class"):
        table.add_column(col)
    for t in cal.tasks[:limit]:
        rate = "-" if t.pass_rate is None else f"{t.pass_rate:.2f}"
        kind = (
            "learnable" if t.task_id in learnable
            else "saturated" if t.task_id in saturated
            else ("0%, gold fails" if t.task_id in cal.possibly_infeasible else "0%") if t.task_id in zero
            else ""
        )  # fmt: skip
        ci = f"[{t.ci95[0]:.2f}, {t.ci95[1]:.2f}]"
        table.add_row(t.task_id, str(t.n), str(t.n_passed), rate, ci, str(t.n_errors), kind)
    return table


@app.command("submit")
def submit_cmd(
    path: Path = typer.Argument(..., help="The environment package folder."),
    out: Path = typer.Option(None, "--out", "-o", help="Bundle folder (default submissions/NAME)."),
    model: str = typer.Option("local:smollm2", "--model", help="Model of the smoke evaluation."),
    num_tasks: int = typer.Option(5, "--num-tasks", min=5, help="Tasks of the smoke evaluation (>= 5)."),
    rollouts: int = typer.Option(3, "--rollouts", min=3, help="Rollouts per task (>= 3)."),
    max_tokens: int = typer.Option(64, "--max-tokens", min=1, help="Token limit of the smoke evaluation."),
    unsafe_no_sandbox: bool = typer.Option(
        False, "--unsafe-no-sandbox", help="Build, check and evaluate without the bubblewrap sandbox."
    ),
) -> None:
    """Build sdist and wheel, run the check and a smoke evaluation, write a submission bundle."""
    from hub.review import CheckOptions
    from hub.review.submit import submit

    bundle, manifest = submit(
        path,
        out=out,
        model=model,
        num_tasks=num_tasks,
        rollouts=rollouts,
        max_tokens=max_tokens,
        check_options=CheckOptions(unsafe_no_sandbox=unsafe_no_sandbox),
    )
    console.print((bundle / "check" / "report.txt").read_text(encoding="utf-8"))
    from hub.review import file_sha256

    print(f"bundle: {bundle} (manifest {file_sha256(bundle / 'manifest.json')})")
    if not manifest.check_passed:
        console.print("the check FAILED: fix the failures above before submitting")
        raise typer.Exit(1)


@app.command("verify-submission")
def verify_cmd(
    bundle: Path = typer.Argument(..., help="A bundle folder written by `verihub submit`."),
    skip_check: bool = typer.Option(
        False,
        "--skip-check",
        help="Skip everything that runs the bundled code: the check and the sandboxed regrade of "
        "the recorded rollouts (hashes, summary and package identity are still verified).",
    ),
    unsafe_no_sandbox: bool = typer.Option(
        False, "--unsafe-no-sandbox", help="Run the bundled code without the bubblewrap sandbox."
    ),
) -> None:
    """Re-verify a submission bundle: hashes, summary vs rollouts, package identity, check."""
    from hub.review import CheckOptions, verify_submission

    result = verify_submission(
        bundle, rerun_check=not skip_check, check_options=CheckOptions(unsafe_no_sandbox=unsafe_no_sandbox)
    )
    if unsafe_no_sandbox and not skip_check:
        console.print("UNSAFE: the bundled code ran WITHOUT the sandbox (--unsafe-no-sandbox)")
    console.print(f"manifest {result.manifest_sha256}")
    if result.ok:
        console.print(f"OK: {bundle} verifies")
        return
    for p in result.problems:
        console.print(f"  - {p}")
    raise UsageError(f"{bundle} fails verification ({len(result.problems)} problems, listed above)")
