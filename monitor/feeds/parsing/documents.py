"""Decoding a whole document: text encodings, JSON, the expected shape, and one incident per
source id."""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from monitor.errors import FeedParseError
from monitor.feeds.model import Incident
from monitor.feeds.parsing.values import dicts_in


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
