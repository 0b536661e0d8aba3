"""AWS Service Health Dashboard RSS: ``status.aws.amazon.com/rss/<service>-<region>.rss`` and
``rss/all.rss`` (RSS 2.0, read with feedparser).

Each item is one posted update. Its guid, ``https://status.aws.amazon.com/#ec2-us-east-1_1676305380``,
names the service-region (``ec2-us-east-1``; global services have no region: ``billingconsole``)
and the item's own time in epoch seconds. Titles open with the state: "Informational message:",
"Performance issues:", "Service degradation:", "Service impact:", "Service disruption:" or
"Service is operating normally:", and a closing item also says "[RESOLVED]".

Grouping rule: the items of one service-region, taken oldest first, form one incident until an
item closes it ("Service is operating normally" or "[RESOLVED]"); the next item opens a new
incident. An item more than ``EVENT_GAP`` after the previous one also opens a new incident, so an
event that never got a closing item in the feed does not swallow the next one. The incident's
``source_id`` is ``<service>-<region>_<epoch of its first item>`` — the first item's guid
fragment. When a feed no longer holds an event's first item (feeds keep a window of items), the
remaining items get a later id.

Times: ``pubDate`` uses zone names (PST/PDT), read with the RFC 822 zone table; the guid epoch is
the fallback. Impact is the worst state seen: informational -> minor, performance issues,
degradation and impact -> major, disruption -> critical. Components: the service a per-service
feed names in its channel title ("Amazon Elastic Compute Cloud (N. Virginia) Service Status"),
else the service key from the guid (``ec2``). Regions: from the guid, else the channel title.

Default provider: ``aws``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from email.utils import parsedate_to_datetime
from typing import Any

from monitor.feeds.model import Impact, Incident, IncidentUpdate, Status, stable_id
from monitor.feeds.parsing.documents import first_by_source_id
from monitor.feeds.parsing.regions import aws_regions_in
from monitor.feeds.parsing.syndication import feed_field, read_feed
from monitor.feeds.parsing.text import plain_text
from monitor.feeds.parsing.times import read_time
from monitor.feeds.parsing.values import nonblank

KIND = "aws-rss"
DEFAULT_PROVIDER = "aws"
EVENT_GAP = timedelta(hours=24)

_STATE = re.compile(r"^\s*([A-Za-z][A-Za-z ]{2,40}?)\s*:\s*")
_RESOLVED_MARK = re.compile(r"\[\s*resolved\s*\]", re.IGNORECASE)
_STATE_IMPACT: dict[str, Impact] = {
    "informational message": "minor",
    "performance issues": "major",
    "service degradation": "major",
    "service impact": "major",
    "service disruption": "critical",
}
_OPERATING_NORMALLY = "service is operating normally"
_GUID = re.compile(r"#([^#_\s]+)(?:_(\d{1,12}))?\s*$")
_FEED_TITLE_SUFFIX = re.compile(r"\s*service status\s*$", re.IGNORECASE)
_ALL_SERVICES = "amazon web services"
_IMPACT_RANK: dict[Impact, int] = {"none": 0, "minor": 1, "major": 2, "critical": 3}
_EPOCH = datetime.fromtimestamp(0, tz=UTC)


@dataclass(frozen=True, slots=True)
class _Item:
    """One RSS item read: the service-region key, its time and what its title says."""

    service_region: str | None
    guid_id: str | None
    at: datetime
    subject: str
    impact: Impact | None
    closes: bool
    body: str
    link: str | None


def parse(raw: bytes, provider: str | None = None) -> list[Incident]:
    """Incidents of one AWS status RSS document, newest first by start.

    Raises ``FeedParseError`` when the bytes are not a readable RSS/Atom feed.
    """
    feed = read_feed(raw, KIND)
    channel_title = nonblank(feed_field(feed_field(feed, "feed"), "title")) or ""
    entries = feed_field(feed, "entries") or ()
    # Keyed by guid: a feed that repeats an item must not give the event a second update.
    items = {item.guid_id or item: item for item in map(_item, entries) if item is not None}
    slug = provider or DEFAULT_PROVIDER
    found = first_by_source_id(
        _incident(group, slug, channel_title) for group in _events(list(items.values()))
    )
    return sorted(found, key=lambda i: (i.started_at or _EPOCH, i.source_id), reverse=True)


def _item(entry: Any) -> _Item | None:
    guid = _GUID.search(nonblank(feed_field(entry, "id")) or "")
    title = nonblank(feed_field(entry, "title")) or ""
    at = _item_time(_published(entry), guid)
    if at is None or not (title or guid):
        return None  # an update needs a time, and something to name it by
    state, subject = _split_title(title)
    return _Item(
        service_region=guid.group(1) if guid else None,
        guid_id=f"{guid.group(1)}_{guid.group(2)}" if guid and guid.group(2) else None,
        at=at,
        subject=subject,
        impact=_STATE_IMPACT.get(state),
        closes=state == _OPERATING_NORMALLY or bool(_RESOLVED_MARK.search(title)),
        body=plain_text(feed_field(entry, "summary")),
        link=nonblank(feed_field(entry, "link")),
    )


def _published(entry: Any) -> str | None:
    """``pubDate``, else Atom's ``updated``."""
    return nonblank(feed_field(entry, "published")) or nonblank(feed_field(entry, "updated"))


