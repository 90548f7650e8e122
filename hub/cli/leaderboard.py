"""``verihub leaderboard add|label|show|build``: verified runs into a board, a table, a static site."""

from __future__ import annotations

import datetime as _dt
from pathlib import Path
from typing import Annotated

import typer
from rich import box
from rich.console import Console
from rich.table import Table
from rich.text import Text

from hub.cli.app import app
from hub.cli.consoles import make_console
from hub.env import UsageError

__all__ = ["add_cmd", "build_cmd", "label_cmd", "leaderboard_app", "show_cmd"]

DEFAULT_BOARD = Path("board")

leaderboard_app = typer.Typer(
    name="leaderboard",
    help="Verify runs, collect them on a board, and publish tables and a static site.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
)
app.add_typer(leaderboard_app, name="leaderboard")


def _console(*, stderr: bool = False) -> Console:
    # Made per call, so the terminal width ($COLUMNS) is read when the command runs.
    return make_console(stderr=stderr)


_BoardOpt = Annotated[
    Path,
    typer.Option(
        "--board", "-b", envvar="VERIHUB_BOARD", help="Board folder (created on first add; default ./board)."
    ),
]


@leaderboard_app.command("add")
def add_cmd(
    run_dirs: Annotated[
        list[Path], typer.Argument(metavar="RUN_DIR", help="Run directories written by `verihub eval`.")
    ],
    board: _BoardOpt = DEFAULT_BOARD,
    copy_rollouts: Annotated[
        bool, typer.Option("--copy-rollouts", help="Copy rollouts.jsonl into the board (keeps transcripts).")
    ] = False,
    check_tasks: Annotated[
        bool,
        typer.Option(
            "--check-tasks", help="Also re-derive the task ids from the installed environment (same hash)."
        ),
    ] = False,
    price_in: Annotated[
        float | None,
        typer.Option(
            "--price-in",
            min=0.0,
            help="USD per million prompt tokens (costs runs whose rollouts record none).",
        ),
    ] = None,
    price_out: Annotated[
        float | None,
        typer.Option("--price-out", min=0.0, help="USD per million completion tokens (with --price-in)."),
    ] = None,
    label: Annotated[
        str | None, typer.Option("--label", help="A human label shown instead of the model name.")
    ] = None,
    owner: Annotated[
        str | None, typer.Option("--owner", help="Who ran the run (shown, and filterable).")
    ] = None,
) -> None:
    """Verify runs and add them to a board.

    A run is accepted only if its summary recomputed from rollouts.jsonl matches summary.json,
    every (task, rollout) is present exactly once, and its config names the environment version
    and content hash. Refused runs are listed with their reasons; the others are still added.
    A run's cost is the sum of its rollouts' recorded costs; otherwise, with --price-in and
    --price-out, its token usage at those prices; otherwise unknown.
    """
    from leaderboard import Board, RunRejected, TokenPrices

    if (price_in is None) != (price_out is None):
        raise UsageError("give both --price-in and --price-out (USD per million tokens), or neither")
    prices = None if price_in is None or price_out is None else TokenPrices(price_in, price_out)
    b = Board(board)
    refused = 0
    for run_dir in run_dirs:
        try:
            entry, added = b.add(
                run_dir,
                copy_rollouts=copy_rollouts,
                check_tasks=check_tasks,
                prices=prices,
                label=label,
                owner=owner,
            )
        except RunRejected as exc:
            refused += 1
            _console(stderr=True).print(Text(f"refused {run_dir}:"))
            for reason in exc.reasons:
                _console(stderr=True).print(Text(f"  - {reason}"))
            continue
        verb = "added" if added else "already on the board:"
        _console().print(Text(f"{verb} {entry.id} ({entry.env_id} {entry.env_version}, {entry.model})"))
    if refused:
        raise UsageError(f"{refused} of {len(run_dirs)} runs refused (reasons above); fix or re-run them")


@leaderboard_app.command("label")
def label_cmd(
    entry_id: Annotated[str, typer.Argument(metavar="ENTRY_ID", help="The entry id `add` printed.")],
    text: Annotated[str, typer.Argument(metavar="LABEL", help="The label; an empty string removes it.")],
    board: _BoardOpt = DEFAULT_BOARD,
) -> None:
    """Give a run a human label, shown instead of its model name on tables and pages."""
    from leaderboard import Board

    entry = Board(board).set_label(entry_id, text)
    _console().print(
        Text(f"{entry.id}: " + (f"labelled {entry.label!r}" if entry.label else "label removed"))
    )


