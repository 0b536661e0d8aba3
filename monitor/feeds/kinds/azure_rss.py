"""Azure status RSS: ``https://azure.status.microsoft/en-us/status/feed/`` (RSS 2.0).

The feed lists only the issues open right now and is empty most of the time; an empty feed is
normal and gives ``[]``. An item that leaves the feed has ended: the feed says nothing more
about it. ``lastBuildDate`` ends in a bare ``Z``.

Mapping: each item is one incident. Its state is the status word at the end of the title
("Azure Databricks - North Central US - Investigating", "Azure Synapse Analytics Mitigating"):
Investigating/Active -> investigating, Mitigating -> identified, Monitoring -> monitoring,
Mitigated/Resolved -> resolved; no word -> investigating. The feed states no severity; an issue
on Azure's public status page is a broad one, so impact is "major". ``source_id`` is the guid,
else a hash of the link and the title without its status word (so the id survives the status
changing). Regions: Azure region names in the ``<category>`` elements and the title, as codes
(``westeurope``); when those name none, the ones the description names. Components: the
categories that are not regions, else the service the title names first ("Azure Key Vault
issue affecting…" -> "Azure Key Vault"). An item with a ``pubDate`` carries one update (its
description as plain text) and starts then; without one it carries none and has no start,
since ``lastBuildDate`` moves on every build and would make a new update on every poll.

Default provider: ``azure``.
"""

from __future__ import annotations

import re
from typing import Any

from monitor.feeds.model import Incident, IncidentUpdate, Status, stable_id
from monitor.feeds.parsing.documents import first_by_source_id
from monitor.feeds.parsing.regions import azure_regions_in
from monitor.feeds.parsing.syndication import feed_field, read_feed
from monitor.feeds.parsing.text import plain_text, unique
from monitor.feeds.parsing.times import read_time
from monitor.feeds.parsing.values import dicts_in, nonblank

KIND = "azure-rss"
DEFAULT_PROVIDER = "azure"

_STATUS_WORDS: dict[str, Status] = {
    "investigating": "investigating",
    "active": "investigating",
    "mitigating": "identified",
    "identified": "identified",
    "monitoring": "monitoring",
    "mitigated": "resolved",
    "resolved": "resolved",
}
_TRAILING_STATUS = re.compile(
    r"(?:\s+-\s+|\s+)(" + "|".join(_STATUS_WORDS) + r")\s*$", re.IGNORECASE
)
_SEPARATOR = " - "
_NAME_WORD = re.compile(r"[A-Z0-9][\w.&+/()-]*")


def parse(raw: bytes, provider: str | None = None) -> list[Incident]:
    """Incidents of one Azure status RSS document, in feed order.

    Raises ``FeedParseError`` when the bytes are not a readable RSS/Atom feed.
    """
    feed = read_feed(raw, KIND)
    channel_link = nonblank(feed_field(feed_field(feed, "feed"), "link"))
    slug = provider or DEFAULT_PROVIDER
    entries = feed_field(feed, "entries") or ()
    return first_by_source_id(_incident(entry, slug, channel_link) for entry in entries)


def _incident(entry: Any, provider: str, channel_link: str | None) -> Incident | None:
    title = " ".join((nonblank(feed_field(entry, "title")) or "").split())
    guid = nonblank(feed_field(entry, "id"))
    if not title and guid is None:
        return None  # neither a title nor a guid: nothing to name the issue by
    core, status = split_status(title)
    link = nonblank(feed_field(entry, "link"))
    categories = _categories(entry)
    updates = _updates(entry, status)
    return Incident(
        provider=provider,
        source_id=guid or stable_id(link, core),
        title=title,
        status=status,
        impact="major",
        is_maintenance=False,
        started_at=updates[0].at if updates else None,
        resolved_at=updates[0].at if updates and status == "resolved" else None,
        url=link or channel_link,
        components=_components(core, categories),
        regions=_regions(categories, core, entry),
        updates=updates,
    )


def split_status(title: str) -> tuple[str, Status]:
    """The title without its trailing status word, and the status that word means."""
    match = _TRAILING_STATUS.search(title)
    if match is None or match.start() == 0:
        return title, "investigating"
    return title[: match.start()].strip(), _STATUS_WORDS[match.group(1).lower()]


def _updates(entry: Any, status: Status) -> tuple[IncidentUpdate, ...]:
    at = read_time(nonblank(feed_field(entry, "published")))
    if at is None:
        return ()
    return (IncidentUpdate(at=at, status=status, body=plain_text(feed_field(entry, "summary"))),)


def _categories(entry: Any) -> list[str]:
    terms = (nonblank(feed_field(tag, "term")) for tag in dicts_in(feed_field(entry, "tags")))
    return [term for term in terms if term]


def _regions(categories: list[str], core: str, entry: Any) -> tuple[str, ...]:
    """Regions named by the categories or the title; else those the description names."""
    named = [code for text in (*categories, core) for code in azure_regions_in(text)]
    if not named:
        named = list(azure_regions_in(plain_text(feed_field(entry, "summary"))))
    return unique(named)


def _components(core: str, categories: list[str]) -> tuple[str, ...]:
    """Categories that name no region; else the service the title names first."""
    services = [category for category in categories if not azure_regions_in(category)]
    if services:
        return unique(services)
    service = _service_in_title(core)
    return (service,) if service and not azure_regions_in(service) else ()


def _service_in_title(core: str) -> str:
    """ "Azure Databricks - North Central US" -> "Azure Databricks"; else the leading run of
    capitalised words ("Azure Key Vault issue affecting…" -> "Azure Key Vault")."""
    if _SEPARATOR in core:
        return core.split(_SEPARATOR, 1)[0].strip()
    words: list[str] = []
    for word in core.split():
        if not _NAME_WORD.fullmatch(word):
            break
        words.append(word)
    return " ".join(words)
