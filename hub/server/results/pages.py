"""The hub's result pages: an eval card per environment version, leaderboards per environment and
across environments, and each run's band export as a download.

Routes: ``/{owner}/{env_id}/v/{version}`` (the eval card and its runs),
``.../v/{version}/band/{run}.jsonl`` and ``.calibration.json`` (the band export, in
``verihub calibrate``'s format), ``/{owner}/{env_id}/leaderboard`` (one ranking per build and
settings; ``?compare=1``: one table, no ranking) and ``/leaderboard`` (across environments). The
leaderboards filter on ``model``, ``owner``, ``since``/``until`` and ``origin`` from a plain GET form.

Who sees which run is decided by :func:`hub.server.core.queries.visible_runs` and
:func:`~hub.server.core.queries.find_run` alone: a private environment's pages answer 404. Cards
and leaderboards are kept in the page cache (:class:`hub.server.core.cache.PageCache`, keyed by
path, query and viewer) until the next bump, since drawing the plots costs hundreds of
milliseconds. Each page in full: docs/hub-server.md, "Eval cards and leaderboards on the hub".
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlencode

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from hub.env import Task
from hub.server.accounts import guarded
from hub.server.core import Environment, PageCache, Storage, Version, find_env, find_run, visible_runs
from hub.server.results.band_tasks import BandSource, band_tasks, stored_tasks_sha
from hub.server.results.data import FilterForm, ShownRun, of_origin, origin_param, parse_filter, shown_runs
from hub.server.results.label_views import run_label_summaries
from hub.server.web import HEADERS, Sort, parse_sort, render_page, sort_rows
from leaderboard import (
    FRAGMENT_CSS,
    ModelResult,
    RankedRow,
    RowOrder,
    RunFilter,
    band_export,
    cross_environment,
    eval_card,
    rankings,
    render_card,
    render_cross,
    render_environment,
    render_ranking,
)
from leaderboard.aggregate import aggregate

__all__ = ["routes"]

_CSS = Path(__file__).resolve().parent.parent / "web" / "templates" / "results.css"
_CALIBRATION, _LEARNABLE = ".calibration.json", ".jsonl"
#: Says where a ``learnable.jsonl`` download's tasks come from: ``environment`` or ``rollouts``.
_SOURCE_HEADER = "X-Verihub-Band-Tasks"


def _card_href(ref: str, version: str) -> str:
    return f"/{ref}/v/{quote(version, safe='')}"


def _run_href(runs: list[ShownRun]) -> Callable[[str], str]:
    """Links a run (by public id) to its row on its version's card."""
    where = {r.public_id: r for r in runs}

    def href(public_id: str) -> str:
        r = where[public_id]
        return f"{_card_href(r.ref, r.version)}#run-{public_id}"

    return href


def _cached(handler: Callable[[Request], Response]) -> Callable[[Request], Response]:
    """Serve a page from the page cache when nothing changed since it was drawn (see above)."""

    @functools.wraps(handler)
    def serve(request: Request) -> Response:
        who = request.state.who
        viewer = "anonymous" if who is None else f"user:{who.user_id}:{who.scope}"
        key = ("results-page", request.url.path, str(request.query_params), viewer)
        cache: PageCache = request.app.state.page_cache
        hit = cache.get(key)
        if hit is not None:
            body, media, status = hit
            return Response(body, status_code=status, media_type=media, headers=HEADERS)
        stamp = cache.stamp()
        response = handler(request)
        if response.status_code == 200 and response.media_type == "text/html":
            cache.put(key, stamp, (bytes(response.body), "text/html", 200))
        return response

    return serve


def _missing(request: Request) -> Response:
    return render_page(request, "home.html", status=404, envs=[], tags=[], q="", tag="")


def _env_version(request: Request, session: Any) -> tuple[Environment | None, Version | None]:
    p = request.path_params
    env = find_env(session, request.state.who, owner=p["owner"], env_id=p["env_id"])
    if env is None:
        return None, None
    version = next((v for v in env.versions if v.version == p.get("version")), None)
    return env, version


def _filters(request: Request, runs: list[ShownRun]) -> tuple[RunFilter, FilterForm]:
    return parse_filter(request.query_params, request.query_params.getlist("model"), runs)


