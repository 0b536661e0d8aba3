"""The status page at ``/``: one server-rendered HTML page, read-only and unauthenticated; each
target and provider on it links to its own page (``monitor.api.pages``).

What it shows is built by ``monitor.status.view.build_view`` (providers with their feed health
and open relevant incidents, the fleet's displayed states with 24 h history bars, uptimes and
latency, pools, vantages, the provider's events on the targets with the account event sources
behind them, firing alerts and any disabled notification channel, month-to-date SLA); this
module only formats. The fleet is shown grouped (``monitor.status.groups``): each provider with
its pools and its targets in no pool, counted by state with their uptime pooled, each opening
its own page (``monitor.api.fleet_pages``); the targets themselves are listed whole up to
``FRONT_PAGE_TARGETS`` and beyond that only those not up, so a thousand targets stay readable.
Inline CSS, no scripts, no external resources; it refreshes itself every ``REFRESH_S`` seconds.
Every value is escaped by Jinja2's autoescape; incident links are kept only when they are
http(s).
"""

from __future__ import annotations

import functools
import gzip
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from importlib import resources
from typing import Annotated

import jinja2
from fastapi import APIRouter, Depends, Request
from fastapi.responses import HTMLResponse, Response
from sqlalchemy.orm import Session

from monitor.alerts.links import provider_path, target_path
from monitor.api.deps import app_state, db_session
from monitor.db.base import utcnow
from monitor.history.generation import READ_MAX_AGE, ReadCache
from monitor.status.groups import fleet_path, front_fleet, pool_path, provider_groups
from monitor.status.history import Bucket, duration, uptime_text
from monitor.status.view import BUCKET_WIDTH, BUCKETS, WINDOWS, StatusView, current_view

REFRESH_S = 30
TEMPLATE = "status.html.j2"
GZIP_ABOVE = 4096  # bytes: below this gzip saves less than its header and CPU are worth

router = APIRouter()


# --------------------------------------------------------------------------- formatting


def _when(value: datetime | None) -> str:
    return value.strftime("%Y-%m-%d %H:%M UTC") if value else "—"


def _hm(value: datetime) -> str:
    return value.strftime("%H:%M")


def _pct(value: float | None) -> str:
    return "no data" if value is None else f"{value:.3f}%"


def _ms(value: float | None) -> str:
    return "—" if value is None else f"{value:.0f} ms" if value >= 10 else f"{value:.1f} ms"


def segment(bucket: Bucket) -> str:
    """A bar segment's tooltip: its times and what was seen in them."""
    return seen_in(f"{_hm(bucket.start)}–{_hm(bucket.end)} UTC: {bucket.state}", bucket)


def seen_in(head: str, bucket: Bucket) -> str:
    """``head`` and what was seen in ``bucket``: observed, down, unusable, unwatched."""
    if bucket.observed <= timedelta(0):
        return f"{head}, not watched by any vantage"
    parts = [f"observed {duration(bucket.observed)}"]
    if bucket.down:
        parts.append(f"down {duration(bucket.down)}")
    if bucket.unusable:
        parts.append(f"unusable {duration(bucket.unusable)}")
    if bucket.unobserved > timedelta(seconds=59):
        parts.append(f"unwatched {duration(bucket.unobserved)}")
    return f"{head} ({', '.join(parts)})"


def bar_label(bar: Sequence[Bucket]) -> str:
    """The history bar for screen readers: how many slots of each state, worst first."""
    slots = Counter[str]()
    for bucket in bar:
        slots[bucket.state] += bucket.slots
    parts = [f"{slots[s]} {s}" for s in ("down", "unusable", "unknown", "up") if slots[s]]
    return f"last 24 h in {duration(BUCKET_WIDTH)} slots: {', '.join(parts)}"


def window(value: timedelta) -> str:
    """An uptime window's label: hours up to two days (``24 h``), days beyond (``7 d``)."""
    hours = value / timedelta(hours=1)
    return f"{hours:g} h" if hours < 48 else f"{hours / 24:g} d"


# an account event's kind as the pages say it, and the badge it wears
EVENT_WORDS = {
    "scheduled_maintenance": "maintenance",
    "retirement": "retirement",
    "preemption": "preemption",
    "issue": "issue",
    "user_initiated": "user-initiated",
}
EVENT_BADGES = {
    "scheduled_maintenance": "maintenance",
    "retirement": "critical",
    "preemption": "critical",
    "issue": "major",
    "user_initiated": "info",
}


