"""Small pure helpers every feed parser shares: text, times, status words, JSON decoding and
reading untrusted JSON values.

Readers of untrusted values (``nonblank``, ``id_text``, ``as_dict``, ``dicts_in``,
``read_time``, ``plain_text``) never raise: a value of the wrong type reads as missing, so one
odd field costs that field, not the document.
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections.abc import Iterable
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from html.parser import HTMLParser
from typing import Any

from monitor.errors import FeedParseError
from monitor.feeds.model import Impact, Incident, Status

# --- text -----------------------------------------------------------------------------------------

_BLOCK_TAGS = frozenset(
    {"p", "br", "div", "li", "ul", "ol", "tr", "h1", "h2", "h3", "h4", "h5", "h6", "small"}
)
_HTML_HINT = re.compile(r"<[a-zA-Z/!?]|&#?\w+;")
_TAG = re.compile(r"<[^>]*>")


class _TextExtractor(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in _BLOCK_TAGS:
            self.parts.append("\n")

    def handle_endtag(self, tag: str) -> None:
        if tag in _BLOCK_TAGS:
            self.parts.append("\n")

    def handle_data(self, data: str) -> None:
        self.parts.append(data)


def html_to_text(html: str | None) -> str:
    """Plain text of an HTML fragment: tags dropped, entities decoded, blank runs folded.

    Never raises: ``html.parser`` asserts on some malformed markup (an unknown marked section
    such as ``<![foo[ bar ]]>``); such a fragment is read again with every tag cut out.
    """
    if not html:
        return ""
    try:
        return _extract_text(html)
    except AssertionError:
        return _extract_text(_TAG.sub(" ", html).replace("<", "&lt;"))


def _extract_text(html: str) -> str:
    extractor = _TextExtractor()
    extractor.feed(html)
    extractor.close()
    lines = (" ".join(line.split()) for line in "".join(extractor.parts).splitlines())
    return "\n".join(line for line in lines if line)


def plain_text(value: object) -> str:
    """A body as plain text: HTML is reduced to text; plain text keeps its paragraphs."""
    if not isinstance(value, str):
        return ""
    if _HTML_HINT.search(value):
        return html_to_text(value)
    lines = [line.rstrip() for line in value.replace("\r\n", "\n").split("\n")]
    return re.sub(r"\n{3,}", "\n\n", "\n".join(lines)).strip()


def to_ascii(text: str) -> str:
    """``text`` with accents dropped ("São Paulo" -> "Sao Paulo") and other non-ASCII removed."""
    return unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode()


def page_slug(name: object, default: str) -> str:
    """A provider slug ([a-z0-9-]) from a status page's name or feed title; ``default`` when
    ``name`` is no text or no letter or digit is left.

    The words from the first "status" on name the page, not the provider, unless "status" is
    the first word: "Cloudflare Status" -> "cloudflare", "GitHub Status - Incident History" ->
    "github", "Together AI Status Page" -> "together-ai", "CoreWeave Cloud" ->
    "coreweave-cloud", "Status" -> "status".
    """
    if not isinstance(name, str):
        return default
    words = re.sub(r"[^a-z0-9]+", " ", to_ascii(name).lower()).split()
    if "status" in words[1:]:
        words = words[: words.index("status", 1)]
    return "-".join(words) or default


def unique(values: Iterable[str]) -> tuple[str, ...]:
    """The values de-duplicated, in order of first appearance."""
    return tuple(dict.fromkeys(values))


# --- untrusted JSON values ------------------------------------------------------------------------


def nonblank(value: object) -> str | None:
    """A string stripped of surrounding whitespace; None for a blank string or a non-string."""
    return (value.strip() or None) if isinstance(value, str) else None


def id_text(value: object) -> str | None:
    """An id given as a string or an integer (not a boolean), as text; None when missing."""
    if isinstance(value, bool) or not isinstance(value, str | int):
        return None
    return str(value) or None


def as_dict(value: object) -> dict[str, Any]:
    """``value`` if it is a JSON object, else an empty one."""
    return value if isinstance(value, dict) else {}


def dicts_in(value: object) -> list[dict[str, Any]]:
    """The JSON objects in a list, in order; ``[]`` when ``value`` is no list."""
    return [v for v in value if isinstance(v, dict)] if isinstance(value, list) else []


# --- times ----------------------------------------------------------------------------------------


def parse_time(value: str | int | float | None) -> datetime | None:
    """An aware UTC datetime from ISO 8601, RFC 822 or epoch seconds; None for empty input.

    Naive times are taken as UTC (the feeds that omit a zone mean UTC). Raises ``ValueError``
    for text that is none of these and for times out of range ("0001-01-01T00:00:00+01:00",
    an epoch of 1e300), and nothing else.
    """
    if value is None or value == "":
        return None
    try:
        if isinstance(value, int | float) or (isinstance(value, str) and value.strip().isdigit()):
            seconds = float(value)
            if seconds > 1e11:  # milliseconds
                seconds /= 1000
            return datetime.fromtimestamp(seconds, tz=UTC)
        return to_utc(_parse_text_time(value.strip()))
    except (OverflowError, OSError) as exc:
        raise ValueError(f"time out of range: {value!r}") from exc


def _parse_text_time(text: str) -> datetime:
    try:
        return datetime.fromisoformat(text)
    except ValueError:
        try:
            return parsedate_to_datetime(text)
        except (TypeError, ValueError, IndexError) as exc:
            raise ValueError(f"unreadable time {text!r}") from exc


def to_utc(value: datetime) -> datetime:
    """The same instant in UTC; a naive value is taken to be UTC already."""
    if value.tzinfo is None:
        return value.replace(tzinfo=UTC)
    return value.astimezone(UTC)


def read_time(value: object) -> datetime | None:
    """``parse_time`` for untrusted JSON values: None for anything missing or unreadable, so one
    bad timestamp costs a field, not the document."""
    if isinstance(value, bool) or not isinstance(value, str | int | float):
        return None
    try:
        return parse_time(value)
    except ValueError:
        return None


def first_time(item: dict[str, Any], *keys: str) -> datetime | None:
    """The time under the first of ``keys`` that holds a readable one; None when none does."""
    for key in keys:
        at = read_time(item.get(key))
        if at is not None:
            return at
    return None


# --- status words ---------------------------------------------------------------------------------

_STATUS_WORDS: dict[str, Status] = {
    "investigating": "investigating",
    "identified": "identified",
    "monitoring": "monitoring",
    "resolved": "resolved",
    "postmortem": "postmortem",
    "post-incident report": "postmortem",
    "scheduled": "scheduled",
    "in progress": "in_progress",
    "in_progress": "in_progress",
    "active": "in_progress",
    "verifying": "verifying",
    "completed": "completed",
    "complete": "completed",
    "closed": "resolved",
    "mitigated": "monitoring",
    "degraded": "investigating",
}


def normalize_status(word: str | None) -> Status | None:
    """The normalized status for a feed's status word, or None when the word is not a state
    (e.g. Statuspage's "Update", which means the previous state carries on)."""
    if not word:
        return None
    return _STATUS_WORDS.get(word.strip().lower().replace("_", " "))


# Statuses re-read for the other kind of item, so a maintenance only ever carries maintenance
# statuses (the contract in docs/DESIGN.md) and an incident only incident ones.
_AS_MAINTENANCE: dict[str, Status] = {
    "investigating": "in_progress",
    "identified": "in_progress",
    "monitoring": "verifying",
    "resolved": "completed",
    "postmortem": "completed",
}
_AS_INCIDENT: dict[str, Status] = {
    "scheduled": "investigating",
    "in_progress": "identified",
    "verifying": "monitoring",
    "completed": "resolved",
}


def as_kind(status: Status, maintenance: bool) -> Status:
    """``status`` re-read as a maintenance status or an incident status, as the item is."""
    table = _AS_MAINTENANCE if maintenance else _AS_INCIDENT
    return table.get(status, status)


def opening_status(maintenance: bool) -> Status:
    """The state of an item before any update says otherwise."""
    return "scheduled" if maintenance else "investigating"


def closed_status(maintenance: bool) -> Status:
    """The state of an item that has ended."""
    return "completed" if maintenance else "resolved"


_IMPACT_WORDS: dict[str, Impact] = {
    "none": "none",
    "minor": "minor",
    "major": "major",
    "critical": "critical",
    "maintenance": "maintenance",
    "low": "minor",
    "medium": "major",
    "high": "critical",
    "degraded": "minor",
    "degradedperformance": "minor",
    "partialoutage": "major",
    "majoroutage": "critical",
}


def normalize_impact(word: str | None, default: Impact = "none") -> Impact:
    """The normalized impact for a feed's impact/severity word; ``default`` when unknown."""
    if not word:
        return default
    return _IMPACT_WORDS.get(re.sub(r"[\s_-]", "", word.lower()), default)


# --- documents ------------------------------------------------------------------------------------


def decode_text(raw: bytes) -> str:
    """Text of a document, honouring a BOM (the AWS Health Dashboard sends UTF-16 BE)."""
    if raw.startswith(b"\xef\xbb\xbf"):
        return raw[3:].decode("utf-8", errors="replace")
    if raw.startswith((b"\xfe\xff", b"\xff\xfe")):
        return raw.decode("utf-16", errors="replace")
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        return raw.decode("latin-1")


def load_json(raw: bytes, kind: str) -> Any:
    """The decoded JSON document, or ``FeedParseError`` naming the kind and the reason."""
    text = decode_text(raw).strip()
    if not text:
        raise FeedParseError(kind, "empty document")
    if text.startswith("<"):
        raise FeedParseError(kind, "got HTML or XML where JSON was expected")
    try:
        return json.loads(text)
    except (ValueError, RecursionError) as exc:
        raise FeedParseError(kind, f"invalid JSON: {exc}") from None


def expect(value: Any, typ: type | tuple[type, ...], kind: str, what: str) -> Any:
    """``value`` if it has the expected JSON type, else ``FeedParseError``."""
    if not isinstance(value, typ):
        raise FeedParseError(kind, f"{what} is {type(value).__name__}, not the expected shape")
    return value


def listed_dicts(doc: dict[str, Any], key: str, kind: str) -> list[dict[str, Any]]:
    """The objects listed under ``doc[key]`` (``[]`` when it is missing or null), skipping
    elements that are no object; ``FeedParseError`` when it holds something other than a list."""
    value = doc.get(key)
    if value is None:
        return []
    return dicts_in(expect(value, list, kind, key))


def first_by_source_id(incidents: Iterable[Incident | None]) -> list[Incident]:
    """The incidents in order, each ``source_id`` once (its first appearance), Nones left out:
    a feed that lists an item twice, or under two lists, yields it once."""
    found: dict[str, Incident] = {}
    for incident in incidents:
        if incident is not None:
            found.setdefault(incident.source_id, incident)
    return list(found.values())
