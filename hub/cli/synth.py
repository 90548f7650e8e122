"""``verihub synth ENV_ID --model M --n N --out DIR``: model-proposed tasks, kept only when checked
(see :mod:`hub.train.synth`)."""

from __future__ import annotations

from pathlib import Path

import typer

from hub.cli.app import app
from hub.cli.consoles import make_console
from hub.cli.curriculum import parse_band
from hub.cli.options import EnvArgOpt, parse_env_args
from hub.env import ModelError, UsageError, aio
from hub.run import EvalOptions

__all__ = ["synth_cmd"]

console = make_console()


@app.command("synth")
def synth_cmd(
    env_id: str = typer.Argument(..., help="Environment whose tasks seed the generator."),
    model: str = typer.Option(..., "--model", "-m", help="Generator model (or local:smollm2)."),
    n: int = typer.Option(10, "--n", min=1, help="Candidates to ask the generator for."),
    out: Path = typer.Option(..., "--out", "-o", help="Folder for tasks.jsonl and report.json."),
    base_url: str = typer.Option(None, "--base-url", help="OpenAI-compatible endpoint (…/v1)."),
    api_key_env: str = typer.Option("OPENAI_API_KEY", "--api-key-env", help="Variable holding the API key."),
    seed: int = typer.Option(0, "--seed", help="Seed of the shown tasks and the sampling."),
    k: int = typer.Option(3, "--k", min=1, help="Model solutions per candidate where the env has no solver."),
    agree: int = typer.Option(2, "--agree", min=1, help="... of which this many must pass the grader."),
    dup_threshold: float = typer.Option(
        0.8, "--dup-threshold", min=0.01, max=1.0, help="MinHash Jaccard at which a candidate is a duplicate."
    ),
    ngram: int = typer.Option(13, "--ngram", min=4, help="Word n-gram length of the contamination screen."),
    calibrate_with: str = typer.Option(None, "--calibrate-with", help="Keep tasks it passes in --band."),
    calibrate_base_url: str = typer.Option(
        None, "--calibrate-base-url", help="Endpoint of --calibrate-with (default --base-url)."
    ),
    rollouts: int = typer.Option(4, "--rollouts", "-r", min=1, help="Calibration rollouts per candidate."),
    band: str = typer.Option(None, "--band", help="Calibration pass-rate band LOW,HIGH (default 0.1,0.9)."),
    temperature: float = typer.Option(1.0, "--temperature", min=0.0, help="Sampling temperature."),
    max_tokens: int = typer.Option(512, "--max-tokens", min=1, help="Completion token limit."),
    form: str = typer.Option(
        "auto",
        "--form",
        help="auto: the env's own task form where known (its solver answers); free: prompt+answer.",
    ),
    unconstrained: bool = typer.Option(
        False, "--unconstrained", help="Do not send the candidate's JSON schema as response_format."
    ),
    timeout: float = typer.Option(120.0, "--timeout", min=0.1, help="Per-request timeout in seconds."),
    max_retries: int = typer.Option(5, "--max-retries", min=0, help="Retries of a failed request."),
    env_arg: list[str] = EnvArgOpt,
) -> None:
    """Ask a model for new tasks and keep those that parse, verify, are new and uncontaminated."""
    from hub.train import SynthConfig, synthesize

    if form not in ("auto", "free"):
        raise UsageError(f"--form is auto or free, not {form!r}")
    if agree > k:
        raise UsageError(f"--agree {agree} cannot exceed --k {k}")
    config = SynthConfig(
        n=n,
        seed=seed,
        k=k,
        agree=agree,
        dup_threshold=dup_threshold,
        ngram=ngram,
        calibrate_model=calibrate_with,
        rollouts=rollouts,
        band=parse_band(band) or (0.1, 0.9),
        temperature=temperature,
        max_tokens=max_tokens,
        form=form,
        constrain=not unconstrained,
    )
    options = EvalOptions(concurrency=1, api_key_env=api_key_env, timeout_s=timeout, max_retries=max_retries)
    report = aio.run(
        synthesize(
            env_id,
            model=model,
            base_url=base_url,
            out=out,
            config=config,
            env_args=parse_env_args(env_arg),
            options=options,
            calibrate_base_url=calibrate_base_url,
            on_candidate=lambda i, verdict: console.print(f"candidate {i + 1}/{n}: {verdict}"),
        )
    )
    for note in report.notes:
        console.print(note)
    removed = ", ".join(f"{name} {count}" for name, count in report.removed.items())
    console.print(f"kept {report.kept} of {report.candidates} candidates ({removed}); see {out}/report.json")
    if report.stopped is not None:
        raise ModelError(
            f"synthesis stopped after {report.candidates} candidates ({report.kept} kept, in "
            f"{out}/tasks.jsonl): {report.stopped}"
        )
