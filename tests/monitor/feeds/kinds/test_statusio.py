from __future__ import annotations

from datetime import datetime
from html import escape

import pytest
from hypothesis import given, settings

from monitor.errors import FeedParseError
from monitor.feeds.kinds import statusio
from monitor.feeds.model import Incident
from tests.monitor.feeds.fuzzing import (
    FUZZ,
    fuzz_raises_only_parse_errors,
    parse_or_error,
    spliced,
    utc,
)
from tests.support import FIXTURES

COREWEAVE = (FIXTURES / "feeds" / "statusio" / "coreweave-statusio-rss-2026-09.xml").read_bytes()
PAGE = "5e126e998f2f032e1f8f0f4b"


def channel(*items: str, title: str = "CoreWeave Cloud") -> bytes:
    return (
        '<?xml version="1.0" encoding="UTF-8"?><rss version="2.0"><channel>'
        f"<title><![CDATA[{title}]]></title>{''.join(items)}</channel></rss>"
    ).encode()


def item(title: str, description: str, link: str, guid: str = "6a0000000000000000000001") -> str:
    return (
        f"<item><title>{escape(title)}</title><description><![CDATA[{description}]]></description>"
        f'<link>{link}</link><guid isPermaLink="false">{guid}</guid>'
        "<pubDate>Wed, 02 Sep 2026 17:00:02 GMT</pubDate></item>"
    )


def by_guid(guid: str) -> Incident:
    return next(i for i in statusio.parse(COREWEAVE) if i.source_id == guid)


def test_coreweave_feed_holds_seven_maintenances_and_three_incidents_in_order() -> None:
    incidents = statusio.parse(COREWEAVE)

    assert [(i.source_id, i.is_maintenance) for i in incidents] == [
        ("6a9626e8892d7304f2747918", True),
        ("6a97846ff6933c04d812dc34", False),
        ("6a91bf18471513477fa49258", True),
        ("6a91c1f80d937e47612f7387", True),
        ("6a91d05296d41a47784d96e1", True),
        ("6a91d8ddf6933c04d812da67", False),
        ("6a8fb0f16f989604d7b0842f", False),
        ("6a8cd2ad495e3647627def0d", True),
        ("6a85c13dcfac4447738b2ede", True),
        ("6a8ccfbf4d52214768b5638a", True),
    ]
    assert {i.provider for i in incidents} == {"coreweave"}


@pytest.mark.parametrize(
    ("guid", "status", "started_at", "resolved_at", "regions"),
    [
        pytest.param(
            "6a9626e8892d7304f2747918",
            "in_progress",
            utc(2026, 9, 1, 1, 14),
            None,
            ("us-east-02b",),
            id="network-us-east-02b-active",
        ),
        pytest.param(
            "6a91bf18471513477fa49258",
            "completed",
            utc(2026, 8, 28, 17, 2),
            utc(2026, 9, 1, 19),
            ("us-east-13a",),
            id="network-us-east-13a-done",
        ),
        pytest.param(
            "6a91c1f80d937e47612f7387",
            "completed",
            utc(2026, 8, 28, 17, 14),
            utc(2026, 9, 1, 19),
            ("us-east-02a",),
            id="network-us-east-02a-done",
        ),
        pytest.param(
            "6a91d05296d41a47784d96e1",
            "in_progress",
            utc(2026, 8, 28, 18, 15),
            None,
            ("us-east-04a",),
            id="electrical-us-east-04a-active",
        ),
        pytest.param(
            "6a8cd2ad495e3647627def0d",
            "completed",
            utc(2026, 8, 24, 23, 24),
            utc(2026, 8, 27, 17),
            ("us-central-06a",),
            id="network-us-central-06a-done",
        ),
        pytest.param(
            "6a85c13dcfac4447738b2ede",
            "in_progress",
            utc(2026, 8, 19, 14, 44),
            None,
            ("us-east-08a",),
            id="cni-us-east-08a-extended",
        ),
        pytest.param(
            "6a8ccfbf4d52214768b5638a",
            "completed",
            utc(2026, 8, 24, 23, 11),
            utc(2026, 8, 27, 11),
            ("eu-south-4a",),
            id="network-eu-south-4a-done",
        ),
    ],
)
def test_maintenances_run_from_their_announcement_to_their_completion(
    guid: str,
    status: str,
    started_at: datetime,
    resolved_at: datetime | None,
    regions: tuple[str, ...],
) -> None:
    maintenance = by_guid(guid)

    assert (maintenance.impact, maintenance.status) == ("maintenance", status)
    assert (maintenance.started_at, maintenance.resolved_at) == (started_at, resolved_at)
    assert maintenance.regions == regions
    assert maintenance.url == f"https://status.io/pages/maintenance/{PAGE}/{guid}"


