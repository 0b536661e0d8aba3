"""GET /feed.atom as a feed reader reads it: feedparser finds no fault (bozo 0) and an entry for
an outage, a provider incident, a maintenance window and a notice, with slamon's links and the
right times; ids stay put; conditional GETs answer 304; an ended outage is never said to be
up. On SQLite and PostgreSQL."""

from __future__ import annotations

import re
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import feedparser
import pytest
from sqlalchemy import Engine
from sqlalchemy.orm import Session, sessionmaker

from monitor import tokens
from monitor.api.app import create_app
from monitor.api.deps import db_session
from monitor.api.feed import atom, urn
from monitor.db.base import utcnow
from monitor.settings import Settings
from monitor.status.feed import HISTORY, MAX_ENTRIES, FeedEntry, newest
from tests.monitor.history.conftest import incident, outage, provider, target
from tests.support import ApiClient

PUBLIC = "https://status.example.com/ops"
NOW = utcnow().replace(microsecond=0)
H = timedelta(hours=1)


def at(moment: datetime) -> tuple[int, ...]:
    """A time as feedparser's ``*_parsed`` gives it (a UTC struct_time), to compare with."""
    return tuple(moment.astimezone(UTC).timetuple())[:6]


def parsed(struct: Any) -> tuple[int, ...]:
    return tuple(struct)[:6]


@pytest.fixture
def feed_api(
    engine: Engine, sessions: sessionmaker[Session], tmp_path: Path
) -> Iterator[tuple[ApiClient, dict[str, str]]]:
    """The real app under ``PUBLIC``, a config with one maintenance window under way, and an
    admin token's headers."""
    config = tmp_path / "slamon.yaml"
    config.write_text(
        "maintenance:\n"
        f"  - {{name: rack swap, start: '{(NOW - 2 * H).isoformat()}',"
        f" end: '{(NOW + H).isoformat()}', provider: aws}}\n"
        f"  - {{name: next month, start: '{(NOW + 48 * H).isoformat()}',"
        f" end: '{(NOW + 50 * H).isoformat()}', provider: aws}}\n"
    )
    settings = Settings(  # type: ignore[call-arg]
        database_url=engine.url.render_as_string(hide_password=False),
        config=config,
        state_dir=tmp_path / "state",
        public_url=PUBLIC,
    )
    app = create_app(settings)

    def session_in_test_transaction() -> Iterator[Session]:
        with sessions() as session:
            yield session

    app.dependency_overrides[db_session] = session_in_test_transaction
    with sessions() as session:
        admin = tokens.create(session, "ops", "admin")
        session.commit()
    with ApiClient(app) as client:
        yield client, {"Authorization": f"Bearer {admin}"}


def seed(sessions: sessionmaker[Session]) -> None:
    with sessions() as session:
        gpu = target(session, "gpu-1", provider="aws")
        outage(session, gpu, NOW - 5 * H, NOW - 4 * H)  # ended
        outage(session, gpu, NOW - H, None)  # still open
        outage(session, gpu, NOW - 40 * 24 * H, NOW - 39 * 24 * H)  # too old to tell
        aws = provider(session, "aws")
        incident(
            session,
            aws,
            "inc-1",
            NOW - 3 * H,
            NOW - 2 * H,
            title="EC2 \x0bdegraded",
            regions=["us-east-1"],
            url="https://health.aws.amazon.com/x",
        )
        incident(session, aws, "inc-2", NOW - 3 * H, None, relevant=False, title="elsewhere")
        session.commit()


def by_kind(document: Any) -> dict[str, list[Any]]:
    found: dict[str, list[Any]] = {}
    for entry in document.entries:
        found.setdefault(entry.tags[0]["term"], []).append(entry)
    return found


