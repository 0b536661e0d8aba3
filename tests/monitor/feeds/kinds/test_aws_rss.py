"""Tests for the AWS Service Health Dashboard RSS parser (monitor/feeds/kinds/aws_rss.py)."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from monitor.errors import FeedParseError
from monitor.feeds.kinds.aws_rss import parse
from monitor.feeds.model import Incident
from monitor.sla.response import CLOSED_STATUSES
from tests.monitor.feeds.fuzzing import (
    FUZZ,
    assert_well_formed,
    at,
    fuzz_raises_only_parse_errors,
)
from tests.support import FIXTURES as SHARED_FIXTURES

FIXTURES = SHARED_FIXTURES / "feeds" / "aws-rss"
ALL_RSS = FIXTURES / "checkmk-aws-all-rss-2023-02.rss"
EC2_TITLE = "Amazon Elastic Compute Cloud (N. Virginia) Service Status"


def item(
    title: str,
    pub_date: str | None,
    guid: str | None,
    description: str = "An update.",
) -> str:
    parts = [f"<title><![CDATA[{title}]]></title>", "<link>http://status.aws.amazon.com/</link>"]
    if pub_date is not None:
        parts.append(f"<pubDate>{pub_date}</pubDate>")
    if guid is not None:
        parts.append(f'<guid isPermaLink="false">http://status.aws.amazon.com/#{guid}</guid>')
    parts.append(f"<description><![CDATA[{description}]]></description>")
    return "<item>" + "".join(parts) + "</item>"


def rss(*items: str, title: str = EC2_TITLE) -> bytes:
    return (
        '<?xml version="1.0" encoding="UTF-8"?><rss version="2.0"><channel>'
        f"<title><![CDATA[{title}]]></title><link>http://status.aws.amazon.com/</link>"
        "<lastBuildDate>Mon, 13 Feb 2023 00:05:51 PST</lastBuildDate>"
        + "".join(items)
        + "</channel></rss>"
    ).encode()


def epoch(text: str) -> int:
    return int(at(text).timestamp())


# One EC2 event in three items (newest first, as AWS lists them), then a later, separate event.
OPEN = "Fri, 10 Feb 2023 10:00:00 PST"
WORSE = "Fri, 10 Feb 2023 10:30:00 PST"
CLOSE = "Fri, 10 Feb 2023 11:00:00 PST"
NEXT = "Sat, 11 Feb 2023 09:00:00 PST"
OPEN_GUID = f"ec2-us-east-1_{epoch('2023-02-10T18:00:00+00:00')}"
WORSE_GUID = f"ec2-us-east-1_{epoch('2023-02-10T18:30:00+00:00')}"
CLOSE_GUID = f"ec2-us-east-1_{epoch('2023-02-10T19:00:00+00:00')}"
NEXT_GUID = f"ec2-us-east-1_{epoch('2023-02-11T17:00:00+00:00')}"
SUBJECT = "Increased API error rates"
EC2_FEED = rss(
    item("Informational message: Slow launches", NEXT, NEXT_GUID),
    item(f"Service is operating normally: [RESOLVED] {SUBJECT}", CLOSE, CLOSE_GUID, "Resolved."),
    item(f"Service disruption: {SUBJECT}", WORSE, WORSE_GUID, "<p>We are <b>still</b> on it.</p>"),
    item(f"Informational message: {SUBJECT}", OPEN, OPEN_GUID, "We are investigating."),
)


@pytest.fixture(scope="module")
def captured() -> list[Incident]:
    return parse(ALL_RSS.read_bytes())


@pytest.fixture(scope="module")
def ec2() -> list[Incident]:
    return parse(EC2_FEED)


# --- the captured all.rss ---------------------------------------------------------------------


def test_all_rss_gives_one_incident_per_service_event(captured: list[Incident]) -> None:
    assert [i.source_id for i in captured] == [
        "rds-us-east-1_1676072880",
        "billingconsole_1675376364",
    ]
    assert {i.provider for i in captured} == {"aws"}


def test_resolved_item_closes_its_incident_at_the_pst_time_in_utc(
    captured: list[Incident],
) -> None:
    rds = captured[0]
    assert rds.title == "Connectivity issues affecting some instances"
    assert (rds.status, rds.impact) == ("resolved", "minor")
    # pubDate "Fri, 10 Feb 2023 15:48:00 PST" is 23:48 UTC, the guid's epoch 1676072880.
    assert rds.started_at == rds.resolved_at == at("2023-02-10T23:48:00+00:00")
    assert rds.started_at == datetime.fromtimestamp(1676072880, UTC)
    assert rds.regions == ("us-east-1",)
    assert rds.components == ("rds",)
    assert rds.url == "http://status.aws.amazon.com/"
    assert [(u.at, u.status) for u in rds.updates] == [
        (at("2023-02-10T23:48:00+00:00"), "resolved")
    ]
    assert rds.updates[0].body.startswith("Between 11:18 AM and 2:44 PM PST, some Amazon Aurora")


def test_global_service_informational_message_stays_open_without_region(
    captured: list[Incident],
) -> None:
    billing = captured[1]
    assert billing.title == (
        "Increased error rates when accessing Cost Explorer, Budgets, and Cost and Usage Reports"
    )
    assert (billing.status, billing.impact, billing.resolved_at) == ("investigating", "minor", None)
    assert billing.started_at == at("2023-02-02T22:19:24+00:00")
    assert billing.started_at == datetime.fromtimestamp(1675376364, UTC)
    assert (billing.regions, billing.components) == ((), ("billingconsole",))
    assert billing.updates[0].body.startswith("We are currently seeing early signs of recovery")


def test_parsing_the_same_bytes_twice_gives_equal_incidents(captured: list[Incident]) -> None:
    assert parse(ALL_RSS.read_bytes()) == captured


def test_explicit_provider_is_used() -> None:
    assert {i.provider for i in parse(ALL_RSS.read_bytes(), provider="aws-gov")} == {"aws-gov"}


# --- grouping items into events ---------------------------------------------------------------


def test_items_of_one_event_become_one_incident_with_updates_oldest_first(
    ec2: list[Incident],
) -> None:
    event = next(i for i in ec2 if i.title == SUBJECT)
    assert event.source_id == OPEN_GUID
    assert [(u.at, u.status) for u in event.updates] == [
        (at("2023-02-10T18:00:00+00:00"), "investigating"),
        (at("2023-02-10T18:30:00+00:00"), "investigating"),
        (at("2023-02-10T19:00:00+00:00"), "resolved"),
    ]
    assert [u.body for u in event.updates] == [
        "We are investigating.",
        "We are still on it.",
        "Resolved.",
    ]
    assert event.started_at == at("2023-02-10T18:00:00+00:00")
    assert (event.status, event.resolved_at) == ("resolved", at("2023-02-10T19:00:00+00:00"))


def test_worst_state_of_an_event_sets_its_impact(ec2: list[Incident]) -> None:
    assert [i.impact for i in ec2] == ["minor", "critical"]


def test_item_after_a_closing_item_opens_a_new_incident(ec2: list[Incident]) -> None:
    newest = ec2[0]
    assert newest.source_id == NEXT_GUID
    assert (newest.title, newest.status, newest.resolved_at) == (
        "Slow launches",
        "investigating",
        None,
    )
    assert len(newest.updates) == 1


def test_per_service_feed_names_the_service_and_region(ec2: list[Incident]) -> None:
    assert {i.components for i in ec2} == {("Amazon Elastic Compute Cloud",)}
    assert {i.regions for i in ec2} == {("us-east-1",)}


def test_item_long_after_the_previous_one_opens_a_new_incident() -> None:
    feed = rss(
        item("Informational message: Second", "Mon, 13 Feb 2023 10:00:00 PST", "s3-eu-west-1"),
        item("Informational message: First", "Fri, 10 Feb 2023 10:00:00 PST", "s3-eu-west-1"),
    )
    assert [(i.source_id, i.title) for i in parse(feed)] == [
        ("s3-eu-west-1_1676311200", "Second"),
        ("s3-eu-west-1_1676052000", "First"),
    ]


def test_items_of_different_service_regions_never_share_an_incident() -> None:
    feed = rss(
        item("Service degradation: Errors", OPEN, "ec2-us-west-2_1676052000"),
        item("Service degradation: Errors", OPEN, "ec2-eu-west-1_1676052000"),
        title="Amazon Web Services Service Status",
    )
    parsed = parse(feed)
    assert sorted(i.source_id for i in parsed) == [
        "ec2-eu-west-1_1676052000",
        "ec2-us-west-2_1676052000",
    ]
    assert sorted(i.regions for i in parsed) == [("eu-west-1",), ("us-west-2",)]
    assert {i.impact for i in parsed} == {"major"}
    assert {i.components for i in parsed} == {("ec2",)}


def test_resolved_mark_after_an_informational_prefix_closes_the_event() -> None:
    feed = rss(
        item("Informational message: [RESOLVED] Slow", CLOSE, "lambda-us-east-2_1676055600"),
        item("Performance issues: Slow", OPEN, "lambda-us-east-2_1676052000"),
    )
    (event,) = parse(feed)
    assert (event.status, event.impact, event.title) == ("resolved", "major", "Slow")
    assert event.source_id == "lambda-us-east-2_1676052000"


def test_repeated_item_is_one_update() -> None:
    again = item("Informational message: Errors", OPEN, "ec2-us-east-1_1676052000")
    (event,) = parse(rss(again, again))
    assert len(event.updates) == 1


# --- times ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("pub_date", "expected"),
    [
        pytest.param("Fri, 10 Feb 2023 15:48:00 PST", "2023-02-10T23:48:00+00:00", id="pst"),
        pytest.param("Mon, 10 Jul 2023 15:48:00 PDT", "2023-07-10T22:48:00+00:00", id="pdt"),
        pytest.param("Mon, 10 Jul 2023 15:48:00 GMT", "2023-07-10T15:48:00+00:00", id="gmt"),
        pytest.param("Mon, 10 Jul 2023 15:48:00 -0700", "2023-07-10T22:48:00+00:00", id="offset"),
    ],
)
def test_pub_date_zone_names_convert_to_utc(pub_date: str, expected: str) -> None:
    (event,) = parse(rss(item("Informational message: x", pub_date, "ec2-us-east-1")))
    assert event.started_at == at(expected)
    assert event.source_id == f"ec2-us-east-1_{int(at(expected).timestamp())}"


def test_unknown_zone_name_falls_back_to_the_guid_epoch() -> None:
    pub_date = "Fri, 10 Feb 2023 23:48:00 JST"
    (event,) = parse(
        rss(item("Informational message: x", pub_date, "ec2-ap-northeast-1_1676040480"))
    )
    assert event.started_at == at("2023-02-10T14:48:00+00:00")


def test_missing_pub_date_uses_the_guid_epoch() -> None:
    (event,) = parse(rss(item("Informational message: x", None, "ec2-us-east-1_1676072880")))
    assert event.started_at == at("2023-02-10T23:48:00+00:00")


def test_item_without_any_time_is_skipped() -> None:
    assert parse(rss(item("Informational message: x", None, "ec2-us-east-1"))) == []


# --- odd items and documents ------------------------------------------------------------------


def test_title_without_a_known_state_is_kept_whole() -> None:
    (event,) = parse(rss(item("Note: something odd", OPEN, "ec2-us-east-1_1676052000")))
    assert (event.title, event.status, event.impact) == (
        "Note: something odd",
        "investigating",
        "minor",
    )


def test_item_without_guid_gets_a_stable_hash_id() -> None:
    feed = rss(item("Informational message: x", OPEN, None), title="Amazon Web Services")
    first, second = parse(feed)[0], parse(feed)[0]
    assert first.source_id == second.source_id
    assert len(first.source_id) == 24
    assert first.components == ()


def test_empty_feed_is_valid_and_holds_no_incidents() -> None:
    assert parse(rss()) == []


def test_utf16_feed_is_read() -> None:
    text = ALL_RSS.read_text(encoding="utf-8").replace('encoding="UTF-8"', 'encoding="UTF-16"')
    assert parse(text.encode("utf-16")) == parse(ALL_RSS.read_bytes())


def test_bytes_that_name_a_file_are_not_read_as_a_path(tmp_path: Path) -> None:
    path = tmp_path / "feed.rss"
    path.write_bytes(ALL_RSS.read_bytes())
    with pytest.raises(FeedParseError):
        parse(str(path).encode())


@pytest.mark.parametrize(
    "raw",
    [
        pytest.param(b"", id="empty"),
        pytest.param(b"<html><body><p>Service Unavailable</p></body></html>", id="html"),
        pytest.param(b"[]", id="json"),
        pytest.param(b"\x00\xff\xfe garbage", id="garbage"),
        pytest.param(b'<?xml version="1.0"?><status/>', id="other-xml"),
    ],
)
def test_unreadable_documents_raise_feed_parse_error(raw: bytes) -> None:
    with pytest.raises(FeedParseError, match="aws-rss"):
        parse(raw)


@pytest.mark.parametrize("cut", [200, 700, -40], ids=["in-channel", "in-item", "before-end"])
def test_truncated_feed_raises_feed_parse_error(cut: int) -> None:
    with pytest.raises(FeedParseError, match="truncated"):
        parse(ALL_RSS.read_bytes()[:cut])


def test_complete_feed_with_a_stray_ampersand_is_still_read() -> None:
    feed = EC2_FEED.replace(b"Slow launches", b"Slow launches & restarts")
    assert parse(feed)[0].title == "Slow launches & restarts"


# --- properties -------------------------------------------------------------------------------


def assert_well_formed_aws(incident: Incident) -> None:
    assert_well_formed(incident)
    assert incident.source_id
    assert (incident.resolved_at is not None) == (incident.status in CLOSED_STATUSES)


@FUZZ
@given(
    st.lists(
        st.tuples(
            st.sampled_from(["Informational message: ", "Service disruption: ",
                             "Service is operating normally: [RESOLVED] ", "", "x: "]),
            st.text(max_size=20),
            st.sampled_from([OPEN, WORSE, CLOSE, NEXT, "bad date", ""]),
            st.sampled_from(["ec2-us-east-1_1676052000", "ec2-us-east-1", "s3_12", "", "#_"]),
        ),
        max_size=6,
    )
)  # fmt: skip
def test_any_item_mix_parses_into_well_formed_incidents(
    items: list[tuple[str, str, str, str]],
) -> None:
    safe = [(p, t.replace("]]>", ""), d, g) for p, t, d, g in items]
    for incident in parse(rss(*(item(p + t, d, g) for p, t, d, g in safe))):
        assert_well_formed_aws(incident)


test_arbitrary_or_mutated_fixture_bytes_raise_nothing_but_feed_parse_error = (
    fuzz_raises_only_parse_errors(parse, "aws-rss", [ALL_RSS.read_bytes()])
)
