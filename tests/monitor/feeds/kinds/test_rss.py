from __future__ import annotations

import json
from datetime import UTC, datetime
from html import escape
from pathlib import Path

import pytest
from hypothesis import given

from monitor.errors import FeedParseError
from monitor.feeds.kinds import rss
from monitor.feeds.model import Incident, stable_id
from tests.monitor.feeds.fuzzing import (
    FUZZ,
    fuzz_raises_only_parse_errors,
    parse_or_error,
    spliced,
    utc,
)
from tests.support import FIXTURES

HISTORY = FIXTURES / "feeds" / "statuspage-history"
GITHUB_2026 = (HISTORY / "github-history-2026-08.atom").read_bytes()
GITHUB_MAINTENANCE = (HISTORY / "github-history-maintenance-2025-07.atom").read_bytes()
TAG = "tag:www.githubstatus.com,2005:Incident/"


def rss_doc(*items: str, title: str = "Acme Status", encoding: str = "UTF-8") -> str:
    channel_title = f"<title>{title}</title>" if title else ""
    return (
        f'<?xml version="1.0" encoding="{encoding}"?><rss version="2.0"><channel>'
        f"{channel_title}{''.join(items)}</channel></rss>"
    )


def rss_item(
    title: str = "Elevated API errors",
    description: str = "<p>We are investigating.</p>",
    guid: str | None = "acme-1",
    link: str | None = "https://status.acme.test/incidents/1",
    pub_date: str | None = "Tue, 01 Sep 2026 10:00:00 GMT",
) -> str:
    parts = [f"<title>{escape(title)}</title>", f"<description>{escape(description)}</description>"]
    parts += [f"<guid>{guid}</guid>"] if guid else []
    parts += [f"<link>{link}</link>"] if link else []
    parts += [f"<pubDate>{pub_date}</pubDate>"] if pub_date else []
    return f"<item>{''.join(parts)}</item>"


def atom_doc(*entries: str, updated: str | None = "2026-01-01T01:00:00Z") -> bytes:
    feed_updated = f"<updated>{updated}</updated>" if updated else ""
    return (
        '<?xml version="1.0" encoding="UTF-8"?><feed xmlns="http://www.w3.org/2005/Atom">'
        f"<id>tag:status.acme.test,2005:/history</id><title>Acme Status - Incident History</title>"
        f"{feed_updated}{''.join(entries)}</feed>"
    ).encode()


def atom_entry(content: str, published: str | None = "2026-01-01T01:00:00Z") -> str:
    dates = f"<published>{published}</published><updated>{published}</updated>" if published else ""
    return (
        f"<entry><id>tag:status.acme.test,2005:Incident/1</id>{dates}"
        '<link rel="alternate" type="text/html" href="https://status.acme.test/incidents/abc"/>'
        f'<title>Database errors</title><content type="html">{escape(content)}</content></entry>'
    )


def stamped(month_day: str, time: str, word: str, text: str) -> str:
    month, day = month_day.split()
    return (
        f"<p><small>{month} <var data-var='date'>{day}</var>, <var data-var='time'>{time}</var> UTC"
        f"</small><br><strong>{word}</strong> - {text}</p>"
    )


def by_id(incidents: list[Incident], number: str) -> Incident:
    return next(incident for incident in incidents if incident.source_id == TAG + number)


def test_github_history_gives_one_incident_per_entry_in_document_order() -> None:
    incidents = rss.parse(GITHUB_2026)

    assert len(incidents) == 25
    assert incidents[0].source_id == TAG + "31233568"
    assert incidents[-1].source_id == TAG + "30991819"
    assert len({incident.source_id for incident in incidents}) == 25