def _item_time(published: str | None, guid: re.Match[str] | None) -> datetime | None:
    """``pubDate`` when its zone is known (PST, PDT, GMT, -0800…), else the guid's epoch, else
    ``pubDate`` taken as UTC."""
    zoned = _zoned_rfc822(published)
    if zoned is not None:
        return zoned
    epoch = read_time(guid.group(2)) if guid and guid.group(2) else None
    return epoch or read_time(published)


def _zoned_rfc822(text: str | None) -> datetime | None:
    """An RFC 822 time whose zone is known; None for a missing or unknown zone, which the
    standard library gives back naive."""
    try:
        parsed = parsedate_to_datetime(text) if text else None
        return parsed.astimezone(UTC) if parsed is not None and parsed.tzinfo else None
    except (ValueError, TypeError, IndexError, OverflowError):
        return None


def _split_title(title: str) -> tuple[str, str]:
    """The lower-cased state prefix and the subject with "[RESOLVED]" taken out."""
    match = _STATE.match(title)
    state = match.group(1).lower() if match else ""
    known = state in _STATE_IMPACT or state == _OPERATING_NORMALLY
    subject = title[match.end() :] if match and known else title
    return (state if known else ""), " ".join(_RESOLVED_MARK.sub(" ", subject).split())


def _events(items: list[_Item]) -> Iterator[list[_Item]]:
    """Items grouped into events by the rule in the module docstring."""
    by_key: dict[str, list[_Item]] = {}
    for item in sorted(items, key=lambda i: (i.at, i.guid_id or "")):
        key = item.service_region or stable_id(item.link, item.subject)
        group = by_key.get(key)
        if group is None or group[-1].closes or item.at - group[-1].at > EVENT_GAP:
            if group is not None:
                yield group
            group = by_key[key] = []
        group.append(item)
    yield from by_key.values()


def _incident(group: list[_Item], provider: str, channel_title: str) -> Incident:
    first, last = group[0], group[-1]
    updates = tuple(_update(item) for item in group)
    service_region = first.service_region or ""
    return Incident(
        provider=provider,
        source_id=first.guid_id or _source_id(first),
        title=next((i.subject for i in reversed(group) if i.subject), service_region),
        status=updates[-1].status,
        impact=_worst(item.impact for item in group),
        is_maintenance=False,
        started_at=first.at,
        resolved_at=last.at if last.closes else None,
        url=last.link,
        components=_components(service_region, channel_title),
        regions=aws_regions_in(service_region) or aws_regions_in(channel_title),
        updates=updates,
    )


def _source_id(first: _Item) -> str:
    """``<service>-<region>_<epoch>`` for a guid without an epoch; a hash for no guid at all."""
    if first.service_region:
        return f"{first.service_region}_{int(first.at.timestamp())}"
    return stable_id(first.link, first.subject, first.at.isoformat())


def _update(item: _Item) -> IncidentUpdate:
    status: Status = "resolved" if item.closes else "investigating"
    return IncidentUpdate(at=item.at, status=status, body=item.body or item.subject)


def _worst(impacts: Iterable[Impact | None]) -> Impact:
    """The most severe impact; "minor" when no item said (an event was posted, after all)."""
    known = [impact for impact in impacts if impact is not None]
    return max(known, key=_IMPACT_RANK.__getitem__) if known else "minor"


def _components(service_region: str, channel_title: str) -> tuple[str, ...]:
    """The service a per-service feed names in its title, else the guid's service key."""
    name = _FEED_TITLE_SUFFIX.sub("", channel_title)
    name = re.sub(r"\s*\([^()]*\)\s*$", "", name).strip()
    if name and name.lower() != _ALL_SERVICES:
        return (name,)
    regions = aws_regions_in(service_region)
    service = service_region.split(f"-{regions[0]}")[0] if regions else service_region
    return (service,) if service else ()
