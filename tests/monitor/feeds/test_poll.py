"""Polling end to end: real captured documents served through respx, stored in SQLite and
PostgreSQL."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime

import httpx
import pytest
import respx
from sqlalchemy import func, select
from sqlalchemy.orm import Session, sessionmaker

from monitor.config import parse_config
from monitor.db.models import Feed, Incident, IncidentUpdate
from monitor.feeds.poll import poll_feed
from monitor.feeds.service import feeds_to_poll, sync_catalog
from tests.support import FIXTURES as SHARED_FIXTURES

FEEDS = SHARED_FIXTURES / "feeds"
GCP_URL = "https://status.cloud.google.com/incidents.json"
AZURE_URL = "https://azure.status.microsoft/en-us/status/feed/"
NOW = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)


@pytest.fixture
def client() -> Iterator[httpx.Client]:
    with httpx.Client(timeout=2) as http:
        yield http


def feed_id(sessions: sessionmaker[Session], provider: str, config: str = "") -> int:
    with sessions() as session, session.begin():
        sync_catalog(session, parse_config(config))
        [found] = feeds_to_poll(session, provider)
    return found


def counts(sessions: sessionmaker[Session]) -> tuple[int, int]:
    with sessions() as session:
        incidents = session.scalar(select(func.count()).select_from(Incident))
        updates = session.scalar(select(func.count()).select_from(IncidentUpdate))
    return int(incidents or 0), int(updates or 0)


def feed_row(sessions: sessionmaker[Session], fid: int) -> Feed:
    with sessions() as session:
        return session.get_one(Feed, fid)


GCP_DOC = (FEEDS / "gcp" / "gcp-incidents-excerpt-2022-07.json").read_bytes()
GCP_UPDATES = sum(len(i["updates"]) for i in json.loads(GCP_DOC))


@respx.mock
def test_first_poll_stores_then_304_changes_nothing(
    sessions: sessionmaker[Session], client: httpx.Client
) -> None:
    fid = feed_id(sessions, "gcp")
    route = respx.get(GCP_URL).mock(
        side_effect=[
            httpx.Response(200, content=GCP_DOC, headers={"ETag": '"v1"'}),
            httpx.Response(304),
        ]
    )
    first = poll_feed(sessions, client, fid, now=NOW)
    assert (first.result, first.counts.new, first.counts.updates_added) == (
        "stored",
        5,
        GCP_UPDATES,
    )
    assert counts(sessions) == (5, GCP_UPDATES)
    assert feed_row(sessions, fid).etag == '"v1"'

    second = poll_feed(sessions, client, fid, now=NOW)
    assert second.result == "not_modified"
    assert route.calls[1].request.headers["If-None-Match"] == '"v1"'
    assert counts(sessions) == (5, GCP_UPDATES)


@respx.mock
def test_the_same_document_without_validators_is_recognised_as_unchanged(
    sessions: sessionmaker[Session], client: httpx.Client
) -> None:
    fid = feed_id(sessions, "gcp")
    respx.get(GCP_URL).mock(return_value=httpx.Response(200, content=GCP_DOC))
    assert poll_feed(sessions, client, fid, now=NOW).result == "stored"
    assert poll_feed(sessions, client, fid, now=NOW).result == "unchanged"
    assert counts(sessions) == (5, GCP_UPDATES)


def with_new_update(doc: bytes) -> bytes:
    """The GCP document with one more update on its first incident, which is now reopened."""
    incidents = json.loads(doc)
    first = incidents[0]
    extra = dict(first["updates"][0])
    extra.update(
        created="2022-07-02T09:00:00+00:00",
        modified="2022-07-02T09:00:00+00:00",
        when="2022-07-02T09:00:00+00:00",
        text="We are seeing a recurrence.",
    )
    first["updates"].insert(0, extra)
    first["external_desc"] = "Renamed by the provider"
    return json.dumps(incidents).encode()


@respx.mock
def test_a_changed_incident_is_updated_in_place_and_its_new_update_appended_once(
    sessions: sessionmaker[Session], client: httpx.Client
) -> None:
    fid = feed_id(sessions, "gcp")
    changed = with_new_update(GCP_DOC)
    respx.get(GCP_URL).mock(
        side_effect=[
            httpx.Response(200, content=GCP_DOC),
            httpx.Response(200, content=changed),
            httpx.Response(200, content=changed + b" "),  # same incidents, different bytes
        ]
    )
    poll_feed(sessions, client, fid, now=NOW)
    second = poll_feed(sessions, client, fid, now=NOW)
    assert (second.counts.new, second.counts.changed, second.counts.updates_added) == (0, 1, 1)
    third = poll_feed(sessions, client, fid, now=NOW)
    assert (third.result, third.counts.anything) == ("stored", False)
    assert counts(sessions) == (5, GCP_UPDATES + 1)
    with sessions() as session:
        titles = session.scalars(select(Incident.title).where(Incident.title.like("Renamed%")))
        assert list(titles) == ["Renamed by the provider"]


@pytest.mark.parametrize(
    ("reply", "transient", "message"),
    [
        pytest.param(httpx.Response(500), True, "HTTP 500", id="server-error"),
        pytest.param(httpx.Response(429), True, "HTTP 429", id="rate-limited"),
        pytest.param(httpx.ReadTimeout("slow"), True, "timed out", id="timeout"),
        pytest.param(httpx.ConnectError("refused"), True, "ConnectError", id="refused"),
        pytest.param(httpx.Response(404), False, "HTTP 404", id="not-found"),
        pytest.param(
            httpx.Response(200, content=b"<html>oops</html>"),
            False,
            "got HTML or XML where JSON was expected",
            id="html-instead-of-json",
        ),
        pytest.param(
            httpx.Response(200, content=b'[{"id": '), False, "invalid JSON", id="truncated-json"
        ),
    ],
)
@respx.mock
def test_a_failed_poll_counts_on_the_feed_and_keeps_what_was_stored(
    sessions: sessionmaker[Session],
    client: httpx.Client,
    reply: httpx.Response | Exception,
    transient: bool,
    message: str,
) -> None:
    fid = feed_id(sessions, "gcp")
    route = respx.get(GCP_URL)
    route.mock(return_value=httpx.Response(200, content=GCP_DOC))
    poll_feed(sessions, client, fid, now=NOW)
    route.mock(side_effect=[reply, reply])
    outcome = poll_feed(sessions, client, fid, now=NOW)
    poll_feed(sessions, client, fid, now=NOW)
    assert (outcome.result, outcome.transient) == ("failed", transient)
    assert outcome.error is not None
    assert message in outcome.error
    feed = feed_row(sessions, fid)
    assert (feed.consecutive_failures, feed.total_failures) == (2, 2)
    assert feed.last_error is not None
    assert message in feed.last_error
    assert counts(sessions) == (5, GCP_UPDATES)

    route.mock(return_value=httpx.Response(304))
    assert poll_feed(sessions, client, fid, now=NOW).result == "not_modified"
    feed = feed_row(sessions, fid)
    assert (feed.consecutive_failures, feed.total_failures) == (0, 2)


@respx.mock
def test_an_oversized_body_is_refused_without_reading_it_all(
    sessions: sessionmaker[Session], client: httpx.Client
) -> None:
    fid = feed_id(sessions, "gcp")
    respx.get(GCP_URL).mock(return_value=httpx.Response(200, content=b"[" + b" " * 5000 + b"]"))
    outcome = poll_feed(sessions, client, fid, max_bytes=1000, now=NOW)
    assert outcome.result == "failed"
    assert outcome.error is not None
    assert "over the 1000-byte limit" in outcome.error


AZURE_DOC = (FEEDS / "azure-rss" / "checkmk-azure-status-feed-2022-11-edited.rss").read_bytes()
EMPTY_RSS = b"""<?xml version="1.0"?><rss version="2.0"><channel><title>Azure Status</title>
<link>https://azure.status.microsoft/</link><description>x</description></channel></rss>"""


