"""Where the status page's groups drill down to, public like it: ``/pools/NAME`` (a pool's
state against its ``min_up``, its members counted by state, its pooled uptime and month-to-date
availability, every member as the status page's fleet rows draw it, trouble first) and
``/fleet`` (every target, or those of ``provider``, ``pool`` and ``state``: an empty
``provider`` or ``pool`` selects the targets without one).

Both are shaped by ``monitor.status.groups`` from the status page's own view as last built
(``monitor.status.view.current_view``), so a pool's page, its row on the status page and its
badges agree. A pool nobody names answers the 404 page.
"""

from __future__ import annotations

from typing import Annotated, Literal

from fastapi import APIRouter, Depends, Query, Request
from fastapi.responses import HTMLResponse, Response
from sqlalchemy.orm import Session

from monitor.api.deps import app_state, db_session
from monitor.api.pages import render_missing
from monitor.api.status_page import environment, html_response, window
from monitor.db.base import utcnow
from monitor.status.groups import (
    FLEET_PAGE,
    POOL_PAGE,
    FleetFilter,
    FleetPage,
    PoolPage,
    fleet_page,
    pool_page,
)
from monitor.status.view import BUCKET_WIDTH, BUCKETS, WINDOWS, current_view

router = APIRouter()
DbSession = Annotated[Session, Depends(db_session)]
State = Literal["up", "unusable", "down", "unknown"]


def _render(template: str, page: PoolPage | FleetPage) -> str:
    return (
        environment()
        .get_template(template)
        .render(
            page=page,
            buckets=BUCKETS,
            bucket_width=BUCKET_WIDTH,
            window_labels=[window(w) for w in WINDOWS],
        )
    )


def render_pool(page: PoolPage) -> str:
    return _render("pool.html.j2", page)


def render_fleet(page: FleetPage) -> str:
    return _render("fleet.html.j2", page)


@router.get(POOL_PAGE, response_class=HTMLResponse, tags=["status"], include_in_schema=False)
def pool(request: Request, session: DbSession, name: str) -> Response:
    """One pool's page; 404 for a pool no live target and no config names."""
    view = current_view(session, app_state(request).config, utcnow())
    page = pool_page(view, name)
    if page is None:
        return html_response(request, render_missing("pool", name), 404)
    return html_response(request, render_pool(page))


@router.get(FLEET_PAGE, response_class=HTMLResponse, tags=["status"], include_in_schema=False)
def fleet(
    request: Request,
    session: DbSession,
    provider: str | None = None,
    pool: str | None = None,
    state: Annotated[list[State] | None, Query()] = None,
) -> Response:
    """The targets matching every filter given, trouble first."""
    view = current_view(session, app_state(request).config, utcnow())
    selected = FleetFilter(provider, pool, frozenset(state or ()))
    return html_response(request, render_fleet(fleet_page(view, selected)))
