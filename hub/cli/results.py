"""``verihub results push``, ``results list`` and ``results set``: evaluation runs on a hub."""

from __future__ import annotations

import json
import urllib.parse
from pathlib import Path
from typing import Any

import typer
from rich.table import Table
from rich.text import Text

from hub.cli.app import app
from hub.cli.consoles import make_console
from hub.cli.options import HubOpt, TokenOpt
from hub.env import UsageError

__all__ = [
    "describe_push",
    "list_cmd",
    "push_after_eval",
    "push_cmd",
    "push_settings",
    "results_app",
    "set_cmd",
]

console = make_console()

results_app = typer.Typer(
    name="results",
    help="Evaluation runs on a hub: push a run directory, list an environment's runs, change a run.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
)
app.add_typer(results_app, name="results")


def _visibility(run: dict[str, Any]) -> str:
    return "private (only you and the hub's admins see it)" if run["private"] else "public"


def describe_push(answer: dict[str, Any], hub: str) -> str:
    """What ``results push`` (and ``eval --push``) prints about the hub's answer."""
    what = "recorded" if answer.get("created") else "already on the hub (not stored twice)"
    label = f", label {answer['label']!r}" if answer.get("label") else ""
    return (
        f"run {answer['id']} of {answer['ref']}@{answer['version']} (model {answer['model']}{label}): "
        f"{what}, under {answer['owner']}, {_visibility(answer)}\n{hub}/{answer['ref']}"
    )


@results_app.command("push")
def push_cmd(
    run_dir: Path = typer.Argument(
        ..., help="A finished run directory (what `verihub eval --out DIR` wrote)."
    ),
    env: str = typer.Option(
        None,
        "--env",
        help="The hub environment OWNER/ID the run is of (default: the one environment you can see "
        "with the run's environment id).",
    ),
    public: bool = typer.Option(False, "--public", help="Let everyone who can see the environment see it."),
    label: str = typer.Option(None, "--label", help="A short name shown instead of the model's."),
    price_in: float = typer.Option(
        None, "--price-in", min=0.0, help="USD per million prompt tokens: the card shows the run's cost."
    ),
    price_out: float = typer.Option(
        None, "--price-out", min=0.0, help="USD per million completion tokens (with --price-in)."
    ),
    hub: str = HubOpt,
    token: str = TokenOpt,
) -> None:
    """Upload a run (config.json, rollouts.jsonl and summary.json only) to a hub.

    The run is checked here first, as the hub checks it: every rollout present once and
    consistent, and the summary equal to the one recomputed from the rollouts. The hub then binds
    it to the environment version it was made with (same version, same content hash) and records
    it under your account, private unless --public.
    """
    from hub.client import hub_settings, push_results

    if (price_in is None) != (price_out is None):
        raise UsageError("give both --price-in and --price-out (USD per million tokens), or neither")
    prices = None if price_in is None or price_out is None else (price_in, price_out)
    url, tok = hub_settings(hub, token)
    answer = push_results(url, run_dir, token=tok, env=env, public=public, label=label, prices=prices)
    console.print(describe_push(answer, url), soft_wrap=True, markup=False)


@results_app.command("list")
def list_cmd(
    ref: str = typer.Argument(..., help="OWNER/ID: a hub environment."),
    version: str = typer.Option(None, "--version", help="Only the runs of this version."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
    hub: str = HubOpt,
    token: str = TokenOpt,
) -> None:
    """List the runs of an environment that you may see (public ones, and your own)."""
    from hub.client import hub_request, hub_settings
    from hub.registry import parse_ref

    try:
        owner, env_id, at = parse_ref(ref)
    except ValueError as exc:
        raise UsageError(str(exc)) from exc
    url, tok = hub_settings(hub, token)
    chosen = version or at
    query = {"version": chosen} if chosen else None
    runs = hub_request(url, f"/api/v1/envs/{owner}/{env_id}/results", token=tok, query=query)
    if as_json:
        print(json.dumps(runs, indent=2))
        return
    if not runs:
        console.print(f"no runs of {owner}/{env_id} that you can see", markup=False)
        return
    table = Table(title=f"runs of {owner}/{env_id}")
    for col in (
        "id",
        "version",
        "model",
        "label",
        "owner",
        "mean reward",
        "tasks",
        "visibility",
        "re-graded",
    ):
        table.add_column(col, overflow="fold")
    for r in runs:
        mean = "-" if r["mean_reward"] is None else f"{r['mean_reward']:.4f}"
        cells = (r["id"], r["version"], r["model"], r["label"], r["owner"], mean, str(r["n_tasks"]))
        state = ("private" if r["private"] else "public", r.get("regrade_state", r["verify_state"]))
        table.add_row(*(Text(str(c)) for c in (*cells, *state)))
    console.print(table)


@results_app.command("set")
def set_cmd(
    run_id: str = typer.Argument(
        ...,
        help="The run's id (printed by `results push`). An id that starts with '-' (hubs up to "
        "0.1.0 issued some) goes last, after `--`: `verihub results set --private -- -ID`.",
    ),
    public: bool = typer.Option(None, "--public/--private", help="Make the run public or private."),
    label: str = typer.Option(None, "--label", help="A new label ('' removes it)."),
    hub: str = HubOpt,
    token: str = TokenOpt,
) -> None:
    """Change a run you pushed: its visibility and/or its label."""
    from hub.client import hub_request, hub_settings

    if public is None and label is None:
        raise UsageError("say what to change: --public or --private, and/or --label TEXT")
    url, tok = hub_settings(hub, token)
    if not tok:
        raise UsageError("changing a run needs a token: `verihub login --hub URL` first, or --token")
    query: dict[str, str] = {}
    if public is not None:
        query["public"] = "1" if public else "0"
    if label is not None:
        query["label"] = label
    path = "/api/v1/results/" + urllib.parse.quote(run_id, safe="")
    run = hub_request(url, path, token=tok, method="POST", query=query)
    label_text = f", label {run['label']!r}" if run["label"] else ", no label"
    console.print(
        f"run {run['id']} of {run['ref']}@{run['version']}: {_visibility(run)}{label_text}",
        soft_wrap=True,
        markup=False,
    )


def push_settings(public: bool, push_env: str | None, *, push: bool) -> tuple[str, str] | None:
    """``eval --push``: the hub URL and token, checked before the run starts (None: no push)."""
    if not push:
        if public or push_env:
            raise UsageError("--public and --push-env go with --push")
        return None
    from hub.client import hub_settings

    url, tok = hub_settings(None, None)
    if not tok:
        raise UsageError("--push needs a hub token: run `verihub login --hub URL` first")
    return url, tok


def push_after_eval(run_dir: Path, hub: tuple[str, str], *, env: str | None, public: bool) -> None:
    """``eval --push``: push the finished run; say so and how to retry when it cannot be."""
    from hub.client import HubError, push_results

    later = f"push it later with `verihub results push {run_dir}`"
    try:
        answer = push_results(hub[0], run_dir, token=hub[1], env=env, public=public)
    except UsageError as exc:
        raise UsageError(f"the run was not pushed: {exc}") from None
    except HubError as exc:
        raise HubError(f"the run was not pushed: {exc}; {later}", exc.status) from None
    console.print(describe_push(answer, hub[0]), soft_wrap=True, markup=False)
