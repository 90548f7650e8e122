"""Run pages: a pushed run with its settings, summary and rollouts, one rollout's transcript, its raw
JSON, and one task's rollouts across every visible run of an environment.

- ``/runs/{id}``: the run's recorded settings, summary and re-grade status, and its rollouts a
  page at a time, filtered and sorted by GET parameters (:mod:`hub.server.results.rollout_query`);
- ``/runs/{id}/rollouts/{idx}``: one rollout in full (:mod:`hub.server.results.transcript`);
- ``/runs/{id}/rollouts/{idx}.json``: its JSON line as pushed (``application/json``, ``nosniff``);
- ``/{owner}/{env_id}/tasks/{task_id}``: that task's rollouts in every run one may see, side by
  side (``?version=`` keeps one version).

Who sees a run is decided by :func:`hub.server.core.queries.find_run` and
:func:`~hub.server.core.queries.visible_runs` only: a private run, or a run of an environment one
may not see, is 404 on every route here. The pages carry no script and render untrusted text
through autoescaping and the ``visible`` filter.
"""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import quote

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from hub.server.accounts import Form, guarded
from hub.server.core import Run, find_env, find_run, visible_runs
from hub.server.results.data import ShownRun, shown_runs
from hub.server.results.label_views import LABEL_CHOICES, label_filter, run_label_summaries
from hub.server.results.labels import current_labels
from hub.server.results.review_view import review_context
from hub.server.results.rollout_query import (
    MAX_PER_PAGE,
    SORTS,
    find_rollout,
    list_rollouts,
    parse_query,
    task_rollouts,
)
from hub.server.results.rollout_store import STATUSES, transcript_json
from hub.server.results.transcript import MAX_MESSAGE_CHARS, transcript_view
from hub.server.web import HEADERS, cut, render_page
from leaderboard import sampling_items

__all__ = ["MAX_TASK_RUNS", "routes", "run_href", "settings_rows", "show_rollout"]

#: The task page compares at most this many runs (the newest).
MAX_TASK_RUNS = 40
_SORT_LABELS = {
    "idx": "as recorded",
    "-idx": "as recorded, last first",
    "reward": "reward, lowest first",
    "-reward": "reward, highest first",
    "task": "task",
    "-task": "task, descending",
}


def run_href(public_id: str) -> str:
    """The run page of run ``public_id``."""
    return f"/runs/{quote(public_id, safe='')}"


def _missing(request: Request, what: str = "no such run") -> Response:
    return render_page(request, "run_missing.html", status=404, what=what)


def _json_text(value: Any) -> str:
    text, left_out = cut(json.dumps(value, indent=2, sort_keys=True, ensure_ascii=False, default=str), 20_000)
    return text + (f"\n… {left_out:,} more characters" if left_out else "")


def settings_rows(run: Run, shown: ShownRun | None) -> list[tuple[str, str]]:
    """The run's settings as recorded (its ``config.json``; before that was stored, its board entry)."""
    try:
        config = json.loads(run.config) if run.config else None
    except ValueError:
        config = None
    if not isinstance(config, dict):
        if shown is None:
            return []
        e = shown.entry
        config = {
            "env_args": e.env_args or {},
            "location_args": e.location_args,
            "sampling": e.sampling,
            "seed": e.seed,
            "split": e.split,
            "num_tasks": e.n_tasks,
            "rollouts_per_task": e.rollouts_per_task,
            "verihub_version": e.verihub_version,
        }
    rows: list[tuple[str, str]] = []
    seed = config.get("seed")
    for key in ("split", "num_tasks", "shuffle", "rollouts_per_task", "max_turns"):
        if key in config:
            rows.append((key, "all" if key == "num_tasks" and config[key] is None else str(config[key])))
    if "seed" in config:
        rows.append(("seed", f"{seed} (task selection, and each request's sampling seed is derived from it)"))
    sampling = config.get("sampling")
    if isinstance(sampling, dict):
        run_seed = seed if isinstance(seed, int) and not isinstance(seed, bool) else None
        rows += [(f"sampling: {k}", v) for k, v in sampling_items(sampling, run_seed=run_seed)]
    rows.append(("environment arguments", _json_text(config.get("env_args") or {})))
    for key in ("location_args", "data"):
        if config.get(key):
            rows.append((key.replace("_", " "), _json_text(config[key])))
    for key in ("logprobs", "group_advantages", "tasks_sha256", "env_hash", "verihub_version"):
        if config.get(key) not in (None, "", False):
            rows.append((key, str(config[key])))
    return rows


def _idx(request: Request) -> int:
    return int(request.path_params["idx"])


