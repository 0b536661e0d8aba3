"""status.io RSS feeds (CoreWeave's status page): one incident per item, read like ``rss``.

Each item's HTML body holds its updates oldest first (see ``monitor.feeds.parsing.history``);
the guid is the source id. The link path tells the kind: ``/pages/maintenance/...`` is a
maintenance, ``/pages/incident/...`` an incident; other links fall back to ``rss``'s word
rules.

Regions are the CoreWeave region codes named in the title or body, lower-cased, unique, in order
of first appearance: zone codes such as ``US-EAST-02B`` / ``EU-SOUTH-4A`` ("us-east-02b"),
bare regions such as ``US-EAST`` ("us-east"), and the older data-centre codes LGA1, ORD1, LAS1,
RNO2 ("rno2"). Only upper-case spellings count, as CoreWeave writes them, so prose such as
"the east region" is not read as a code. Maintenance windows written in the body text ("from
1:00 PM ET (5:00 PM UTC) ...") are not read; the update times say when it started and ended.

Provider default: "coreweave" when the channel title names CoreWeave, else the slug of the
channel title, else "statusio".
"""

from __future__ import annotations

import re

from monitor.feeds.kinds import rss
from monitor.feeds.model import Incident
from monitor.feeds.parsing.syndication import feed_title, read_feed
from monitor.feeds.parsing.text import html_to_text, page_slug, unique

KIND = "statusio"

_REGION_CODE = re.compile(
    r"\b(?:[A-Z]{2}-(?:NORTH|SOUTH|EAST|WEST|CENTRAL)[A-Z]*(?:-\d{1,2}[A-Z]?)?"
    r"|(?:LGA|ORD|LAS|RNO)\d[A-Z]?)\b"
)
_MAINTENANCE_PATH = "/pages/maintenance/"
_INCIDENT_PATH = "/pages/incident/"


def parse(raw: bytes, provider: str | None = None) -> list[Incident]:
    """Incidents and maintenances of a status.io RSS document. Raises ``FeedParseError``."""
    feed = read_feed(raw, KIND)
    slug = provider or default_provider(feed_title(feed))
    return [_incident(item, slug) for item in rss.feed_items(feed)]


def default_provider(channel_title: str) -> str:
    """The slug "coreweave" for CoreWeave's page, else the channel title's slug, else the kind."""
    if "coreweave" in channel_title.lower():
        return "coreweave"
    return page_slug(channel_title, KIND)


def _incident(item: rss.FeedItem, provider: str) -> Incident:
    regions = region_codes(item.title, html_to_text(item.body_html))
    return rss.incident_from_item(item, provider, _maintenance_from_link(item.url), regions)


def _maintenance_from_link(url: str | None) -> bool | None:
    """True / False when the link path names the kind, None when it does not."""
    if url and _MAINTENANCE_PATH in url:
        return True
    if url and _INCIDENT_PATH in url:
        return False
    return None


def region_codes(*texts: str) -> tuple[str, ...]:
    """CoreWeave region codes in ``texts``, lower-cased, unique, in order of appearance."""
    return unique(match[0].lower() for text in texts for match in _REGION_CODE.finditer(text))
