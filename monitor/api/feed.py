"""``GET /feed.atom``: an Atom 1.0 feed (RFC 4287) of what ``monitor.status.feed`` tells, public
like the status page, whose head links to it.

Written with the standard library's ElementTree: the feed is a handful of elements, and
escaping is all a writer has to get right (feedgen would add lxml and dateutil for it). Every
id is a ``urn:uuid`` made from the entry's stable key (a name-based UUID, RFC 9562 v5), so a
reader sees an outage or a notice as one entry however often its words change, wherever slamon
is reached; links are absolute under ``SLAMON_PUBLIC_URL``, else the request's own base URL.
Characters XML 1.0 cannot hold (a provider's title may carry a control character) are dropped.
Answers carry an ``ETag`` (the body's digest) and ``Last-Modified`` (the newest entry), and a
reader that sends either back gets a 304 while nothing changed.
"""

from __future__ import annotations

import hashlib
import re
import uuid
import xml.etree.ElementTree as ET
from collections.abc import Sequence
from datetime import UTC, datetime
from email.utils import format_datetime, parsedate_to_datetime
from typing import Annotated

from fastapi import APIRouter, Depends, Request
from fastapi.responses import Response
from sqlalchemy.orm import Session

from monitor import __version__
from monitor.api.deps import app_state, db_session
from monitor.db.base import utcnow
from monitor.status.feed import HISTORY, FeedEntry, feed_entries

ATOM = "http://www.w3.org/2005/Atom"
MEDIA_TYPE = "application/atom+xml"
PATH = "/feed.atom"
TITLE = "slamon: incidents, outages, maintenance and notices"
# the namespace every id is made in (a fixed, random UUID: slamon's own)
NAMESPACE = uuid.UUID("5b0f3f8e-6a43-4c1e-9a53-0d2f6c7e1a90")
NOT_XML = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")

router = APIRouter()


def atom_time(moment: datetime) -> str:
    """RFC 3339 in UTC, to the second."""
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def urn(key: str) -> str:
    return f"urn:uuid:{uuid.uuid5(NAMESPACE, key)}"


def xml_text(text: str) -> str:
    return NOT_XML.sub("", text)


def _add(parent: ET.Element, tag: str, text: str | None = None, **attributes: str) -> ET.Element:
    element = ET.SubElement(parent, tag, attributes)
    if text is not None:
        element.text = xml_text(text)
    return element


def _entry(feed: ET.Element, entry: FeedEntry, base: str) -> None:
    element = _add(feed, "entry")
    _add(element, "id", urn(entry.key))
    _add(element, "title", entry.title, type="text")
    _add(element, "published", atom_time(entry.published))
    _add(element, "updated", atom_time(entry.updated))
    _add(element, "link", rel="alternate", type="text/html", href=base + entry.path)
    if entry.related:
        _add(element, "link", rel="related", type="text/html", href=entry.related)
    _add(element, "category", term=entry.kind)
    _add(element, "summary", entry.summary, type="text")
    if entry.content:
        _add(element, "content", entry.content, type="text")


def atom(entries: Sequence[FeedEntry], base: str, now: datetime) -> bytes:
    """The feed document (pure): ``entries`` as given, links under ``base`` (no trailing
    slash); its ``updated`` is ``last_change``."""
    feed = ET.Element("feed", {"xmlns": ATOM})
    _add(feed, "id", urn(f"feed {base}{PATH}"))
    _add(feed, "title", TITLE, type="text")
    _add(feed, "subtitle", "What slamon saw and what its operators announced.", type="text")
    _add(feed, "updated", atom_time(last_change(entries, now)))
    _add(feed, "link", rel="self", type=MEDIA_TYPE, href=base + PATH)
    _add(feed, "link", rel="alternate", type="text/html", href=base + "/")
    author = _add(feed, "author")
    _add(author, "name", "slamon")
    _add(author, "uri", base + "/")
    _add(feed, "generator", "slamon", version=__version__)
    for entry in entries:
        _entry(feed, entry, base)
    document: bytes = ET.tostring(feed, encoding="utf-8", xml_declaration=True)
    return document


def last_change(entries: Sequence[FeedEntry], now: datetime) -> datetime:
    """When the feed last changed: its newest entry's ``updated``; with none, the start of the
    UTC day ``HISTORY`` ago (nothing changed since, as far as the feed reaches), so an empty
    feed keeps one ``updated`` and one ETag all day rather than a new one every second."""
    quiet = (now - HISTORY).replace(hour=0, minute=0, second=0, microsecond=0)
    return max((e.updated for e in entries), default=quiet)


def base_url(request: Request) -> str:
    """Where slamon is reached: ``SLAMON_PUBLIC_URL``, else the request's own base URL."""
    public = app_state(request).settings.public_url
    return public or str(request.base_url).rstrip("/")


def etag(body: bytes) -> str:
    return '"' + hashlib.sha256(body).hexdigest()[:32] + '"'


def not_modified(request: Request, tag: str, modified: datetime) -> bool:
    """Whether the reader already has this version: its ``If-None-Match`` names ``tag`` (or
    ``*``), or, when it sent none, its ``If-Modified-Since`` is no earlier than ``modified``."""
    matches = request.headers.get("if-none-match")
    if matches is not None:
        sent = {m.strip().removeprefix("W/") for m in matches.split(",")}
        return "*" in sent or tag in sent
    since = request.headers.get("if-modified-since")
    if since is None:
        return False
    try:
        moment = parsedate_to_datetime(since)
    except (TypeError, ValueError, IndexError):
        return False
    return moment.tzinfo is not None and modified.replace(microsecond=0) <= moment


@router.get(PATH, tags=["status"], include_in_schema=False)
def feed(request: Request, session: Annotated[Session, Depends(db_session)]) -> Response:
    """The feed; 304 when the reader's copy is current."""
    now = utcnow()
    entries = feed_entries(session, app_state(request).config, now)
    body = atom(entries, base_url(request), now)
    modified = last_change(entries, now)
    headers = {
        "ETag": etag(body),
        "Last-Modified": format_datetime(modified.astimezone(UTC), usegmt=True),
        "Cache-Control": "no-cache",
    }
    if not_modified(request, headers["ETag"], modified):
        return Response(status_code=304, headers=headers)
    return Response(body, media_type=f"{MEDIA_TYPE}; charset=utf-8", headers=headers)
