"""SVG badges to embed in a README or a wiki, public like the status page:
``/badges/{targets|pools|providers}/{name}/{state|uptime-24h|uptime-7d|uptime-30d|sla}.svg``
(``?label=`` replaces the left-hand text).

What a badge says is ``monitor.status.badges``'s, read off the status page's own view as last
built (``monitor.status.view.current_view``: rebuilt after a write to what happened, or every
``READ_MAX_AGE``), and drawn by ``monitor.status.badge_svg``: a badge and the page agree. A badge
may be cached for ``MAX_AGE_S`` seconds and carries an ``ETag`` (a hash of its bytes), so a
client asking again with ``If-None-Match`` gets a 304 while nothing changed. An unknown kind,
name or metric answers 404 with a grey "not found" badge (an image still shows as one).
"""

from __future__ import annotations

import hashlib
from typing import Annotated

from fastapi import APIRouter, Depends, Request
from fastapi.responses import Response
from sqlalchemy.orm import Session

from monitor.api.deps import app_state, db_session
from monitor.db.base import utcnow
from monitor.status import badge_svg
from monitor.status.badge_svg import Badge
from monitor.status.badges import BADGE_PAGE, KINDS, METRICS, NOT_FOUND, badge, subject
from monitor.status.view import current_view

MAX_AGE_S = 30  # the status page's own refresh
MEDIA_TYPE = "image/svg+xml; charset=utf-8"
# an SVG opened on its own is a document: nothing in it may load or run
CSP = "default-src 'none'; style-src 'unsafe-inline'"

router = APIRouter()


def etag(body: bytes) -> str:
    return '"' + hashlib.sha256(body).hexdigest()[:24] + '"'


def matches(if_none_match: str, tag: str) -> bool:
    """Whether an ``If-None-Match`` header names ``tag`` (weakly, as RFC 9110 compares for a
    GET) or is ``*``."""
    for part in if_none_match.split(","):
        candidate = part.strip().removeprefix("W/")
        if candidate in ("*", tag):
            return True
    return False


def svg_response(request: Request, made: Badge, status_code: int = 200) -> Response:
    """The badge as sent: its SVG, cacheable for ``MAX_AGE_S``, with its ETag; 304 with no body
    when the client already holds these bytes."""
    body = badge_svg.render(made).encode()
    tag = etag(body)
    headers = {
        "Cache-Control": f"max-age={MAX_AGE_S}",
        "ETag": tag,
        "Content-Security-Policy": CSP,
        "X-Content-Type-Options": "nosniff",
    }
    if status_code == 200 and matches(request.headers.get("if-none-match", ""), tag):
        return Response(status_code=304, headers=headers)
    return Response(body, status_code=status_code, media_type=MEDIA_TYPE, headers=headers)


@router.get(BADGE_PAGE, tags=["status"], include_in_schema=False)
def badge_svg_route(
    request: Request,
    session: Annotated[Session, Depends(db_session)],
    kind: str,
    name: str,
    metric: str,
    label: str | None = None,
) -> Response:
    """One badge; 404 (a grey "not found" badge) for an unknown kind, name or metric."""
    if kind not in KINDS or metric not in METRICS:
        return svg_response(request, NOT_FOUND, 404)
    view = current_view(session, app_state(request).config, utcnow())
    found = subject(view, kind, name)
    made = badge(found, metric, view.month, label) if found is not None else None
    if made is None:
        return svg_response(request, NOT_FOUND, 404)
    return svg_response(request, made)