@guarded
def run_page(request: Request) -> Response:
    with request.app.state.sessions() as session:
        run = find_run(session, request.state.who, request.path_params["public_id"])
        if run is None:
            return _missing(request)
        shown = next(iter(shown_runs([run])), None)
        query = parse_query(request.query_params, labels=LABEL_CHOICES)
        page = None
        labels: dict[tuple[int, int], Any] = {}
        if run.rollouts_stored:
            page = list_rollouts(session, run.id, query, extra=label_filter(run.id, query.label))
            labels = current_labels(session, [run], [r.idx for r in page.rows])
        summary = run_label_summaries(session, request.app.state.storage, [run]).get(run.id)
        env = run.version.environment
        return render_page(
            request,
            "run.html",
            run=run,
            shown=shown,
            ref=f"{env.owner.name}/{env.env_id}",
            href=run_href(run.public_id),
            settings=settings_rows(run, shown),
            page=page,
            query=page.query if page is not None else query,
            statuses=STATUSES,
            sorts=[(key, _SORT_LABELS.get(key, key)) for key in SORTS],
            per_page_choices=sorted({10, 25, 50, MAX_PER_PAGE, query.per_page}),
            labels={idx: row for (_, idx), row in labels.items()},
            label_choices=LABEL_CHOICES,
            label_summary=summary,
        )


def show_rollout(request: Request, status: int = 200, posted: Form | None = None, **context: Any) -> Response:
    """The rollout page of the request's path (``request.state.who`` set), with ``status`` and
    ``context`` (a refused form's ``message``; ``posted``: its fields, shown again)."""
    with request.app.state.sessions() as session:
        who = request.state.who
        run = find_run(session, who, request.path_params["public_id"])
        row = find_rollout(session, run.id, _idx(request)) if run is not None else None
        if run is None or row is None:
            return _missing(request, "no such rollout")
        env = run.version.environment
        href = run_href(run.public_id)
        return render_page(
            request,
            "rollout.html",
            status,
            run=run,
            row=row,
            ref=f"{env.owner.name}/{env.env_id}",
            href=href,
            raw_href=f"{href}/rollouts/{row.idx}.json",
            task_href=f"/{env.owner.name}/{env.env_id}/tasks/{quote(row.task_id, safe='')}",
            view=transcript_view(transcript_json(row)),
            has_next=find_rollout(session, run.id, row.idx + 1, with_transcript=False) is not None,
            max_chars=MAX_MESSAGE_CHARS,
            **review_context(session, who, run, row, posted),
            **context,
        )


@guarded
def rollout_page(request: Request) -> Response:
    return show_rollout(request)


@guarded
def rollout_raw(request: Request) -> Response:
    with request.app.state.sessions() as session:
        run = find_run(session, request.state.who, request.path_params["public_id"])
        row = find_rollout(session, run.id, _idx(request)) if run is not None else None
        if run is None or row is None:
            return Response("no such rollout\n", status_code=404, media_type="text/plain", headers=HEADERS)
        body = transcript_json(row) + b"\n"
    name = f"{run.public_id}-rollout-{row.idx}.json"
    return Response(
        body,
        media_type="application/json",
        headers={**HEADERS, "Content-Disposition": f'inline; filename="{name}"'},
    )


@guarded
def task_page(request: Request) -> Response:
    p = request.path_params
    with request.app.state.sessions() as session:
        env = find_env(session, request.state.who, owner=p["owner"], env_id=p["env_id"])
        if env is None:
            return _missing(request, "no such environment")
        task_id = p["task_id"]
        ref = f"{env.owner.name}/{env.env_id}"
        versions = sorted({v.version for v in env.versions})
        chosen = request.query_params.get("version", "")
        runs = [r for r in visible_runs(session, request.state.who, env=env) if r.rollouts_stored]
        if chosen:
            runs = [r for r in runs if r.version.version == chosen]
        runs = runs[-MAX_TASK_RUNS:][::-1]  # the newest first
        found = task_rollouts(session, [r.id for r in runs], task_id)
        columns = []
        for r in runs:
            shown = shown_runs([r])  # empty when the stored entry does not parse
            if shown and found[r.id]:
                columns.append((shown[0], found[r.id]))
        depth = max((len(rows) for _, rows in columns), default=0)
        return render_page(
            request,
            "task.html",
            ref=ref,
            task_id=task_id,
            columns=columns,
            depth=depth,
            versions=versions,
            chosen=chosen,
            run_href=run_href,
            capped=len(runs) == MAX_TASK_RUNS,
        )


def routes() -> list[Route]:
    """The run pages' routes (before the owner pages: ``runs`` is a reserved owner name)."""
    return [
        Route("/runs/{public_id}", run_page),
        Route("/runs/{public_id}/rollouts/{idx:int}", rollout_page),
        Route("/runs/{public_id}/rollouts/{idx:int}.json", rollout_raw),
        Route("/{owner}/{env_id}/tasks/{task_id:path}", task_page),
    ]
