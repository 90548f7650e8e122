"""``verihub hub eval``: ask the hub to evaluate a reviewed version against a named endpoint; a
worker runs it in the sandbox and records the run as one the hub ran itself."""

from __future__ import annotations

import json
from pathlib import Path

import typer

from hub.cli.consoles import make_console
from hub.cli.hubserver import DataOpt, DbOpt, _admin_config, hub_app
from hub.env import UsageError

__all__ = ["hub_eval_cmd"]

console = make_console()


@hub_app.command("eval")
def hub_eval_cmd(
    ref: str = typer.Argument(..., help="OWNER/ID@VERSION (a version that passed its review)."),
    model: str = typer.Option(..., "--model", help="The model's name at the endpoint."),
    base_url: str = typer.Option(..., "--base-url", help="OpenAI-compatible base URL, no credentials."),
    api_key_env: str = typer.Option(
        "", "--api-key-env", help="The WORKER's environment variable holding the key (never stored)."
    ),
    num_tasks: int = typer.Option(None, "-n", "--num-tasks", help="Tasks to run (default: all)."),
    rollouts: int = typer.Option(1, "--rollouts", help="Rollouts per task."),
    seed: int = typer.Option(0, "--seed", help="Task selection seed."),
    as_user: str = typer.Option(
        None, "--as", help="The admin account the run is recorded under (default: the only admin)."
    ),
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
    data: Path = DataOpt,
    db: str = DbOpt,
) -> None:
    """Queue an evaluation the hub runs itself; the run is shown as "run by the hub"."""
    from sqlalchemy import select

    from hub.server import (
        EvalRequest,
        HubProblem,
        Owner,
        Principal,
        make_engine,
        open_hub,
        queue_eval,
        sessions,
    )

    config = _admin_config(data, db)
    with open_hub(config) as session:  # type: ignore[arg-type]  # migrated
        query = select(Owner).where(Owner.kind == "user")
        if as_user:
            query = query.where(Owner.name == as_user)
        else:
            query = query.where(Owner.is_admin.is_(True))
        found = list(session.scalars(query))
        if len(found) != 1:
            raise UsageError(
                f"no user {as_user!r} on this hub"
                if as_user
                else "name the admin to record the run under: --as NAME"
            )
        who = Principal(found[0].id, found[0].name, "admin", found[0].is_admin)
    if not who.is_admin:
        raise UsageError(f"{who.name} is not an admin of this hub: only admins queue hub evaluations")
    req = EvalRequest(ref, model, base_url, api_key_env, num_tasks, rollouts, seed)
    engine = make_engine(config.database)  # type: ignore[attr-defined]
    try:
        queued = queue_eval(sessions(engine), who, req)
    except HubProblem as exc:
        raise UsageError(str(exc)) from None
    finally:
        engine.dispose()
    if as_json:
        print(json.dumps(queued, indent=2))
        return
    console.print(
        f"queued hub evaluation {queued['id']}: {queued['ref']} with {queued['model']} at "
        f"{queued['base_url']}; a worker (`verihub hub worker`) runs it",
        soft_wrap=True,
    )
