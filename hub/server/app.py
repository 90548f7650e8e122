"""The hub's ASGI application (Starlette): index, files, API and pages on one database."""

from __future__ import annotations

from typing import Any

from starlette.applications import Starlette
from starlette.routing import Route

from hub.server import api, bounty_api, bounty_pages, index, pages, result_pages, results_api
from hub.server.cache import PageCache
from hub.server.config import HubConfig
from hub.server.db import is_sqlite, make_engine, migrate, sessions
from hub.server.ratelimit import FailureLimiter
from hub.server.storage import LocalStorage

__all__ = ["create_app", "env_app"]


def create_app(config: HubConfig, *, auto_migrate: bool | None = None) -> Starlette:
    """The application for ``config``; the embedded SQLite database is migrated on start."""
    engine = make_engine(config.database)
    if auto_migrate if auto_migrate is not None else is_sqlite(config.database):
        migrate(engine)
    routes: list[Any] = [
        Route("/simple/", index.root_route),
        Route("/simple/{project}/", index.project_route),
        Route("/simple-unreviewed/", index.root_route),
        Route("/simple-unreviewed/{project}/", index.project_route),
        Route("/files/{sha256:str}/{filename:str}", index.file_route),
        Route("/api/v1/push", api.push_route, methods=["POST"]),
        Route("/api/v1/whoami", api.whoami_route),
        Route("/api/v1/search", api.search_route),
        Route("/api/v1/catalogue.json", api.catalogue_route),
        *results_api.routes(),
        Route("/api/v1/envs/{owner}/{env_id}", api.env_route),
        Route("/api/v1/envs/{owner}/{env_id}/{version}", api.version_route),
        Route("/api/v1/envs/{owner}/{env_id}/{version}/yank", api.yank_route, methods=["POST"]),
    ]
    routes += result_pages.routes()  # before pages: its /{owner} would take /leaderboard
    routes += bounty_api.routes() + bounty_pages.routes()  # before the pages' /{owner}/{env_id}
    routes += pages.routes()
    app = Starlette(routes=routes)
    app.state.config = config
    app.state.engine = engine
    app.state.sessions = sessions(engine)
    app.state.storage = LocalStorage(config.data)
    app.state.limiter = FailureLimiter(config.auth_failures_per_minute)
    app.state.page_cache = PageCache(config.data)
    return app


def env_app() -> Starlette:
    """Factory for uvicorn worker processes (``verihub hub serve --workers N``)."""
    return create_app(HubConfig.from_env(), auto_migrate=False)