def test_a_long_github_incident_keeps_its_twelve_updates_oldest_first() -> None:
    incident = rss.parse(GITHUB_2026)[0]

    assert incident.title == "Intermittent failures creating agent tasks"
    assert incident.url == "https://www.githubstatus.com/incidents/bhbcjn4n3jzp"
    assert incident.provider == "github"
    assert (incident.started_at, incident.resolved_at) == (
        utc(2026, 8, 20, 14, 43),
        utc(2026, 8, 21, 0, 37),
    )
    assert [u.status for u in incident.updates] == ["investigating"] * 11 + ["resolved"]
    assert [u.at for u in incident.updates[:3]] == [
        utc(2026, 8, 20, 14, 43),
        utc(2026, 8, 20, 14, 51),
        utc(2026, 8, 20, 15, 1),
    ]
    assert incident.updates[0].body == (
        "We are investigating reports of impacted performance for some GitHub services."
    )
    assert incident.updates[-1].body.startswith("This incident has been resolved. Thank you")


def test_an_update_entry_carries_the_monitoring_state_before_it() -> None:
    incident = by_id(rss.parse(GITHUB_2026), "31199495")

    assert [(u.at, u.status) for u in incident.updates] == [
        (utc(2026, 8, 18, 7, 40), "investigating"),
        (utc(2026, 8, 18, 7, 40), "monitoring"),
        (utc(2026, 8, 18, 10, 41), "monitoring"),
        (utc(2026, 8, 18, 11, 24), "monitoring"),
        (utc(2026, 8, 18, 11, 42), "resolved"),
    ]


@pytest.mark.parametrize(
    ("number", "title", "url_slug", "started_at", "resolved_at", "update_count"),
    [
        pytest.param(
            "31200202",
            "Incident with Actions",
            "gx7js8bd0jpz",
            utc(2026, 8, 18, 9, 36),
            utc(2026, 8, 18, 10, 23),
            2,
            id="two-updates",
        ),
        pytest.param(
            "31193766",
            "Incident with GitHub.com",
            None,
            utc(2026, 8, 17, 13, 40),
            utc(2026, 8, 17, 21, 15),
            36,
            id="thirty-six-updates",
        ),
        pytest.param(
            "31107739",
            "Incident with Actions",
            None,
            utc(2026, 8, 6, 15, 22),
            utc(2026, 8, 7, 2, 4),
            24,
            id="over-midnight",
        ),
        pytest.param(
            "30991819",
            "Incident with Actions",
            "s65j9gslmfm8",
            utc(2026, 7, 25, 8, 59),
            utc(2026, 7, 25, 9, 25),
            4,
            id="last-entry",
        ),
    ],
)
def test_github_incidents_start_and_resolve_at_their_first_and_resolving_updates(
    number: str,
    title: str,
    url_slug: str | None,
    started_at: datetime,
    resolved_at: datetime,
    update_count: int,
) -> None:
    incident = by_id(rss.parse(GITHUB_2026), number)

    assert incident.title == title
    if url_slug:
        assert incident.url == f"https://www.githubstatus.com/incidents/{url_slug}"
    assert (incident.started_at, incident.resolved_at) == (started_at, resolved_at)
    assert len(incident.updates) == update_count


def test_the_last_github_entry_goes_investigating_monitoring_resolved() -> None:
    incident = rss.parse(GITHUB_2026)[-1]

    assert [(u.at, u.status) for u in incident.updates] == [
        (utc(2026, 7, 25, 8, 59), "investigating"),
        (utc(2026, 7, 25, 9, 13), "monitoring"),
        (utc(2026, 7, 25, 9, 20), "monitoring"),
        (utc(2026, 7, 25, 9, 25), "resolved"),
    ]


def test_every_github_incident_is_a_resolved_minor_incident_without_components() -> None:
    incidents = rss.parse(GITHUB_2026)

    # GitHub's history.atom carries no "This incident affected" line and no impact.
    assert {(i.provider, i.status, i.impact, i.is_maintenance) for i in incidents} == {
        ("github", "resolved", "minor", False)
    }
    assert all(i.components == () and i.regions == () for i in incidents)
    assert all(i.resolved_at == i.updates[-1].at for i in incidents)
    assert all(i.started_at == i.updates[0].at for i in incidents)