def event_kind(kind: str) -> str:
    return EVENT_WORDS.get(kind, kind)


def event_badge(kind: str) -> str:
    return EVENT_BADGES.get(kind, "info")


def target_href(name: str) -> str:
    """A link from the status page (``/``) to a target's page, relative so that slamon served
    under a sub-path (``https://host/ops/``) links within it."""
    return target_path(name).lstrip("/")


def provider_href(slug: str) -> str:
    return provider_path(slug).lstrip("/")


def pool_href(name: str) -> str:
    return pool_path(name).lstrip("/")


def fleet_href(
    provider: str | None = None, pool: str | None = None, states: Sequence[str] = ()
) -> str:
    """A link to ``/fleet`` narrowed (``monitor.status.groups.fleet_path``), relative."""
    return fleet_path(provider, pool, states).lstrip("/")


def _source(name: str) -> str:
    return resources.files("monitor.api").joinpath("templates", name).read_text("utf-8")


@functools.cache
def environment() -> jinja2.Environment:
    """The templates of every HTML page (``templates/``), escaping everything, with the
    formatting filters they share."""
    env = jinja2.Environment(
        loader=jinja2.FunctionLoader(_source),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters.update(
        when=_when,
        hm=_hm,
        pct=_pct,
        uptime=uptime_text,
        ms=_ms,
        duration=duration,
        segment=segment,
        bar_label=bar_label,
        target_href=target_href,
        provider_href=provider_href,
        pool_href=pool_href,
        event_kind=event_kind,
        event_badge=event_badge,
        iso=lambda moment: moment.isoformat(),
    )
    env.globals["fleet_href"] = fleet_href
    return env


def _template() -> jinja2.Template:
    return environment().get_template(TEMPLATE)


def render(view: StatusView) -> str:
    return _template().render(
        view=view,
        groups=provider_groups(view),
        front=front_fleet(view.fleet),
        refresh_s=REFRESH_S,
        buckets=BUCKETS,
        bucket_width=BUCKET_WIDTH,
        window_labels=[window(w) for w in WINDOWS],
    )


def accepts_gzip(accept_encoding: str) -> bool:
    """Whether an ``Accept-Encoding`` header takes gzip (``gzip`` or ``*`` without ``q=0``)."""
    for part in accept_encoding.lower().split(","):
        coding, _, params = part.partition(";")
        if coding.strip() not in ("gzip", "*"):
            continue
        weight = params.strip()
        if not weight.startswith("q="):
            return True
        try:
            return float(weight[2:]) > 0
        except ValueError:
            return False
    return False


def html_response(request: Request, page: str, status_code: int = 200) -> Response:
    """An HTML page, never cached, gzipped when the client takes it and it is big enough."""
    return page_response(request, Page.of(page), status_code)


def page_response(request: Request, page: Page, status_code: int = 200) -> Response:
    """A rendered page as sent: its gzipped body when the client takes gzip and it has one."""
    body = page.plain
    headers = {"Cache-Control": "no-store", "Vary": "Accept-Encoding"}
    if page.gzipped is not None and accepts_gzip(request.headers.get("accept-encoding", "")):
        body = page.gzipped
        headers["Content-Encoding"] = "gzip"
    return Response(
        body, status_code=status_code, media_type="text/html; charset=utf-8", headers=headers
    )


@dataclass(frozen=True, slots=True)
class Page:
    """The rendered page as sent: plain, and gzipped when that is worth it."""

    plain: bytes
    gzipped: bytes | None

    @classmethod
    def of(cls, html: str) -> Page:
        body = html.encode()
        small = len(body) <= GZIP_ABOVE
        return cls(body, None if small else gzip.compress(body, compresslevel=5))


# The page as last rendered, until something happened (``monitor.history.generation``) or it
# is ``READ_MAX_AGE`` old: a thousand targets take about a second to read and render.
PAGES: ReadCache[Page] = ReadCache(READ_MAX_AGE)


@router.get("/", response_class=HTMLResponse, tags=["status"], include_in_schema=False)
def status_page(request: Request, session: Annotated[Session, Depends(db_session)]) -> Response:
    """The page, gzipped when the client takes it: a thousand targets make about a megabyte
    of HTML and a twelfth of that gzipped, fetched again every ``REFRESH_S`` seconds."""
    config = app_state(request).config
    now = utcnow()
    page = PAGES.get(
        session, id(config), now, lambda: Page.of(render(current_view(session, config, now)))
    )
    return page_response(request, page.value)
