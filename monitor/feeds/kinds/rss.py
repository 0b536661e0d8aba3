"""Any RSS 2.0 or Atom status feed, read with feedparser: one incident per item or entry.

Statuspage ``history.atom`` / ``history.rss`` bodies hold the whole update history (see
``monitor.feeds.parsing.history``); other feeds give one update per item, at the item's time.

- ``source_id``: the item's guid / Atom id, else ``stable_id(link, title)``.
- status: the last update's; for an item without a history, "resolved" ("completed" for
  maintenance) when the title names it or the body says it "has been resolved", else
  "investigating" ("scheduled").
- maintenance: the history has a maintenance status (Scheduled, In progress, ...) or the title
  says "maintenance"; impact is then "maintenance", else "critical" for a title naming a
  "major outage", "major" for an "outage" or "unavailable", else "minor".
- components: Statuspage's "This incident affected: A and B." line; regions: none.
- provider default: the slug of the feed title before " Status" ("GitHub Status - Incident
  History" -> "github"), else "rss".

What is no feed (see ``parsing.syndication.read_feed``) raises ``FeedParseError``; an empty,
valid feed gives ``[]``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from monitor.feeds.model import Impact, Incident, IncidentUpdate, Status, stable_id
from monitor.feeds.parsing import history
from monitor.feeds.parsing.status import closed_status, opening_status
from monitor.feeds.parsing.syndication import feed_field, feed_title, read_feed
from monitor.feeds.parsing.text import html_to_text, page_slug
from monitor.feeds.parsing.times import parse_time

KIND = "rss"

_TITLE_RESOLVED = re.compile(r"\b(?:resolved|completed)\b", re.IGNORECASE)
_BODY_RESOLVED = re.compile(
    r"^(?:resolved|completed)\b|\b(?:has|have) been (?:fully )?(?:resolved|completed)\b",
    re.IGNORECASE,
)
_MAINTENANCE_WORD = re.compile(r"\bmaintenance\b", re.IGNORECASE)
_IMPACT_WORDS: tuple[tuple[re.Pattern[str], Impact], ...] = (
    (re.compile(r"\bmajor outage\b", re.IGNORECASE), "critical"),
    (re.compile(r"\boutage\b|\bunavailable\b", re.IGNORECASE), "major"),
)


@dataclass(frozen=True, slots=True)
class FeedItem:
    """What an incident is built from: one item's fields, times in UTC, body still HTML."""

    source_id: str
    title: str
    url: str | None
    body_html: str
    published: datetime | None
    latest: datetime | None  # the later of published and updated: the clock for yearless stamps


def parse(raw: bytes, provider: str | None = None) -> list[Incident]:
    """Incidents of an RSS/Atom document, in document order. Raises ``FeedParseError``."""
    feed = read_feed(raw, KIND)
    slug = provider or page_slug(feed_title(feed), KIND)
    return [incident_from_item(item, slug) for item in feed_items(feed)]


def feed_items(feed: Any) -> list[FeedItem]:
    """One ``FeedItem`` per entry; the feed's own time stands in for items without one."""
    feed_time = _struct_time(feed_field(feed_field(feed, "feed"), "updated_parsed"))
    return [_item(entry, feed_time) for entry in feed_field(feed, "entries") or ()]


def _item(entry: Any, feed_time: datetime | None) -> FeedItem:
    title = " ".join(str(feed_field(entry, "title") or "").split())
    url = str(feed_field(entry, "link") or "").strip() or None
    published = _entry_time(entry, "published")
    updated = _entry_time(entry, "updated")
    times = [t for t in (published, updated) if t is not None]
    return FeedItem(
        source_id=str(feed_field(entry, "id") or "").strip() or stable_id(url, title),
        title=title,
        url=url,
        body_html=_body_html(entry),
        published=published or updated,
        latest=max(times) if times else feed_time,
    )


def _entry_time(entry: Any, key: str) -> datetime | None:
    """feedparser's parsed time, else the raw text read as UTC: feedparser gives no parsed time
    for an RFC 822 date without a zone, and such feeds mean UTC."""
    parsed = _struct_time(feed_field(entry, f"{key}_parsed"))
    if parsed is not None:
        return parsed
    try:
        return parse_time(str(feed_field(entry, key) or "")) or None
    except ValueError:
        return None


def _body_html(entry: Any) -> str:
    """Atom ``content`` (or RSS ``content:encoded``) when present, else the summary."""
    for content in feed_field(entry, "content") or ():
        if feed_field(content, "value"):
            return str(feed_field(content, "value"))
    return str(feed_field(entry, "summary") or "")


def _struct_time(value: Any) -> datetime | None:
    """feedparser's UTC ``struct_time`` as an aware datetime; None when missing or invalid."""
    try:
        year, month, day, hour, minute, second = value[:6]
        return datetime(year, month, day, hour, minute, min(second, 59), tzinfo=UTC)
    except (TypeError, ValueError, OverflowError):
        return None


def incident_from_item(
    item: FeedItem,
    provider: str,
    maintenance: bool | None = None,
    regions: tuple[str, ...] = (),
) -> Incident:
    """The normalized incident of one item; ``maintenance`` None means tell from its words."""
    entries = history.read_history(item.body_html, item.latest)
    if maintenance is None:
        maintenance = history.is_maintenance_history(entries) or _says_maintenance(item.title)
    updates = (
        history.to_updates(entries, maintenance) if entries else _single_update(item, maintenance)
    )
    status = updates[-1].status if updates else _status_from_words(item, maintenance)
    return Incident(
        provider=provider,
        source_id=item.source_id,
        title=item.title,
        status=status,
        impact="maintenance" if maintenance else impact_from_title(item.title),
        is_maintenance=maintenance,
        started_at=updates[0].at if updates else item.published,
        resolved_at=history.resolved_time(updates),
        url=item.url,
        components=history.affected_components(item.body_html),
        regions=regions,
        updates=updates,
    )


def _single_update(item: FeedItem, maintenance: bool) -> tuple[IncidentUpdate, ...]:
    """A feed without a history: the item itself is the one update, at its own time."""
    if item.published is None:
        return ()
    status = _status_from_words(item, maintenance)
    return (IncidentUpdate(item.published, status, body_text(item.body_html)),)


def body_text(body_html: str) -> str:
    """The plain text of an item body, without Statuspage's "This incident affected" line."""
    return history.strip_affected(html_to_text(body_html))


def _status_from_words(item: FeedItem, maintenance: bool) -> Status:
    """Closed when the title names it or the body says so, else the opening state."""
    text = body_text(item.body_html)
    if _TITLE_RESOLVED.search(item.title) or _BODY_RESOLVED.search(text):
        return closed_status(maintenance)
    return opening_status(maintenance)


def _says_maintenance(title: str) -> bool:
    return bool(_MAINTENANCE_WORD.search(title))


def impact_from_title(title: str) -> Impact:
    """The impact a title's words imply; feeds carry no impact field, so "minor" by default."""
    for pattern, impact in _IMPACT_WORDS:
        if pattern.search(title):
            return impact
    return "minor"
