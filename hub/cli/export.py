"""``verihub export`` (rollout datasets) and ``verihub eval-sharded`` (evaluation on Ray)."""

from __future__ import annotations

import json
from pathlib import Path

import typer

from hub.cli.app import app
from hub.cli.consoles import make_console
from hub.cli.options import TokenOpt
from hub.env import Sampling, UsageError
from hub.run import EvalOptions
from hub.train import export_records, export_run

__all__ = ["eval_sharded_cmd", "export_cmd"]

err = make_console(stderr=True)


@app.command("export")
def export_cmd(
    run_dir: Path = typer.Argument(None, help="A run directory (from `verihub eval`); or use --hub."),
    fmt: str = typer.Option(
        "jsonl", "--format", "-f", help="jsonl (one record a line) or hf (save_to_disk)."
    ),
    out: Path = typer.Option(..., "--out", "-o", help="Output file (jsonl) or folder (hf)."),
    sft: bool = typer.Option(False, "--sft", help="SFT records (the default; the filters apply to them)."),
    only_passed: bool = typer.Option(
        False, "--only-passed", help="Only passed rollouts (gold trajectories)."
    ),
    pairs: bool = typer.Option(
        False, "--pairs", help="DPO preference pairs (prompt, chosen, rejected) instead of SFT records."
    ),
    min_reward: float = typer.Option(None, "--min-reward", help="Only records with at least this reward."),
    label: str = typer.Option(
        None, "--label", help="Only rollouts a person labelled so on the hub (correct, incorrect, ...)."
    ),
    corrected: bool = typer.Option(False, "--corrected", help="Only corrected trajectories (from a hub)."),
    pass_rate_band: str = typer.Option(
        None, "--pass-rate-band", help="LO,HI: only tasks whose pass rate lies in [LO, HI]."
    ),
    hub_ref: str = typer.Option(
        None, "--hub", help="OWNER/ID@VERSION: the hub's labelled and corrected rollouts of that version."
    ),
    hub_url: str = typer.Option(None, "--hub-url", help="Hub URL (default: the one you logged in to)."),
    token: str = TokenOpt,
) -> None:
    """Export transcripts as chat-format SFT data, or as DPO preference pairs.

    SFT records: messages, task_id, rollout_index, reward, passed, task_pass_rate and provenance
    (run, rollout, environment version and hash; from a hub also the label or correction and its
    author). Pairs join a passed and a failed rollout of the same task. Rollouts with errors are
    never exported.
    """
    from hub.train import SftFilter, apply_filters, parse_band

    if fmt not in ("hf", "jsonl"):
        raise UsageError(f"--format must be hf or jsonl, not {fmt!r}")
    if sft and pairs:
        raise UsageError("--sft and --pairs are two kinds of export; choose one")
    filters = SftFilter(
        min_reward=min_reward,
        label=label,
        corrected=corrected,
        pass_rate_band=parse_band(pass_rate_band) if pass_rate_band else None,
    )
    kind = "preference pairs" if pairs else "SFT records"
    if hub_ref is not None:
        if run_dir is not None:
            raise UsageError("give a run directory or --hub OWNER/ID@VERSION, not both")
        if pairs:
            raise UsageError("--hub exports SFT records; drop --pairs")
        from hub.client import hub_settings, pull_training

        url, tok = hub_settings(hub_url, token)
        records = apply_filters(pull_training(url, hub_ref, token=tok), filters)
        if only_passed:
            records = [r for r in records if r.get("passed")]
        n = export_records(records, out=out, fmt="hf" if fmt == "hf" else "jsonl", source=hub_ref)
        err.print(f"wrote {n} {kind} from {hub_ref} to {out}")
        return
    if run_dir is None:
        raise UsageError("give a run directory, or --hub OWNER/ID@VERSION")
    n = export_run(
        run_dir,
        out=out,
        fmt="hf" if fmt == "hf" else "jsonl",
        only_passed=only_passed,
        pairs=pairs,
        filters=filters,
    )
    err.print(f"wrote {n} {kind} to {out}")


@app.command("eval-sharded")
def eval_sharded_cmd(
    env_id: str = typer.Argument(..., help="Environment id (see `verihub list`)."),
    model: str = typer.Option(..., "--model", "-m", help="Model name at --base-url."),
    base_url: str = typer.Option(..., "--base-url", help="OpenAI-compatible endpoint every shard can reach."),
    out: Path = typer.Option(..., "--out", "-o", help="Merged run directory."),
    shards: int = typer.Option(2, "--shards", min=1, help="Number of shards (Ray tasks)."),
    backend: str = typer.Option("ray", "--backend", help="ray, or local (shards one after another)."),
    ray_address: str = typer.Option(None, "--ray-address", help="Ray cluster address (default: local)."),
    num_tasks: int = typer.Option(None, "--num-tasks", "-n", min=1, help="Evaluate the first N tasks."),
    rollouts: int = typer.Option(1, "--rollouts", "-r", min=1, help="Rollouts per task."),
    concurrency: int = typer.Option(32, "--concurrency", "-c", min=1, help="Rollouts in flight per shard."),
    seed: int = typer.Option(0, "--seed", help="Task generation and sampling seed."),
    split: str = typer.Option("test", "--split", help="Task split."),
    max_tokens: int = typer.Option(512, "--max-tokens", min=1, help="Completion token limit per turn."),
    temperature: float = typer.Option(None, "--temperature", min=0.0, help="Sampling temperature."),
    grade_timeout: float = typer.Option(60.0, "--grade-timeout", min=0.1, help="Grading time limit (s)."),
    grade_on: str = typer.Option(
        "local", "--grade-on", help="Where each shard grades: local (its own process) or ray (Ray workers)."
    ),
    env_arg: list[str] = typer.Option(None, "--env-arg", help="NAME=VALUE passed to load_environment."),
    group_advantages: bool = typer.Option(False, "--group-advantages", help="GRPO group advantages."),
) -> None:
    """Evaluate in shards on Ray (each shard a Ray task writing its own run directory), then
    merge the shards into one run directory with a recomputed summary."""
    from hub.cli.run import print_summary
    from hub.env import aio
    from hub.run import evaluate_sharded

    args: dict[str, object] = {}
    for pair in env_arg or []:
        key, sep, value = pair.partition("=")
        if not sep or not key.isidentifier():
            raise UsageError(f"--env-arg {pair!r} must look like NAME=VALUE (VALUE may be JSON)")
        try:
            args[key] = json.loads(value)
        except json.JSONDecodeError:
            args[key] = value
    if backend not in ("ray", "local"):
        raise UsageError(f"--backend must be ray or local, not {backend!r}")
    if grade_on not in ("ray", "local"):
        raise UsageError(f"--grade-on must be local or ray, not {grade_on!r}")
    summary = aio.run(
        evaluate_sharded(
            env_id,
            model=model,
            base_url=base_url,
            out=out,
            shards=shards,
            backend="ray" if backend == "ray" else "local",
            ray_address=ray_address,
            num_tasks=num_tasks,
            rollouts=rollouts,
            seed=seed,
            split=split,
            sampling=Sampling(max_tokens=max_tokens, temperature=temperature),
            env_args=args,
            group_advantages=group_advantages,
            options=EvalOptions(
                concurrency=concurrency,
                grade_timeout_s=grade_timeout,
                grade_on="ray" if grade_on == "ray" else "local",
            ),
        )
    )
    print_summary(summary, run_dir=out)
