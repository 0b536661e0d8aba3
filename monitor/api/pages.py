"""The pages alerts link to, beside the status page and public like it: ``/targets/NAME`` (30
days of history bars, uptimes, the outages with their causes, newest first, and the account
events about it: upcoming and open, then closed this month) and ``/providers/SLUG`` (the
provider's feed health, its incidents, open and recent, each linking to the provider's own page,
and its account events with the targets each names and the sources that poll them). What they
show is built by ``monitor.status.pages``; this module only formats. An unknown name answers a
404 page. The paths are ``monitor.alerts.links``'s, so an alert's link and its page cannot
drift apart."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from datetime import timedelta
from typing import Annotated

from fastapi import APIRouter, Depends, Request
from fastapi.responses import HTMLResponse, Response
from sqlalchemy.orm import Session

from monitor.alerts.links import PROVIDER_PAGE, TARGET_PAGE
from monitor.api.deps import app_state, db_session
from monitor.api.status_page import environment, html_response, seen_in, window
from monitor.db.base import utcnow
from monitor.status.history import Bucket
from monitor.status.pages import DAYS, ProviderPage, TargetPage, provider_page, target_page
from monitor.status.view import WINDOWS

router = APIRouter()
DbSession = Annotated[Session, Depends(db_session)]
SERIES = {"reachable": "down", "usable": "not usable"}


def day_segment(bucket: Bucket) -> str:
    """A daily bar segment's tooltip: its dates and what was seen in them."""
    last = bucket.end - timedelta(microseconds=1)
    days = f"{bucket.start:%Y-%m-%d}" + (f" – {last:%Y-%m-%d}" if bucket.slots > 1 else "")
    return seen_in(f"{days}: {bucket.state}", bucket)


def days_label(bar: Sequence[Bucket]) -> str:
    """The 30-day bar for screen readers: how many days of each state, worst first."""
    days = Counter[str]()
    for bucket in bar:
        days[bucket.state] += bucket.slots
    parts = [f"{days[s]} {s}" for s in ("down", "unusable", "unknown", "up") if days[s]]
    return f"last {DAYS} days, a day a slot: {', '.join(parts)}"


def render_target(page: TargetPage) -> str:
    return (
        environment()
        .get_template("target.html.j2")
        .render(
            page=page,
            buckets=DAYS,
            window_labels=[window(w) for w in WINDOWS],
            series=SERIES,
            day_segment=day_segment,
            days_label=days_label,
        )
    )


def render_provider(page: ProviderPage) -> str:
    return environment().get_template("provider.html.j2").render(page=page, buckets=DAYS)


def render_missing(what: str, name: str) -> str:
    return environment().get_template("missing.html.j2").render(what=what, name=name, buckets=1)


@router.get(TARGET_PAGE, response_class=HTMLResponse, tags=["status"], include_in_schema=False)
def target(request: Request, session: DbSession, name: str) -> Response:
    """One target's page, live or retired; 404 for a name slamon does not know."""
    page = target_page(session, name, utcnow())
    if page is None:
        return html_response(request, render_missing("target", name), 404)
    return html_response(request, render_target(page))


@router.get(PROVIDER_PAGE, response_class=HTMLResponse, tags=["status"], include_in_schema=False)
def provider(request: Request, session: DbSession, slug: str) -> Response:
    """One provider's page; 404 for a slug slamon does not know."""
    config = app_state(request).config
    stale_after = timedelta(seconds=config.alerts.feed_stale_after)
    page = provider_page(session, slug, utcnow(), stale_after, config)
    if page is None:
        return html_response(request, render_missing("provider", slug), 404)
    return html_response(request, render_provider(page))