def test_a_maintenance_goes_scheduled_active_completed() -> None:
    maintenance = by_guid("6a8ccfbf4d52214768b5638a")

    assert maintenance.title == "Scheduled CoreWeave Network Maintenance - EU-SOUTH-4A"
    assert [(u.at, u.status, u.body) for u in maintenance.updates[1:]] == [
        (utc(2026, 8, 27, 9, 30), "in_progress", "This maintenance has started."),
        (utc(2026, 8, 27, 11), "completed", "This maintenance is complete."),
    ]
    assert maintenance.updates[0].status == "scheduled"
    assert maintenance.updates[0].body.startswith(
        "CoreWeave will be performing scheduled InfiniBand network maintenance on Thursday, "
        "August 27, 2026, from 5:30 AM ET (9:30 AM UTC) to 7:00 AM ET (11:00 AM UTC) in "
        "EU-SOUTH-4A\nLocation:\nEU-SOUTH-4A\nDuring this window"
    )


def test_an_extended_maintenance_stays_in_progress_through_repeated_active_updates() -> None:
    maintenance = by_guid("6a85c13dcfac4447738b2ede")

    assert maintenance.title == "Scheduled CoreWeave Maintenance - US-EAST-08A"
    assert [(u.at, u.status) for u in maintenance.updates] == [
        (utc(2026, 8, 19, 14, 44), "scheduled"),
        (utc(2026, 8, 25, 15, 24), "in_progress"),
        (utc(2026, 8, 27, 15, 22), "in_progress"),
    ]
    assert maintenance.updates[-1].body == "This maintenance is extended till September 4th, 2026."


@pytest.mark.parametrize(
    ("guid", "title", "status", "started_at", "resolved_at", "regions"),
    [
        pytest.param(
            "6a97846ff6933c04d812dc34",
            "Degraded Grafana Metrics Performance — US-EAST",
            "identified",
            utc(2026, 9, 2, 2, 5),
            None,
            ("us-east",),
            id="grafana-open",
        ),
        pytest.param(
            "6a91d8ddf6933c04d812da67",
            "Storage Service Degradation",
            "resolved",
            utc(2026, 8, 28, 18, 52),
            utc(2026, 8, 28, 21, 4),
            ("us-east-13a",),
            id="storage-region-in-body",
        ),
        pytest.param(
            "6a8fb0f16f989604d7b0842f",
            "Object Storage Performance Degradation in US-WEST-01A",
            "resolved",
            utc(2026, 8, 27, 3, 37),
            utc(2026, 8, 27, 20, 47),
            ("us-west-01a",),
            id="object-storage-reopened",
        ),
    ],
)
def test_incidents_are_read_with_their_status_times_and_regions(
    guid: str,
    title: str,
    status: str,
    started_at: datetime,
    resolved_at: datetime | None,
    regions: tuple[str, ...],
) -> None:
    incident = by_guid(guid)

    assert (incident.title, incident.status, incident.is_maintenance) == (title, status, False)
    assert (incident.started_at, incident.resolved_at) == (started_at, resolved_at)
    assert incident.regions == regions
    assert incident.impact == "minor"
    assert incident.url == f"https://status.io/pages/incident/{PAGE}/{guid}"


def test_a_reopened_incident_keeps_every_update_in_order() -> None:
    incident = by_guid("6a8fb0f16f989604d7b0842f")

    assert [(u.at, u.status) for u in incident.updates] == [
        (utc(2026, 8, 27, 3, 37), "investigating"),
        (utc(2026, 8, 27, 9, 3), "identified"),
        (utc(2026, 8, 27, 10, 49), "monitoring"),
        (utc(2026, 8, 27, 13, 19), "investigating"),
        (utc(2026, 8, 27, 19, 28), "monitoring"),
        (utc(2026, 8, 27, 20, 47), "resolved"),
    ]


def test_update_bodies_are_plain_text_with_line_breaks() -> None:
    incident = by_guid("6a91d8ddf6933c04d812da67")

    assert incident.updates[0].body.startswith(
        "Hello,\nWe are actively investigating an issue that is impacting our storage services in "
        "US-EAST-13A.\nAs the situation evolves"
    )
    assert incident.updates[0].body.endswith("Thank you,\nCoreWeave Support")
    assert incident.updates[2].body == (
        "We believe the issue has been mitigated, and we are continuing to monitor the affected "
        "services.\nIf you are experiencing an issue or have any further questions please reach "
        "out to support@coreweave.com."
    )


