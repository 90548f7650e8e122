"""``verihub fidelity``: an environment's grader measured against labelled responses."""

from __future__ import annotations

from pathlib import Path

import typer

from hub.cli.app import app
from hub.cli.options import EnvArgOpt, parse_env_args

__all__ = ["fidelity_cmd"]


@app.command("fidelity")
def fidelity_cmd(
    env_id: str = typer.Argument(..., help="Installed environment id."),
    labels: Path = typer.Option(
        ..., "--labels", help="JSON lines: task_id or prompt, response, reference?, label."
    ),
    as_json: bool = typer.Option(False, "--json", help="Print the report as JSON."),
    examples: int = typer.Option(5, "--examples", min=0, help="Disagreements shown of each kind."),
    concurrency: int = typer.Option(8, "--concurrency", "-c", min=1, help="Responses graded at once."),
    grade_timeout: float = typer.Option(30.0, "--grade-timeout", min=0.1, help="Seconds per grading."),
    env_arg: list[str] = EnvArgOpt,
) -> None:
    """Accuracy, false-positive and false-negative rates (Wilson 95%) of ENV_ID's own grader."""
    from hub.env.aio import run
    from hub.registry import load_environment
    from hub.review import measure, read_labels

    records = read_labels(labels)
    env = load_environment(env_id, **parse_env_args(env_arg))
    report = run(
        measure(
            env,
            records,
            source=str(labels),
            examples=examples,
            concurrency=concurrency,
            timeout_s=grade_timeout,
        )
    )
    print(report.model_dump_json(indent=2) if as_json else report.to_text())
