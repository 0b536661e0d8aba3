"""The FastAPI application factory."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from fastapi import FastAPI

from monitor import __version__
from monitor.api import (
    account_events,
    alertmanager,
    alerts,
    badges,
    channels,
    discovery,
    feed,
    fleet_pages,
    health,
    heartbeats,
    incidents,
    metrics,
    notices,
    outages,
    pages,
    providers,
    reports,
    silences,
    sla,
    status_page,
    targets,
    vantages,
)
from monitor.api.deps import AppState
from monitor.api.errors import install_error_handlers
from monitor.settings import Settings


def create_app(settings: Settings | None = None) -> FastAPI:
    settings = settings or Settings()
    state = AppState.build(settings)

    @asynccontextmanager
    async def lifespan(_app: FastAPI) -> AsyncIterator[None]:
        yield
        state.engine.dispose()

    app = FastAPI(title="slamon", version=__version__, docs_url="/docs", lifespan=lifespan)
    app.state.slamon = state
    app.include_router(health.router)
    app.include_router(metrics.router)
    app.include_router(targets.router)
    for resource in (providers, incidents, outages, alerts, channels, vantages, sla, discovery):
        app.include_router(resource.router)
    app.include_router(heartbeats.router)
    app.include_router(account_events.router)
    app.include_router(alertmanager.router)
    app.include_router(reports.router)
    app.include_router(silences.router)
    app.include_router(notices.router)
    app.include_router(status_page.router)
    app.include_router(feed.router)
    app.include_router(pages.router)
    app.include_router(badges.router)
    app.include_router(fleet_pages.router)
    install_error_handlers(app)
    return app