def test_statuspage_maintenance_goes_scheduled_in_progress_completed() -> None:
    incident = rss.parse(GITHUB_MAINTENANCE)[-1]

    assert incident.source_id == TAG + "25303483"
    assert incident.title == "Codespaces Scheduled Maintenance"
    assert (incident.is_maintenance, incident.impact, incident.status) == (
        True,
        "maintenance",
        "completed",
    )
    assert [(u.at, u.status) for u in incident.updates] == [
        (utc(2025, 5, 29, 21, 1), "scheduled"),
        (utc(2025, 5, 29, 21, 30), "in_progress"),
        (utc(2025, 5, 31, 4, 30), "completed"),
    ]
    assert (incident.started_at, incident.resolved_at) == (
        utc(2025, 5, 29, 21, 1),
        utc(2025, 5, 31, 4, 30),
    )
    assert incident.updates[1].body == (
        "Scheduled maintenance is currently in progress. We will provide updates as necessary."
    )


def test_the_maintenance_fixture_holds_one_maintenance_among_incidents() -> None:
    incidents = rss.parse(GITHUB_MAINTENANCE)

    assert len(incidents) == 25
    assert [i.title for i in incidents if i.is_maintenance] == ["Codespaces Scheduled Maintenance"]


def test_a_backfilled_incident_with_only_a_resolved_update_starts_as_it_resolves() -> None:
    incident = by_id(rss.parse(GITHUB_MAINTENANCE), "25644426")

    assert incident.title == "Incident With Actions"
    assert [(u.at, u.status) for u in incident.updates] == [(utc(2025, 6, 30, 19, 0), "resolved")]
    assert incident.started_at == incident.resolved_at == utc(2025, 6, 30, 19, 0)


def test_components_come_from_the_affected_line_and_stay_out_of_the_updates() -> None:
    content = (
        stamped("Jan 1", "00:45", "Resolved", "Fixed.")
        + stamped("Dec 31", "23:30", "Investigating", "Looking.")
        + "<p>This incident affected: Git Operations and API Requests.</p>"
    )

    incident = rss.parse(atom_doc(atom_entry(content)))[0]

    assert incident.components == ("Git Operations", "API Requests")
    assert [u.body for u in incident.updates] == ["Looking.", "Fixed."]


def test_december_updates_of_a_january_item_belong_to_the_year_before() -> None:
    content = stamped("Jan 1", "00:45", "Resolved", "Fixed.") + stamped(
        "Dec 31", "23:30", "Investigating", "Looking."
    )

    incident = rss.parse(atom_doc(atom_entry(content, published="2026-01-01T00:45:10Z")))[0]

    assert (incident.started_at, incident.resolved_at) == (
        utc(2025, 12, 31, 23, 30),
        utc(2026, 1, 1, 0, 45),
    )


def test_an_entry_without_dates_reads_its_history_by_the_feed_time() -> None:
    content = stamped("Mar 1", "10:00", "Investigating", "Looking.")

    incident = rss.parse(
        atom_doc(atom_entry(content, published=None), updated="2026-03-02T00:00:00Z")
    )[0]

    assert [(u.at, u.status) for u in incident.updates] == [(utc(2026, 3, 1, 10), "investigating")]
    assert (incident.status, incident.started_at, incident.resolved_at) == (
        "investigating",
        utc(2026, 3, 1, 10),
        None,
    )


def test_an_entry_with_no_time_anywhere_has_no_datable_updates() -> None:
    content = stamped("Mar 1", "10:00", "Resolved", "Fixed.")

    incident = rss.parse(atom_doc(atom_entry(content, published=None), updated=None))[0]

    assert (incident.updates, incident.started_at, incident.status) == ((), None, "investigating")


def test_a_plain_item_is_one_update_at_its_own_time_with_html_stripped() -> None:
    item = rss_item(description="<p>Errors &amp; <b>timeouts</b> on the API.</p><br/>More soon.")

    incident = rss.parse(rss_doc(item).encode())[0]

    assert incident == Incident(
        provider="acme",
        source_id="acme-1",
        title="Elevated API errors",
        status="investigating",
        impact="minor",
        is_maintenance=False,
        started_at=utc(2026, 9, 1, 10),
        resolved_at=None,
        url="https://status.acme.test/incidents/1",
        updates=(incident.updates[0],),
    )
    assert incident.updates[0].at == utc(2026, 9, 1, 10)
    assert incident.updates[0].body == "Errors & timeouts on the API.\nMore soon."