@respx.mock
def test_an_incident_gone_from_a_snapshot_feed_is_closed_at_the_poll_time(
    sessions: sessionmaker[Session], client: httpx.Client
) -> None:
    fid = feed_id(sessions, "azure")
    respx.get(AZURE_URL).mock(
        side_effect=[httpx.Response(200, content=AZURE_DOC), httpx.Response(200, content=EMPTY_RSS)]
    )
    first = poll_feed(sessions, client, fid, now=NOW)
    assert first.counts.new == 3
    later = datetime(2026, 11, 30, 12, 2, tzinfo=UTC)
    second = poll_feed(sessions, client, fid, now=later)
    assert second.counts.closed_by_absence == 3
    with sessions() as session:
        rows = list(session.execute(select(Incident.status, Incident.resolved_at)))
    assert rows == [("resolved", later)] * 3


@respx.mock
def test_relevance_follows_the_configured_regions_and_the_targets(
    sessions: sessionmaker[Session], client: httpx.Client
) -> None:
    fid = feed_id(sessions, "gcp", "providers: [{slug: gcp, regions: [us-west2]}]")
    respx.get(GCP_URL).mock(return_value=httpx.Response(200, content=GCP_DOC))
    poll_feed(sessions, client, fid, now=NOW)
    with sessions() as session:
        relevant = {r.source_id: r.relevant for r in session.scalars(select(Incident))}
        regions = {r.source_id: r.regions for r in session.scalars(select(Incident))}
    for source_id, is_relevant in relevant.items():
        touches = "us-west2" in regions[source_id] or not regions[source_id]
        assert is_relevant == touches, source_id
    assert any(relevant.values())
    assert not all(relevant.values())