@pytest.mark.parametrize(
    ("link", "title", "words", "maintenance", "status"),
    [
        pytest.param(
            f"https://status.io/pages/maintenance/{PAGE}/1",
            "Fabric work",
            ("Investigating",),
            True,
            "in_progress",
            id="maintenance-link-wins",
        ),
        pytest.param(
            f"https://status.io/pages/incident/{PAGE}/1",
            "Maintenance side effects",
            ("Investigating",),
            False,
            "investigating",
            id="incident-link-wins",
        ),
        pytest.param(
            "https://status.example.test/1",
            "Fabric work",
            ("Scheduled",),
            True,
            "scheduled",
            id="no-path-history-words",
        ),
        pytest.param(
            "https://status.example.test/1",
            "Fabric work",
            ("Investigating",),
            False,
            "investigating",
            id="no-path-incident",
        ),
    ],
)
def test_the_link_path_tells_maintenance_from_incident(
    link: str, title: str, words: tuple[str, ...], maintenance: bool, status: str
) -> None:
    history = "".join(
        f"<small>August 27, 2026 9:3{n}AM UTC</small><br /><b>{word}</b> - text<br /><br />"
        for n, word in enumerate(words)
    )

    incident = statusio.parse(channel(item(title, history, link)))[0]

    assert (incident.is_maintenance, incident.status) == (maintenance, status)
    assert incident.impact == ("maintenance" if maintenance else "minor")


@pytest.mark.parametrize(
    ("texts", "codes"),
    [
        pytest.param(
            ("Network Maintenance - US-EAST-02B", "Location: US-EAST-02B"),
            ("us-east-02b",),
            id="zone-once",
        ),
        pytest.param(
            ("metrics in US-EAST. Querying US-EAST metrics",), ("us-east",), id="bare-region"
        ),
        pytest.param(
            ("EU-SOUTH-4A and US-CENTRAL-06A, then US-EAST-04",),
            ("eu-south-4a", "us-central-06a", "us-east-04"),
            id="several-in-order",
        ),
        pytest.param(
            ("Legacy RNO2 and LGA1 racks", "ORD1"), ("rno2", "lga1", "ord1"), id="data-centre-codes"
        ),
        pytest.param(
            ("HTTP 503 from us-east-1 at 9:30 AM ET (1:30 PM UTC)", "CNI-NETWORKING"),
            (),
            id="no-codes",
        ),
    ],
)
def test_coreweave_region_codes_are_found_lower_cased_in_order(
    texts: tuple[str, ...], codes: tuple[str, ...]
) -> None:
    assert statusio.region_codes(*texts) == codes


@pytest.mark.parametrize(
    ("title", "provider"),
    [
        pytest.param("CoreWeave Cloud", "coreweave", id="coreweave"),
        pytest.param("Acme GPU Status", "acme-gpu", id="other-page"),
        pytest.param("", "statusio", id="no-title"),
    ],
)
def test_the_default_provider_comes_from_the_channel_title(title: str, provider: str) -> None:
    link = f"https://status.io/pages/incident/{PAGE}/1"

    assert statusio.parse(channel(item("Errors", "", link), title=title))[0].provider == provider


def test_an_explicit_provider_wins_over_the_channel_title() -> None:
    assert {i.provider for i in statusio.parse(COREWEAVE, provider="cw")} == {"cw"}


def test_an_empty_channel_has_no_incidents() -> None:
    assert statusio.parse(channel()) == []


@pytest.mark.parametrize(
    "raw",
    [
        pytest.param(b"", id="empty"),
        pytest.param(b"<html><body>status.io is down</body></html>", id="html"),
        pytest.param(b"[1, 2, 3]", id="json"),
        pytest.param(COREWEAVE[:9000], id="cut-inside-cdata"),
        pytest.param(COREWEAVE[:-20], id="cut-before-closing-tags"),
    ],
)
def test_unreadable_documents_raise_feed_parse_error_naming_statusio(raw: bytes) -> None:
    with pytest.raises(FeedParseError) as caught:
        statusio.parse(raw)

    assert caught.value.kind == "statusio"


def test_reparsing_the_same_bytes_gives_equal_results() -> None:
    assert statusio.parse(COREWEAVE) == statusio.parse(COREWEAVE)


test_arbitrary_or_mutated_fixture_bytes_give_incidents_or_feed_parse_error = (
    fuzz_raises_only_parse_errors(statusio.parse, "statusio", [COREWEAVE])
)


@settings(FUZZ, max_examples=60)
@given(spliced(COREWEAVE, width=60))
def test_spliced_fixture_bytes_give_incidents_or_feed_parse_error(raw: bytes) -> None:
    outcome = parse_or_error(statusio.parse, "statusio", raw)

    if isinstance(outcome, list):
        assert all(i.is_maintenance == (i.impact == "maintenance") for i in outcome)