#: The ranking's sort keys (``?sort=``): key -> whether it first sorts descending.
_BOARD_KEYS = {"rank": False, "model": False, "date": True, "tokens": True, "cost": True}
_BOARD_COLUMNS: dict[str, Callable[[RankedRow], Any]] = {
    "rank": lambda r: r.rank,
    "model": lambda r: r.name.casefold(),
    "date": lambda r: r.entry.created_at,
    "tokens": lambda r: r.entry.usage.get("total_tokens", 0),
    "cost": lambda r: r.entry.cost_usd,
}


#: The cross-environment table's sort keys: how many environments a model covers, its name.
_CROSS_KEYS = {"coverage": True, "model": False}
_CROSS_COLUMNS: dict[str, Callable[[tuple[str, tuple[Any, ...]]], Any]] = {
    "coverage": lambda row: sum(cell is not None for cell in row[1]),
    "model": lambda row: row[0].casefold(),
}


def _board_sort(request: Request, path: str, keys: dict[str, bool], default: str) -> Sort:
    query = request.query_params
    return parse_sort(query, query.multi_items(), keys, default, path=path)


def _order(sort: Sort) -> RowOrder | None:
    """The rows in ``sort``'s order; None keeps the ranking's own (rank, then ties as ranked)."""
    if sort.key == "rank" and not sort.descending:
        return None
    return lambda rows: sort_rows(rows, sort, _BOARD_COLUMNS)


def _toggle(request: Request, compare: bool) -> str:
    """This page's query with ``compare`` set (True) or dropped (False)."""
    items = [(k, v) for k, v in request.query_params.multi_items() if k != "compare"]
    if compare:
        items.append(("compare", "1"))
    return "?" + urlencode(items) if items else "?"


@guarded
@_cached
def card_page(request: Request) -> Response:
    with request.app.state.sessions() as session:
        env, version = _env_version(request, session)
        if env is None or version is None:
            return _missing(request)
        ref = f"{env.owner.name}/{env.env_id}"
        origin, origin_error = origin_param(request.query_params)
        rows = visible_runs(session, request.state.who, version=version)
        runs = of_origin(shown_runs(rows), origin)
        summaries = run_label_summaries(session, request.app.state.storage, rows)
        labelled = {r.public_id: summaries[r.id].text() for r in rows if r.id in summaries}
        card = eval_card(((r.entry, r.summary) for r in runs), env_id=ref, env_version=version.version)
        base = _card_href(ref, version.version)

        def exports(m: ModelResult) -> list[tuple[str, str]]:
            run_id = m.entry_ids[0]
            return [
                ("learnable.jsonl", f"{base}/band/{run_id}{_LEARNABLE}"),
                ("calibration.json", f"{base}/band/{run_id}{_CALIBRATION}"),
            ]

        fragment = render_card(card, run_href=_run_href(runs), export_href=exports, salt=f"card-{version.id}")
        return render_page(
            request,
            "results_card.html",
            env=env,
            ref=ref,
            version=version,
            runs=runs,
            card=fragment,
            n_models=len(card.models),
            origin=origin,
            origin_error=origin_error,
            labelled=labelled,
        )


def _band_tasks(storage: Storage, archive_sha256: str, report: str) -> tuple[list[Task], BandSource] | str:
    """The run's export tasks (:func:`hub.server.results.band_tasks.band_tasks`), or why there are none."""
    sha = stored_tasks_sha(report)
    try:
        archive = storage.path(archive_sha256)
    except (FileNotFoundError, ValueError):
        return "the stored run is missing"
    try:
        stored = storage.path(sha) if sha else None
    except (FileNotFoundError, ValueError):
        stored = None  # the tasks blob is gone: the rollouts' prompts still serve
    return band_tasks(archive, stored)


