"""The flags of ``verihub eval``, declared once as the fields of :class:`EvalFlags`.

The command itself (:func:`hub.cli.run.eval_cmd`) receives them as one :class:`EvalFlags`
through :func:`hub.cli.options.flags_command`, so its body reads as what it does.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import typer

from hub.cli.options import EnvArgOpt

__all__ = ["RUN_DEFINING", "EvalFlags"]


@dataclass(frozen=True)
class EvalFlags:
    """``verihub eval``'s arguments, in the order ``--help`` lists them."""

    # what to run
    env_id: str | None = typer.Argument(None, help="Environment id (see `verihub list`). Omit with --resume.")
    model: str | None = typer.Option(
        None, "--model", "-m", help="Model name at --base-url, or local:smollm2."
    )
    base_url: str | None = typer.Option(
        None, "--base-url", help="OpenAI-compatible endpoint, e.g. http://127.0.0.1:8000/v1."
    )
    api_key_env: str = typer.Option("OPENAI_API_KEY", "--api-key-env", help="Variable holding the API key.")
    num_tasks: int | None = typer.Option(None, "--num-tasks", "-n", min=1, help="Evaluate the first N tasks.")
    shuffle: bool = typer.Option(
        False,
        "--shuffle",
        help="With --num-tasks: a random sample of N tasks (seeded by --seed), not the first N.",
    )
    rollouts: int = typer.Option(1, "--rollouts", "-r", min=1, help="Rollouts per task.")
    concurrency: int = typer.Option(32, "--concurrency", "-c", min=1, help="Rollouts in flight.")
    max_turns: int | None = typer.Option(None, "--max-turns", min=1, help="Model turns per rollout.")
    seed: int = typer.Option(0, "--seed", help="Task generation and sampling seed.")
    split: str = typer.Option("test", "--split", help="Task split.")
    out: Path | None = typer.Option(None, "--out", "-o", help="Run directory (default runs/ENV-MODEL-TIME).")
    resume_dir: Path | None = typer.Option(
        None, "--resume", help="Finish an interrupted run in this directory."
    )
    # sampling
    temperature: float | None = typer.Option(None, "--temperature", min=0.0, help="Sampling temperature.")
    top_p: float | None = typer.Option(None, "--top-p", min=0.0, max=1.0, help="Nucleus sampling.")
    max_tokens: int = typer.Option(512, "--max-tokens", min=1, help="Completion token limit per turn.")
    stop: list[str] | None = typer.Option(None, "--stop", help="Stop sequence (repeatable).")
    # requests and grading (operational: may change on --resume)
    rpm: float | None = typer.Option(None, "--rpm", min=0.001, help="Request-per-minute limit.")
    tpm: float | None = typer.Option(None, "--tpm", min=1.0, help="Token-per-minute limit.")
    timeout: float = typer.Option(120.0, "--timeout", min=0.1, help="Per-request timeout in seconds.")
    max_retries: int = typer.Option(5, "--max-retries", min=0, help="Retries per request.")
    grade_timeout: float = typer.Option(60.0, "--grade-timeout", min=0.1, help="Grading time limit (s).")
    grade_on: str = typer.Option(
        "local",
        "--grade-on",
        help="Where grading runs: local (this process) or ray (Ray workers; needs `pip install ray`). "
        "May differ between a run and its --resume.",
    )
    ray_address: str | None = typer.Option(
        None, "--ray-address", help="With --grade-on ray: the Ray cluster (default: start a local one)."
    )
    env_arg: list[str] | None = EnvArgOpt
    stream: bool = typer.Option(
        False, "--stream", help="Ask the server for streamed answers (SSE); for servers that require it."
    )
    progress: bool = typer.Option(True, "--progress/--no-progress", help="Show a progress bar.")
    logprobs: bool = typer.Option(
        False,
        "--logprobs",
        help="Record each answer's tokens and log-probabilities (and token ids when the server sends "
        "them) in rollouts.jsonl (extra.tokens); `verihub export` carries them.",
    )
    retry_errors: bool = typer.Option(
        False,
        "--retry-errors",
        help="With --resume: run again the rollouts that ended in a model or environment error "
        "(the failed attempts are kept in failed_attempts.jsonl and in each new record).",
    )
    group_advantages: bool = typer.Option(
        False, "--group-advantages", help="GRPO groups: write each rollout's (r - mean) / std over its task."
    )
    # the sandbox
    sandbox: bool | None = typer.Option(
        None,
        "--sandbox/--no-sandbox",
        help="Run the environment's code in the bubblewrap sandbox, as `verihub check` does "
        "(default: [eval] sandbox in the config file, else off).",
    )
    unsafe_no_sandbox: bool = typer.Option(
        False, "--unsafe-no-sandbox", help="With --sandbox where bubblewrap is missing: run it unsandboxed."
    )
    # pushing the finished run
    push: bool = typer.Option(
        False,
        "--push",
        help="Once the run has finished complete, push it to the hub you logged in to, as "
        "`verihub results push DIR` does (private unless --public). An interrupted or incomplete "
        "run is not pushed.",
    )
    public: bool = typer.Option(False, "--public", help="With --push: make the pushed run public.")
    push_env: str | None = typer.Option(
        None, "--push-env", help="With --push: the hub environment OWNER/ID the run is of (as --env there)."
    )
    # a curriculum run
    curriculum: bool = typer.Option(
        False,
        "--curriculum",
        help="Let a curriculum choose the tasks' difficulty batch by batch from the outcomes; the "
        "level trajectory goes to DIR/curriculum.jsonl (needs an environment with a difficulty space).",
    )
    batch_size: int = typer.Option(8, "--batch-size", min=1, help="With --curriculum: tasks per batch.")
    band: str | None = typer.Option(
        None,
        "--band",
        help="With --curriculum: pass-rate band LOW,HIGH (default: calibrate's learnable band).",
    )


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
"""The :class:`EvalFlags` that define a run (its saved config): a resume may not change them. The
others (endpoint, key, concurrency, rate limits, timeouts, retries, grading) are operational."""