def _day(text: str | None, *, end: bool) -> float | None:
    if text is None:
        return None
    try:
        day = _dt.datetime.strptime(text, "%Y-%m-%d").replace(tzinfo=_dt.timezone.utc)
    except ValueError:
        raise UsageError(f"dates are YYYY-MM-DD, got {text!r}") from None
    return (day + _dt.timedelta(days=1)).timestamp() - 1e-6 if end else day.timestamp()


@leaderboard_app.command("show")
def show_cmd(
    env: Annotated[str | None, typer.Option("--env", "-e", help="Show only this environment id.")] = None,
    board: _BoardOpt = DEFAULT_BOARD,
    model: Annotated[list[str] | None, typer.Option("--model", "-m", help="Only these models.")] = None,
    owner: Annotated[list[str] | None, typer.Option("--owner", help="Only runs of these owners.")] = None,
    since: Annotated[str | None, typer.Option("--since", help="Runs started on or after YYYY-MM-DD.")] = None,
    until: Annotated[
        str | None, typer.Option("--until", help="Runs started on or before YYYY-MM-DD.")
    ] = None,
    infra_threshold: Annotated[
        float, typer.Option("--infra-threshold", min=0.0, max=1.0, help="Flag runs with more errors.")
    ] = 0.05,
) -> None:
    """Print the board as tables: one per environment build and settings, best first.

    Runs whose 95% intervals overlap share a rank (=n); identical runs are one row (xN); runs with
    more errored rollouts than --infra-threshold are flagged. Refuses a board whose stored runs or
    index.json were edited after the runs were added.
    """
    from leaderboard import Board, RunFilter, rank, stale_reason
    from leaderboard.aggregate import aggregate

    run_filter = RunFilter(
        models=frozenset(model or ()),
        owners=frozenset(owner or ()),
        since=_day(since, end=False),
        until=_day(until, end=True),
    )
    envs = aggregate(run_filter.apply(Board(board).require_sound_entries()), env_id=env)
    if not envs:
        raise UsageError(f"no runs of {env!r} on the board {board} match; see `verihub leaderboard show`")
    for e in envs:
        for col in e.columns:
            title = f"{e.env_id} {col.label}"
            if col.stale:
                title += f"  (stale: {stale_reason(col, e)})"
            table = Table(title=Text(title), title_justify="left", box=box.SIMPLE_HEAD, pad_edge=False)
            for name in ("#", "model", "mean", "95% CI", "pass@1", "pass@k", "errors", "tasks x R"):
                if name == "model":
                    table.add_column(name, overflow="fold", ratio=1)
                else:
                    table.add_column(name, justify="right", no_wrap=True)
            for row in rank(col.rows, infra_threshold=infra_threshold).rows:
                r = row.entry
                k = max(r.pass_at_k, key=int) if r.pass_at_k else None
                name = row.name + (f" (x{len(row.entries)} identical runs)" if len(row.entries) > 1 else "")
                errors = str(r.n_errors) + (" !infra" if row.infra.flagged else "")
                table.add_row(
                    row.rank_text,
                    Text(name),
                    "-" if r.mean_reward is None else f"{r.mean_reward:.3f}",
                    "-" if r.ci95 is None else f"[{r.ci95[0]:.3f}, {r.ci95[1]:.3f}]",
                    f"{r.pass_at_k['1']:.3f}" if "1" in r.pass_at_k else "-",
                    "-" if k is None else f"{r.pass_at_k[k]:.3f} (k={k})",
                    errors,
                    f"{r.n_tasks} x {r.rollouts_per_task}",
                )
            _console().print(table)


@leaderboard_app.command("build")
def build_cmd(
    out: Annotated[Path, typer.Option("--out", "-o", help="Folder for the static site.")],
    board: _BoardOpt = DEFAULT_BOARD,
    sample: Annotated[int, typer.Option("--sample", min=0, help="Transcripts shown per run.")] = 20,
    infra_threshold: Annotated[
        float, typer.Option("--infra-threshold", min=0.0, max=1.0, help="Flag runs with more errors.")
    ] = 0.05,
    band_tasks: Annotated[
        bool,
        typer.Option(
            "--band-tasks",
            help="Also export learnable.jsonl on the eval cards (needs the run's environment installed).",
        ),
    ] = False,
) -> None:
    """Write the static site: index.html, one page per environment (its rankings), one eval card per
    environment version, one page per run."""
    from leaderboard import Board, build_site

    pages = build_site(
        Board(board), out, sample=sample, infra_threshold=infra_threshold, band_tasks=band_tasks
    )
    _console().print(Text(f"wrote {len(pages)} pages; open {out / 'index.html'}"))