@guarded
def band_download(request: Request) -> Response:
    name = request.path_params["filename"]
    kind = _CALIBRATION if name.endswith(_CALIBRATION) else _LEARNABLE if name.endswith(_LEARNABLE) else ""
    with request.app.state.sessions() as session:
        env, version = _env_version(request, session)
        run = find_run(session, request.state.who, name[: -len(kind)]) if kind else None
        if env is None or version is None or run is None or run.version_id != version.id:
            return Response("no such run export\n", status_code=404, media_type="text/plain", headers=HEADERS)
        ref = f"{env.owner.name}/{env.env_id}"
        shown = shown_runs([run])
        card = eval_card(((r.entry, r.summary) for r in shown), env_id=ref, env_version=version.version)
        if not card.models:
            return Response(
                "this run has no results\n", status_code=404, media_type="text/plain", headers=HEADERS
            )
        row = card.models[0]
        stem = f"{env.env_id}-{version.version}-{run.public_id}"
        extra: dict[str, str] = {}
        if kind == _CALIBRATION:
            body, media = row.calibration.model_dump_json(indent=2) + "\n", "application/json"
        else:
            found = _band_tasks(request.app.state.storage, run.archive_sha256, run.verify_report)
            if isinstance(found, str):
                return Response(
                    f"no band export: {found}\n", status_code=404, media_type="text/plain", headers=HEADERS
                )
            tasks, source = found
            extra[_SOURCE_HEADER] = source
            body, media = band_export(row, tasks), "application/x-ndjson"
        disposition = f'attachment; filename="{stem}{".learnable.jsonl" if kind == _LEARNABLE else kind}"'
        return Response(
            body, media_type=media, headers={**HEADERS, **extra, "Content-Disposition": disposition}
        )


@guarded
@_cached
def env_leaderboard(request: Request) -> Response:
    with request.app.state.sessions() as session:
        env, _ = _env_version(request, session)
        if env is None:
            return _missing(request)
        ref = f"{env.owner.name}/{env.env_id}"
        every = shown_runs(visible_runs(session, request.state.who, env=env))
        run_filter, form = _filters(request, every)
        runs = of_origin(every, form.origin)
        sort = _board_sort(request, f"/{ref}/leaderboard", _BOARD_KEYS, "rank")
        entries = run_filter.apply(r.entry for r in runs)
        run_href = _run_href(runs)
        fragment = ""
        if entries and form.compare:
            fragment = render_ranking(
                rankings(entries, compare=True)[0], run_href=run_href, order=_order(sort)
            )
        elif entries:
            fragment = render_environment(
                aggregate(entries)[0],
                {r.public_id: r.summary for r in runs},
                run_href=run_href,
                card_href=lambda _env_id, v: _card_href(ref, v),
                order=_order(sort),
            )
        versions = sorted(env.versions, key=lambda v: v.id, reverse=True)
        return render_page(
            request,
            "results_board.html",
            title=f"Leaderboard: {ref}",
            ref=ref,
            versions=versions,
            form=form,
            n_runs=len(entries),
            board=fragment,
            compare_href=_toggle(request, not form.compare),
            action=f"/{ref}/leaderboard",
            sort=sort,
            sort_labels={
                "rank": "rank",
                "model": "model",
                "date": "run date",
                "tokens": "tokens",
                "cost": "cost",
            },
        )


@guarded
@_cached
def cross_leaderboard(request: Request) -> Response:
    with request.app.state.sessions() as session:
        every = shown_runs(visible_runs(session, request.state.who))
        run_filter, form = _filters(request, every)
        runs = of_origin(every, form.origin)
        sort = _board_sort(request, "/leaderboard", _CROSS_KEYS, "-coverage")
        cross = cross_environment((r.entry for r in runs), run_filter=run_filter)
        cross = replace(cross, rows=tuple(sort_rows(cross.rows, sort, _CROSS_COLUMNS)))
        fragment = (
            render_cross(cross, env_href=lambda ref: f"/{ref}/leaderboard", run_href=_run_href(runs))
            if cross.columns
            else ""
        )
        return render_page(
            request,
            "results_board.html",
            title="Leaderboard across environments",
            ref=None,
            versions=[],
            form=form,
            n_runs=len(run_filter.apply(r.entry for r in runs)),
            board=fragment,
            compare_href=None,
            action="/leaderboard",
            sort=sort,
            sort_labels={"coverage": "environments covered", "model": "model"},
        )


def css(_request: Request) -> Response:
    text = _CSS.read_text(encoding="utf-8") + FRAGMENT_CSS
    return Response(text, media_type="text/css", headers={"Cache-Control": "max-age=300"})


def routes() -> list[Route]:
    """The result pages' routes (the stylesheet is served under ``/static``, see :mod:`hub.server.app`)."""
    return [
        Route("/leaderboard", cross_leaderboard),
        Route("/{owner}/{env_id}/leaderboard", env_leaderboard),
        Route("/{owner}/{env_id}/v/{version}", card_page),
        Route("/{owner}/{env_id}/v/{version}/band/{filename}", band_download),
    ]
