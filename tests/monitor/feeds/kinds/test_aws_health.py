"""Tests for the AWS Health Dashboard ``currentevents`` parser
(monitor/feeds/kinds/aws_health.py)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from monitor.errors import FeedParseError
from monitor.feeds.kinds.aws_health import parse
from monitor.feeds.model import Incident
from monitor.sla.response import CLOSED_STATUSES
from tests.monitor.feeds.fuzzing import (
    FUZZ,
    assert_well_formed,
    at,
    fuzz_raises_only_parse_errors,
    json_values,
)
from tests.support import FIXTURES as SHARED_FIXTURES

FIXTURE = SHARED_FIXTURES / "feeds" / "aws-health"
EVENTS = FIXTURE / "ai-status-aws-currentevents.json"
OREGON_ARN = (
    "arn:aws:health:us-west-2::event/MULTIPLE_SERVICES/AWS_MULTIPLE_SERVICES_OPERATIONAL_ISSUE/"
    "AWS_MULTIPLE_SERVICES_OPERATIONAL_ISSUE_926DB_F0036494EA4"
)


def doc(*events: dict[str, Any]) -> bytes:
    return json.dumps(list(events)).encode()


def event(**fields: Any) -> dict[str, Any]:
    """A small currentevents element, shaped like the captured ones."""
    base: dict[str, Any] = {
        "date": "1700000000",
        "region_name": "N. Virginia",
        "status": "2",
        "service": "ec2-us-east-1",
        "service_name": "Amazon Elastic Compute Cloud",
        "summary": "Increased API Error Rates",
        "event_log": [],
    }
    return base | fields


@pytest.fixture(scope="module")
def captured() -> list[Incident]:
    return parse(EVENTS.read_bytes())


# --- the captured document --------------------------------------------------------------------


def test_captured_document_gives_its_three_events_by_arn(captured: list[Incident]) -> None:
    assert len(captured) == 3
    assert captured[0].source_id == OREGON_ARN
    assert [i.source_id.split("::")[0] for i in captured] == [
        "arn:aws:health:us-west-2",
        "arn:aws:health:me-central-1",
        "arn:aws:health:me-south-1",
    ]
    assert {i.provider for i in captured} == {"aws"}


def test_resolved_event_maps_every_field(captured: list[Incident]) -> None:
    oregon = captured[0]
    assert oregon.title == "Increased API Error Rates"  # "[RESOLVED] " taken off
    assert (oregon.status, oregon.impact) == ("resolved", "minor")
    assert oregon.started_at == at("2026-09-03T21:49:58+00:00")  # date "1788472198"
    assert oregon.resolved_at == at("2026-09-04T00:07:54+00:00")  # end_time "1788480474"
    assert oregon.regions == ("us-west-2",)
    assert oregon.components == ("AWS Security Token Service", "AWS Sign-In")
    assert oregon.url == "https://health.aws.amazon.com/health/status"
    assert not oregon.is_maintenance


def test_event_log_becomes_the_updates(captured: list[Incident]) -> None:
    (update,) = captured[0].updates
    assert (update.at, update.status) == (at("2026-09-03T21:49:58+00:00"), "investigating")
    assert update.body.startswith("Starting at 2:12 PM PDT, we began experiencing increased API")
    assert update.body.endswith("We will provide another update by 3:30 PM PDT.")


def test_open_disruptions_are_critical_and_unresolved(captured: list[Incident]) -> None:
    uae, bahrain = captured[1], captured[2]
    assert [(i.status, i.impact, i.resolved_at) for i in (uae, bahrain)] == [
        ("investigating", "critical", None),
        ("investigating", "critical", None),
    ]
    assert (uae.title, uae.regions) == ("Increased Error Rates", ("me-central-1",))
    assert (bahrain.title, bahrain.regions) == ("Increased Error Rates", ("me-south-1",))
    assert uae.started_at == at("2026-03-01T12:51:25+00:00")
    assert bahrain.started_at == at("2026-03-02T05:56:27+00:00")
    assert uae.components == ("AWS Sign-In", "AWS Security Token Service", "Amazon Bedrock")
    assert bahrain.updates[0].body == (
        "We are investigating increased API error rates in a single Availability Zone "
        "(mes1-az2) in the ME-SOUTH-1 Region."
    )


def test_parsing_the_same_bytes_twice_gives_equal_incidents(captured: list[Incident]) -> None:
    assert parse(EVENTS.read_bytes()) == captured


def test_explicit_provider_is_used() -> None:
    assert {i.provider for i in parse(EVENTS.read_bytes(), provider="aws-public")} == {"aws-public"}


# --- encodings --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "encode",
    [
        pytest.param(lambda text: b"\xfe\xff" + text.encode("utf-16-be"), id="utf16-be-bom-live"),
        pytest.param(lambda text: text.encode("utf-16-be"), id="utf16-be-no-bom"),
        pytest.param(lambda text: text.encode("utf-16"), id="utf16-native-bom"),
        pytest.param(lambda text: b"\xef\xbb\xbf" + text.encode("utf-8"), id="utf8-bom"),
    ],
)
def test_every_encoding_aws_may_send_gives_the_same_incidents(
    encode: Any, captured: list[Incident]
) -> None:
    assert parse(encode(EVENTS.read_text(encoding="utf-8"))) == captured


def test_empty_array_is_a_valid_document_without_events() -> None:
    assert parse(b"[]") == []
    assert parse(b"\xfe\xff" + "[]".encode("utf-16-be")) == []


# --- hand-made edge cases ---------------------------------------------------------------------


def test_event_without_arn_gets_a_stable_id_from_service_region_and_date() -> None:
    first = parse(doc(event()))[0].source_id
    assert first == parse(doc(event(summary="Renamed")))[0].source_id
    assert first != parse(doc(event(date="1700000001")))[0].source_id
    assert len(first) == 24


def test_status_zero_without_end_time_closes_at_the_last_log_entry() -> None:
    log = [
        {"summary": "a", "message": "Resolved now.", "status": 0, "timestamp": 1700003600},
        {"summary": "a", "message": "Looking.", "status": 2, "timestamp": 1700000000},
    ]
    parsed = parse(doc(event(status="0", event_log=log)))[0]
    assert parsed.status == "resolved"
    assert parsed.resolved_at == at("2023-11-14T23:13:20+00:00")
    assert [(u.body, u.status) for u in parsed.updates] == [
        ("Looking.", "investigating"),
        ("Resolved now.", "resolved"),
    ]


@pytest.mark.parametrize(
    ("fields", "expected"),
    [
        pytest.param({"status": "1"}, "minor", id="informational"),
        pytest.param({"status": "2"}, "major", id="degraded"),
        pytest.param({"status": 3}, "critical", id="disrupted-as-number"),
        pytest.param({"status": "0"}, "minor", id="resolved-without-history"),
        pytest.param(
            {"status": "1", "impacted_services": {"s3-us-east-1": {"current": "1", "max": "3"}}},
            "critical",
            id="worst-service-max",
        ),
        pytest.param({"status": "weird"}, "minor", id="unknown-code"),
        pytest.param({"status": "9999999"}, "minor", id="absurd-code"),
    ],
)
def test_impact_is_the_worst_status_code_seen(fields: dict[str, Any], expected: str) -> None:
    assert parse(doc(event(**fields)))[0].impact == expected


def test_region_name_comes_first_then_codes_from_keys() -> None:
    item = event(region_name="Global", service="iam", arn="arn:aws:health:global::event/x")
    assert parse(doc(item))[0].regions == ()
    item = event(
        region_name="Frankfurt",
        impacted_services={"ec2-eu-central-1": {"service_name": "EC2"}, "x-eu-west-1": {}},
    )
    assert parse(doc(item))[0].regions == ("eu-central-1", "us-east-1", "eu-west-1")


def test_single_service_event_without_impacted_services_names_its_service() -> None:
    assert parse(doc(event()))[0].components == ("Amazon Elastic Compute Cloud",)
    assert parse(doc(event(service_name="Multiple services")))[0].components == ()


def test_html_in_log_messages_is_reduced_to_plain_text() -> None:
    log = [{"message": "<p>We are <b>investigating</b> &amp; mitigating.</p>", "timestamp": 17e8}]
    assert (
        parse(doc(event(event_log=log)))[0].updates[0].body == "We are investigating & mitigating."
    )


def test_log_entry_without_message_uses_its_summary_and_unreadable_ones_are_dropped() -> None:
    log = [
        {"summary": "Short summary", "timestamp": "1700000000"},
        {"message": "no time"},
        {"message": "bad time", "timestamp": "later"},
        "not an entry",
    ]
    parsed = parse(doc(event(event_log=log)))[0]
    assert [u.body for u in parsed.updates] == ["Short summary"]


def test_elements_that_are_not_events_are_skipped() -> None:
    assert parse(json.dumps([1, None, "x", {}]).encode()) == []


def test_repeated_event_is_kept_once() -> None:
    assert len(parse(doc(event(arn="arn:1"), event(arn="arn:1")))) == 1


@pytest.mark.parametrize(
    "raw",
    [
        pytest.param(b"", id="empty"),
        pytest.param(b"<html><body>Service Unavailable</body></html>", id="html"),
        pytest.param(b'{"events": []}', id="object"),
        pytest.param(b"null", id="null"),
        pytest.param(b"\xfe\xff\x00[\x00{", id="truncated-utf16"),
        pytest.param(b"\x00\x01\x02garbage", id="garbage"),
    ],
)
def test_unreadable_documents_raise_feed_parse_error(raw: bytes) -> None:
    with pytest.raises(FeedParseError, match="aws-health"):
        parse(raw)


def test_truncated_document_raises_feed_parse_error() -> None:
    raw = EVENTS.read_bytes()
    with pytest.raises(FeedParseError, match="invalid JSON"):
        parse(raw[: len(raw) // 2])


# --- properties -------------------------------------------------------------------------------

epochs = st.integers(-(10**12), 10**13).map(str) | st.integers(0, 2 * 10**9) | json_values
codes = st.sampled_from(["0", "1", "2", "3", 0, 3, "x"]) | json_values
events = st.fixed_dictionaries(
    {},
    optional={
        "arn": json_values,
        "date": epochs,
        "end_time": epochs,
        "status": codes,
        "region_name": st.sampled_from(["Oregon", "UAE", "Global"]) | json_values,
        "service": st.sampled_from(["ec2-us-east-1", "iam"]) | json_values,
        "summary": st.text(max_size=30) | json_values,
        "event_log": st.lists(
            st.fixed_dictionaries(
                {}, optional={"message": json_values, "status": codes, "timestamp": epochs}
            ),
            max_size=3,
        )
        | json_values,
        "impacted_services": st.dictionaries(
            st.text(max_size=20),
            st.fixed_dictionaries({}, optional={"current": codes, "max": codes}) | json_values,
            max_size=3,
        )
        | json_values,
    },
)


def assert_well_formed_aws(incident: Incident) -> None:
    assert_well_formed(incident)
    assert incident.source_id
    assert (incident.resolved_at is not None) == (incident.status in CLOSED_STATUSES)


@FUZZ
@given(st.lists(events, max_size=4))
def test_any_event_shaped_document_parses_into_well_formed_incidents(
    document: list[dict[str, Any]],
) -> None:
    for incident in parse(json.dumps(document).encode()):
        assert_well_formed_aws(incident)


test_arbitrary_or_mutated_fixture_bytes_raise_nothing_but_feed_parse_error = (
    fuzz_raises_only_parse_errors(
        parse,
        "aws-health",
        [EVENTS.read_bytes(), b"\xfe\xff" + EVENTS.read_text(encoding="utf-8").encode("utf-16-be")],
        shortest_cut=501,
    )
)
