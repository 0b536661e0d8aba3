"""Feed kinds by name: one parser module each, one line here (STYLE.md §2)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from monitor.errors import SlamonError
from monitor.feeds.kinds import (
    aws_health,
    aws_rss,
    azure_rss,
    betterstack,
    gcp,
    instatus,
    rss,
    statusio,
    statuspage,
)
from monitor.feeds.model import Incident

Parser = Callable[[bytes, str | None], list[Incident]]


@dataclass(frozen=True, slots=True)
class FeedKind:
    """A parser, and whether its documents list only what is open right now (a *snapshot*):
    an incident missing from a fresh snapshot has ended, though the feed never says so."""

    name: str
    parse: Parser
    snapshot: bool = False


REGISTRY: dict[str, FeedKind] = {
    "statuspage": FeedKind("statuspage", statuspage.parse),
    "gcp": FeedKind("gcp", gcp.parse),
    "aws-rss": FeedKind("aws-rss", aws_rss.parse),
    "aws-health": FeedKind("aws-health", aws_health.parse, snapshot=True),
    "azure-rss": FeedKind("azure-rss", azure_rss.parse, snapshot=True),
    "rss": FeedKind("rss", rss.parse),
    "statusio": FeedKind("statusio", statusio.parse),
    "betterstack": FeedKind("betterstack", betterstack.parse),
    "instatus": FeedKind("instatus", instatus.parse, snapshot=True),
}

# Statuspage's summary and unresolved endpoints list only open incidents; incidents.json does not.
_SNAPSHOT_URL_HINTS = ("/summary.json", "/unresolved.json")


def feed_kind(name: str) -> FeedKind:
    """The registered kind ``name``; a ``SlamonError`` listing the known kinds otherwise."""
    try:
        return REGISTRY[name]
    except KeyError:
        known = ", ".join(sorted(REGISTRY))
        raise SlamonError(f"unknown feed kind {name!r} (known: {known})") from None


def is_snapshot(kind: str, url: str) -> bool:
    """Whether a document from ``url`` lists only open incidents."""
    return feed_kind(kind).snapshot or url.endswith(_SNAPSHOT_URL_HINTS)
