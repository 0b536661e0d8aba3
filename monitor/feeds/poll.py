"""Polling one feed: fetch (no transaction open), then parse and store in one transaction; a
failure is counted on the feed and never touches stored incidents."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from datetime import datetime

import httpx
from sqlalchemy import select
from sqlalchemy.orm import Session, sessionmaker

from monitor.db.base import utcnow
from monitor.db.models import Feed, Provider
from monitor.errors import PermanentError, TransientError
from monitor.events import emitting
from monitor.feeds.fetch import MAX_FEED_BYTES, fetch
from monitor.feeds.kinds import feed_kind, is_snapshot
from monitor.feeds.store import StoreCounts, store_incidents


@dataclass(frozen=True, slots=True)
class PollOutcome:
    """What one poll did. ``result`` is stored | not_modified | unchanged | failed | gone."""

    feed_id: int
    provider: str
    kind: str
    url: str
    result: str
    counts: StoreCounts = field(default_factory=StoreCounts)
    incidents_in_document: int = 0
    error: str | None = None
    transient: bool = False

    def to_json(self) -> dict[str, object]:
        return {
            "provider": self.provider,
            "kind": self.kind,
            "url": self.url,
            "result": self.result,
            "incidents": self.incidents_in_document,
            "new": self.counts.new,
            "changed": self.counts.changed,
            "updates_added": self.counts.updates_added,
            "closed": self.counts.closed_by_absence,
            "error": self.error,
        }


@dataclass(frozen=True, slots=True)
class _FeedView:
    id: int
    provider: str
    kind: str
    url: str
    etag: str | None
    last_modified: str | None
    content_hash: str | None


@dataclass(frozen=True, slots=True)
class _Validators:
    """What lets the next poll skip an unchanged document."""

    etag: str | None
    last_modified: str | None
    content_hash: str | None


def poll_feed(
    sessions: sessionmaker[Session],
    client: httpx.Client,
    feed_id: int,
    *,
    max_bytes: int = MAX_FEED_BYTES,
    now: datetime | None = None,
) -> PollOutcome:
    """Poll feed ``feed_id`` once and commit what it found (or the failure)."""
    view = _load(sessions, feed_id)
    if view is None:
        return PollOutcome(feed_id, "?", "?", "?", "gone")
    try:
        return _poll(sessions, client, view, max_bytes, now)
    except (TransientError, PermanentError) as exc:
        _record_failure(sessions, view, str(exc), now or utcnow())
        transient = isinstance(exc, TransientError)
        return _outcome(view, "failed", error=str(exc), transient=transient)


def _poll(
    sessions: sessionmaker[Session],
    client: httpx.Client,
    view: _FeedView,
    max_bytes: int,
    now: datetime | None,
) -> PollOutcome:
    fetched = fetch(
        client, view.url, etag=view.etag, last_modified=view.last_modified, max_bytes=max_bytes
    )
    at = now or utcnow()
    digest = hashlib.sha256(fetched.body).hexdigest() if fetched.body is not None else None
    validators = _Validators(fetched.etag, fetched.last_modified, digest or view.content_hash)
    if fetched.body is None or digest == view.content_hash:
        with sessions() as session, session.begin():
            _mark_success(session, view, at, validators, changed=False)
        return _outcome(view, "not_modified" if fetched.body is None else "unchanged")
    incidents = feed_kind(view.kind).parse(fetched.body, view.provider)
    snapshot = is_snapshot(view.kind, view.url)
    with sessions() as session, session.begin():
        provider = session.scalars(select(Provider).where(Provider.slug == view.provider)).one()
        counts = store_incidents(
            session, provider, view.id, incidents, seen_at=at, snapshot=snapshot
        )
        _mark_success(session, view, at, validators, changed=counts.anything)
    return _outcome(view, "stored", counts, len(incidents))


def _outcome(
    view: _FeedView,
    result: str,
    counts: StoreCounts | None = None,
    seen: int = 0,
    *,
    error: str | None = None,
    transient: bool = False,
) -> PollOutcome:
    counts = counts or StoreCounts()
    return PollOutcome(
        view.id, view.provider, view.kind, view.url, result, counts, seen, error, transient
    )


def _load(sessions: sessionmaker[Session], feed_id: int) -> _FeedView | None:
    with sessions() as session:
        row = session.execute(
            select(Feed, Provider.slug).join(Provider).where(Feed.id == feed_id)
        ).one_or_none()
    if row is None:
        return None
    feed, slug = row
    return _FeedView(
        feed.id, slug, feed.kind, feed.url, feed.etag, feed.last_modified, feed.content_hash
    )


def _mark_success(
    session: Session, view: _FeedView, at: datetime, validators: _Validators, *, changed: bool
) -> None:
    feed = session.get_one(Feed, view.id)
    if feed.consecutive_failures:  # the end of a failing episode (counted in the database,
        # so a retry, another worker or a restart does not make it a second one)
        since = feed.last_success_at
        down_s = (at - since).total_seconds() if since is not None else None
        emitting.feed_back(session, view.provider, view.url, feed.consecutive_failures, down_s)
    feed.etag, feed.last_modified = validators.etag, validators.last_modified
    feed.content_hash = validators.content_hash
    feed.last_polled_at = feed.last_success_at = at
    feed.consecutive_failures = 0
    if changed:
        feed.last_changed_at = at


def _record_failure(
    sessions: sessionmaker[Session], view: _FeedView, error: str, at: datetime
) -> None:
    with sessions() as session, session.begin():
        feed = session.get_one(Feed, view.id)
        if not feed.consecutive_failures:  # the first failure of an episode
            emitting.feed_failing(session, view.provider, view.url, error)
        feed.last_polled_at = at
        feed.consecutive_failures += 1
        feed.total_failures += 1
        feed.last_error = error[:2000]
