"""Fetching a feed document: conditional GET, bounded size, errors sorted into transient and
permanent (the only I/O in the feed layer besides storing)."""

from __future__ import annotations

import time
from dataclasses import dataclass

import httpx

from monitor.errors import FeedRejected, FeedTooLarge, FeedUnavailable

MAX_FEED_BYTES = 8 * 1024 * 1024  # Google's incidents.json is ~1-2 MB and growing
# The client's timeouts bound each read, not the whole body: a server that drips a byte every
# few seconds would hold a feed worker forever. Healthy feeds arrive in a second or two.
FETCH_DEADLINE_S = 60.0
RETRY_STATUSES = frozenset({429, 500, 502, 503, 504})


@dataclass(frozen=True, slots=True)
class Fetched:
    """A fetched document, or ``body=None`` when the server said 304 Not Modified."""

    body: bytes | None
    etag: str | None
    last_modified: str | None
    status_code: int

    @property
    def not_modified(self) -> bool:
        return self.body is None


def conditional_headers(etag: str | None, last_modified: str | None) -> dict[str, str]:
    headers = {}
    if etag:
        headers["If-None-Match"] = etag
    if last_modified:
        headers["If-Modified-Since"] = last_modified
    return headers


def fetch(
    client: httpx.Client,
    url: str,
    *,
    etag: str | None = None,
    last_modified: str | None = None,
    max_bytes: int = MAX_FEED_BYTES,
    deadline_s: float = FETCH_DEADLINE_S,
) -> Fetched:
    """GET ``url`` with the validators we hold.

    Raises ``FeedUnavailable`` (timeouts, connection errors, 429/5xx, a body still arriving
    after ``deadline_s``: retry later), ``FeedRejected`` (other 4xx) or ``FeedTooLarge`` (body
    over ``max_bytes``, read no further).
    """
    started = time.monotonic()
    try:
        with client.stream("GET", url, headers=conditional_headers(etag, last_modified)) as reply:
            _raise_for_status(reply, url)
            if reply.status_code == 304:
                return Fetched(None, etag, last_modified, 304)
            body = _read_bounded(reply, url, max_bytes, started, deadline_s)
    except httpx.TimeoutException:
        raise FeedUnavailable(f"{url}: timed out") from None
    except httpx.TransportError as exc:
        raise FeedUnavailable(f"{url}: {type(exc).__name__}: {exc}") from None
    return Fetched(
        body,
        reply.headers.get("ETag"),
        reply.headers.get("Last-Modified"),
        reply.status_code,
    )


def _raise_for_status(reply: httpx.Response, url: str) -> None:
    code = reply.status_code
    if code in RETRY_STATUSES or code >= 500:
        raise FeedUnavailable(f"{url}: HTTP {code}")
    if code >= 400:
        raise FeedRejected(f"{url}: HTTP {code}")


def _read_bounded(
    reply: httpx.Response, url: str, max_bytes: int, started: float, deadline_s: float
) -> bytes:
    """The body; refused past ``max_bytes``, or while still arriving ``deadline_s`` after the
    request began (``started``, on the monotonic clock)."""
    declared = reply.headers.get("Content-Length")
    if declared and declared.isdigit() and int(declared) > max_bytes:
        raise FeedTooLarge(f"{url}: {declared} bytes is over the {max_bytes}-byte limit")
    chunks, size = [], 0
    for chunk in reply.iter_bytes():
        size += len(chunk)
        if size > max_bytes:
            raise FeedTooLarge(f"{url}: body is over the {max_bytes}-byte limit")
        if time.monotonic() - started > deadline_s:
            raise FeedUnavailable(f"{url}: timed out: body still arriving after {deadline_s:g} s")
        chunks.append(chunk)
    return b"".join(chunks)