def test_an_item_without_guid_is_identified_by_link_and_title() -> None:
    raw = rss_doc(rss_item(guid=None)).encode()

    incidents = rss.parse(raw)

    expected = stable_id("https://status.acme.test/incidents/1", "Elevated API errors")
    assert incidents[0].source_id == expected
    assert rss.parse(raw)[0].source_id == expected


def test_an_item_with_only_a_title_still_gives_an_incident() -> None:
    raw = rss_doc("<item><title>Something odd</title></item>").encode()

    incident = rss.parse(raw)[0]

    assert (incident.source_id, incident.url) == (stable_id(None, "Something odd"), None)
    assert (incident.started_at, incident.resolved_at, incident.updates) == (None, None, ())
    assert incident.status == "investigating"


@pytest.mark.parametrize(
    ("title", "description", "status", "maintenance"),
    [
        pytest.param(
            "Service is operating normally: [RESOLVED] Errors",
            "Between 1 and 2 PM...",
            "resolved",
            False,
            id="title-says-resolved",
        ),
        pytest.param(
            "API errors",
            "The issue has been resolved and the service is operating normally.",
            "resolved",
            False,
            id="body-says-it-has-been-resolved",
        ),
        pytest.param(
            "API errors",
            "Resolved - all requests succeed again.",
            "resolved",
            False,
            id="body-starts-resolved",
        ),
        pytest.param(
            "API errors",
            "We will post an update once the issue is resolved.",
            "investigating",
            False,
            id="future-resolution-is-not-resolved",
        ),
        pytest.param(
            "Scheduled maintenance: database upgrade",
            "Upgrading the database.",
            "scheduled",
            True,
            id="maintenance-title",
        ),
        pytest.param(
            "Database maintenance completed",
            "All done.",
            "completed",
            True,
            id="maintenance-completed",
        ),
        pytest.param(
            "Maintenance window",
            "The work has been completed.",
            "completed",
            True,
            id="maintenance-body-completed",
        ),
    ],
)
def test_items_without_a_history_take_their_status_from_their_words(
    title: str, description: str, status: str, maintenance: bool
) -> None:
    incident = rss.parse(rss_doc(rss_item(title=title, description=description)).encode())[0]

    assert (incident.status, incident.is_maintenance) == (status, maintenance)
    assert incident.impact == ("maintenance" if maintenance else "minor")
    closed = status in {"resolved", "completed"}
    assert incident.resolved_at == (utc(2026, 9, 1, 10) if closed else None)


@pytest.mark.parametrize(
    ("title", "impact"),
    [
        pytest.param("Major outage of the API", "critical", id="major-outage"),
        pytest.param("Partial outage in EU", "major", id="partial-outage"),
        pytest.param("Dashboard unavailable", "major", id="unavailable"),
        pytest.param("Elevated error rates", "minor", id="no-impact-words"),
    ],
)
def test_impact_comes_from_the_title_words(title: str, impact: str) -> None:
    incident = rss.parse(rss_doc(rss_item(title=title)).encode())[0]

    assert incident.impact == impact


def test_a_feed_without_a_title_defaults_to_the_kind_and_an_explicit_provider_wins() -> None:
    raw = rss_doc(rss_item(), title="").encode()

    assert rss.parse(raw)[0].provider == "rss"
    assert rss.parse(raw, provider="acme-eu")[0].provider == "acme-eu"
    assert {i.provider for i in rss.parse(GITHUB_2026, provider="gh")} == {"gh"}


@pytest.mark.parametrize(
    "raw",
    [
        pytest.param(rss_doc().encode(), id="rss"),
        pytest.param(b'<feed xmlns="http://www.w3.org/2005/Atom"></feed>', id="atom-without-title"),
        pytest.param(atom_doc(), id="atom"),
    ],
)
def test_an_empty_valid_feed_has_no_incidents(raw: bytes) -> None:
    assert rss.parse(raw) == []