def test_the_feed_tells_outages_incidents_maintenance_and_notices(
    feed_api: tuple[ApiClient, dict[str, str]], sessions: sessionmaker[Session]
) -> None:
    api, admin = feed_api
    seed(sessions)
    starts = NOW + 24 * H
    posted = api.post(
        "/api/v1/notices",
        headers=admin,
        json={
            "title": "Fabric swap",
            "body": "Jobs on pool a100 will pause.",
            "kind": "maintenance",
            "starts_at": starts.isoformat(),
            "ends_at": (starts + 2 * H).isoformat(),
            "pool": "a100",
        },
    ).json()

    answer = api.get("/feed.atom")
    assert answer.status_code == 200
    assert answer.headers["content-type"] == "application/atom+xml; charset=utf-8"
    document = feedparser.parse(answer.content)
    assert document.bozo == 0, document.get("bozo_exception")
    assert document.version == "atom10"
    feed = document.feed
    assert feed.title == "slamon: incidents, outages, maintenance and notices"
    assert [(link.rel, link.href) for link in feed.links] == [
        ("self", f"{PUBLIC}/feed.atom"),
        ("alternate", f"{PUBLIC}/"),
    ]
    assert feed.author == "slamon"
    assert re.fullmatch(r"urn:uuid:[0-9a-f-]{36}", feed.id)

    kinds = by_kind(document)
    outages = {e.title: e for e in kinds["outage"]}
    assert set(outages) == {"gpu-1 down", "gpu-1 was down for 1 h"}
    ended, still = outages["gpu-1 was down for 1 h"], outages["gpu-1 down"]
    assert ended.link == still.link == f"{PUBLIC}/targets/gpu-1"
    assert (parsed(ended.published_parsed), parsed(ended.updated_parsed)) == (
        at(NOW - 5 * H),
        at(NOW - 4 * H),
    )
    assert parsed(still.updated_parsed) == at(NOW - H)
    assert "still open" in still.summary
    for entry in document.entries:  # an ended outage is told as ended, never as up
        assert not re.search(r"\bup\b", entry.title + " " + entry.summary), entry.title

    [told] = kinds["incident"]  # the irrelevant one is not the team's
    assert told.title == "aws: EC2 degraded"  # the vertical tab XML cannot hold is dropped
    assert told.link == f"{PUBLIC}/providers/aws"
    assert [link.href for link in told.links if link.rel == "related"] == [
        "https://health.aws.amazon.com/x"
    ]
    assert (parsed(told.published_parsed), parsed(told.updated_parsed)) == (
        at(NOW - 3 * H),
        at(NOW - 2 * H),
    )
    assert "resolved" in told.summary
    assert "us-east-1" in told.summary

    windows = {e.title: e for e in kinds["maintenance"]}
    # the configured window under way; the one next month has not begun; the notice's own
    # window is told as the notice, once
    assert set(windows) == {"Maintenance: rack swap", "Maintenance: Fabric swap"}
    rack = windows["Maintenance: rack swap"]
    assert rack.link == f"{PUBLIC}/providers/aws"
    assert parsed(rack.updated_parsed) == at(NOW - 2 * H)
    assert "under way" in rack.summary
    notice = windows["Maintenance: Fabric swap"]
    assert notice.id == urn(f"notice/{posted['id']}")
    assert notice.link == f"{PUBLIC}/"
    assert notice.content[0].value == "Jobs on pool a100 will pause."
    assert "Upcoming" in notice.summary
    assert "pool a100" in notice.summary
    assert parsed(notice.published_parsed) == at(datetime.fromisoformat(posted["created_at"]))

    updated = [parsed(e.updated_parsed) for e in document.entries]
    assert updated == sorted(updated, reverse=True)  # newest change first
    assert parsed(feed.updated_parsed) == updated[0]
    assert [e.id for e in feedparser.parse(api.get("/feed.atom").content).entries] == [
        e.id for e in document.entries
    ]


def test_a_reader_that_has_the_feed_gets_304_until_it_changes(
    feed_api: tuple[ApiClient, dict[str, str]], sessions: sessionmaker[Session]
) -> None:
    api, admin = feed_api
    seed(sessions)
    first = api.get("/feed.atom")
    tag, modified = first.headers["etag"], first.headers["last-modified"]
    again = api.get("/feed.atom", headers={"If-None-Match": tag})
    assert (again.status_code, again.content, again.headers["etag"]) == (304, b"", tag)
    assert api.get("/feed.atom", headers={"If-Modified-Since": modified}).status_code == 304
    assert api.get("/feed.atom", headers={"If-None-Match": '"other"'}).status_code == 200

    api.post("/api/v1/notices", headers=admin, json={"title": "Quota raised"})
    changed = api.get("/feed.atom", headers={"If-None-Match": tag})
    assert changed.status_code == 200
    assert changed.headers["etag"] != tag
    assert "Notice: Quota raised" in changed.text


def test_without_a_public_url_links_are_under_the_request_base(api: ApiClient) -> None:
    document = feedparser.parse(api.get("/feed.atom").content)
    assert document.bozo == 0
    assert document.entries == []
    assert document.feed.links[0].href == "http://slamon.test/feed.atom"


def test_the_status_page_offers_the_feed(api: ApiClient) -> None:
    page = api.get("/").text
    assert re.search(r'<link rel="alternate" type="application/atom\+xml" href="feed.atom"', page)


def entry(key: str, updated: datetime) -> FeedEntry:
    return FeedEntry(key, "notice", key, "", updated, updated, "/")


def test_the_feed_keeps_the_newest_fifty_of_the_last_thirty_days() -> None:
    now = datetime(2026, 11, 30, tzinfo=UTC)
    entries = [entry(f"e{i}", now - i * H) for i in range(80)]
    entries.append(entry("old", now - HISTORY))
    kept = newest([None, *reversed(entries)], now)
    assert [e.key for e in kept] == [f"e{i}" for i in range(MAX_ENTRIES)]


def test_an_empty_feed_is_still_a_valid_one_and_the_same_all_day() -> None:
    now = datetime(2026, 11, 30, 9, 15, tzinfo=UTC)
    document = feedparser.parse(atom([], "https://s.example", now))
    # nothing changed in the thirty days the feed reaches: since the start of that day
    assert (document.bozo, document.feed.updated) == (0, "2026-10-31T00:00:00Z")
    later = atom([], "https://s.example", now + timedelta(hours=14, minutes=44))
    assert later == atom([], "https://s.example", now)  # one body, so one ETag, all day
