"""Reading RSS 2.0 / Atom documents with feedparser: the one reader the ``rss``, ``statusio``,
``aws_rss`` and ``azure_rss`` parsers share (kept apart from the other helpers so that the JSON
parsers do not import feedparser).
"""

from __future__ import annotations

import io
import re
from typing import Any

import feedparser

from monitor.errors import FeedParseError
from monitor.feeds.parsing.documents import decode_text

_ROOT_CLOSED = re.compile(r"</(?:[\w.-]+:)?(?:rss|feed|RDF)\s*>\s*(?:<!--.*?-->\s*)*$", re.DOTALL)


def read_feed(raw: bytes, kind: str) -> Any:
    """feedparser's result for ``raw``, or ``FeedParseError`` naming ``kind`` and the reason.

    Unreadable: an empty document; one feedparser raises on; a malformed one whose root element
    is not closed (it was cut off: "truncated"); one with no entries and neither an RSS/Atom
    version nor a feed title ("not an RSS or Atom feed"). A complete feed with a local XML error
    is read by feedparser's lenient parser, and an empty, valid feed is no error.
    """
    if not raw.strip():
        raise FeedParseError(kind, "empty document")
    try:
        # A stream, never bytes or str: feedparser opens those as file names or URLs.
        feed = feedparser.parse(io.BytesIO(raw))
    except Exception as exc:  # feedparser is lenient; anything it throws means unreadable
        raise FeedParseError(kind, f"unreadable feed: {exc!r}") from None
    if feed_field(feed, "bozo") and not _ROOT_CLOSED.search(decode_text(raw).rstrip("\0 \t\r\n")):
        raise FeedParseError(kind, f"truncated document: {feed_field(feed, 'bozo_exception')!r}")
    if not feed_field(feed, "entries") and not feed_field(feed, "version") and not feed_title(feed):
        raise FeedParseError(kind, "not an RSS or Atom feed")
    return feed


def feed_field(node: Any, key: str) -> Any:
    """``node[key]`` or None. Plain ``dict.get``: feedparser's own ``get`` maps some missing
    keys to others (updated -> published) and warns about it."""
    return dict.get(node, key) if isinstance(node, dict) else None


def feed_title(feed: Any) -> str:
    """The channel / feed title as plain text ('' when missing)."""
    return " ".join(str(feed_field(feed_field(feed, "feed"), "title") or "").split())