@pytest.mark.parametrize(
    ("raw", "reason"),
    [
        pytest.param(b"", "empty", id="empty"),
        pytest.param(b" \r\n\t", "empty", id="whitespace"),
        pytest.param(b"\x00\xff garbage {{{", "truncated", id="garbage"),
        pytest.param(
            b"<html><head><title>502</title></head><body>Bad gateway</body></html>",
            "not an RSS or Atom feed",
            id="html-error-page",
        ),
        pytest.param(b'{"incidents": []}', "truncated", id="json"),
        pytest.param(GITHUB_2026[: len(GITHUB_2026) // 2], "truncated", id="atom-cut-in-half"),
        pytest.param(GITHUB_2026[:400], "truncated", id="cut-before-first-entry"),
        pytest.param(rss_doc(rss_item()).encode()[:-9], "truncated", id="cut-before-closing-tag"),
    ],
)
def test_unreadable_documents_raise_feed_parse_error(raw: bytes, reason: str) -> None:
    with pytest.raises(FeedParseError, match=reason) as caught:
        rss.parse(raw)

    assert caught.value.kind == "rss"


def test_bytes_naming_a_file_are_not_opened_as_one(tmp_path: Path) -> None:
    path = tmp_path / "feed.xml"
    path.write_bytes(rss_doc(rss_item()).encode())

    with pytest.raises(FeedParseError):
        rss.parse(str(path).encode())


@pytest.mark.parametrize(
    "tail",
    [pytest.param("", id="ends-at-root"), pytest.param("\n<!-- cached 12s -->\n", id="comment")],
)
def test_a_complete_feed_with_a_local_xml_error_is_still_read(tail: str) -> None:
    raw = rss_doc(rss_item(), rss_item(guid="acme-2")).replace(
        "<title>Elevated API errors</title>", "<title>Errors & timeouts</title>", 1
    )

    incidents = rss.parse((raw + tail).encode())

    assert [i.title for i in incidents] == ["Errors & timeouts", "Elevated API errors"]


@pytest.mark.parametrize(
    ("encoding", "codec", "bom"),
    [
        pytest.param("UTF-8", "utf-8", b"\xef\xbb\xbf", id="utf-8-bom"),
        pytest.param("UTF-16", "utf-16", b"", id="utf-16-bom"),
        pytest.param("UTF-16BE", "utf-16-be", b"\xfe\xff", id="utf-16-be-bom"),
        pytest.param("ISO-8859-1", "latin-1", b"", id="latin-1"),
        pytest.param("windows-1252", "cp1252", b"", id="windows-1252"),
    ],
)
def test_declared_encodings_and_byte_order_marks_are_honoured(
    encoding: str, codec: str, bom: bytes
) -> None:
    doc = rss_doc(
        rss_item(title="Dégradation réseau", description="Panne à Paris"),
        title="Café Status",
        encoding=encoding,
    )

    incident = rss.parse(bom + doc.encode(codec))[0]

    assert (incident.provider, incident.title) == ("cafe", "Dégradation réseau")
    assert incident.updates[0].body == "Panne à Paris"


def test_reparsing_the_same_bytes_gives_equal_json_ready_results() -> None:
    first, second = rss.parse(GITHUB_2026), rss.parse(GITHUB_2026)

    assert first == second
    assert json.loads(json.dumps([i.to_json() for i in first]))[0]["started_at"] == (
        "2026-08-20T14:43:00Z"
    )


SMALL_FEED = rss_doc(
    rss_item(description=stamped("Aug 21", "00:37", "Resolved", "x")),
    rss_item(guid="acme-2", description="<p>This incident affected: A (B, C) and D.</p>"),
).encode()


test_arbitrary_or_mutated_feed_bytes_give_incidents_or_feed_parse_error = (
    fuzz_raises_only_parse_errors(rss.parse, "rss", [SMALL_FEED])
)


@FUZZ
@given(spliced(SMALL_FEED, width=40))
def test_spliced_feed_bytes_give_incidents_with_utc_updates_or_feed_parse_error(
    raw: bytes,
) -> None:
    outcome = parse_or_error(rss.parse, "rss", raw)

    if isinstance(outcome, list):
        assert all(update.at.tzinfo is UTC for i in outcome for update in i.updates)
