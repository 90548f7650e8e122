"""The hub's ASGI application (Starlette): index, files, API and pages on one database."""

from __future__ import annotations

from starlette.applications import Starlette
from starlette.routing import BaseRoute, Mount, Route

from hub.server.accounts import AuthCache, FailureLimiter
from hub.server.accounts import api as accounts_api
from hub.server.bounties import api as bounty_api
from hub.server.bounties import pages as bounty_pages
from hub.server.core import (
    HubConfig,
    LocalStorage,
    PageCache,
    Redactor,
    hub_secrets,
    is_sqlite,
    make_engine,
    migrate,
    sessions,
)
from hub.server.packages import api, index, settings_pages
from hub.server.results import api as results_api
from hub.server.results import hub_evals_api, labels_api, review_pages, run_pages
from hub.server.results import pages as result_pages
from hub.server.web import account_pages, exception_handlers, pages

__all__ = ["create_app", "env_app"]


def create_app(config: HubConfig, *, auto_migrate: bool | None = None) -> Starlette:
    """The application for ``config``; the embedded SQLite database is migrated on start."""
    engine = make_engine(config.database)
    if auto_migrate if auto_migrate is not None else is_sqlite(config.database):
        migrate(engine)
    app = Starlette(routes=_routes(), exception_handlers=exception_handlers())
    app.state.config = config
    app.state.engine = engine
    app.state.sessions = sessions(engine)
    app.state.storage = LocalStorage(config.data)
    app.state.limiter = FailureLimiter(config.auth_failures_per_minute)
    app.state.page_cache = PageCache(config.data)
    app.state.auth_cache = AuthCache()
    app.state.redactor = Redactor.of(hub_secrets(config.db_url, str(config.data.resolve())))
    return app


def _routes() -> list[BaseRoute]:
    """Every route, grouped by mount. Within a group a literal path segment comes before a
    parameter in the same place (``/envs/{owner}/{env_id}/results`` before ``.../{version}``); the
    owner pages come last, and the literal first segments before them are reserved owner names
    (:data:`hub.registry.names.RESERVED_NAMES`), so no owner can shadow them."""
    return [
        Mount("/simple", routes=index.routes()),
        Mount("/simple-unreviewed", routes=index.routes()),
        Mount("/files", routes=index.file_routes()),
        Mount(
            "/api/v1",
            routes=[
                *accounts_api.routes(),
                *results_api.routes(),
                *hub_evals_api.routes(),
                *labels_api.routes(),
                *bounty_api.routes(),
                *api.routes(),
            ],
        ),
        Mount("/static", routes=[Route("/hub.css", pages.css), Route("/results.css", result_pages.css)]),
        *account_pages.routes(),
        *bounty_pages.routes(),
        *settings_pages.routes(),
        *result_pages.routes(),
        *run_pages.routes(),
        *review_pages.routes(),
        *pages.routes(),
    ]


def env_app() -> Starlette:
    """Factory for uvicorn worker processes (``verihub hub serve --workers N``)."""
    return create_app(HubConfig.from_env(), auto_migrate=False)
