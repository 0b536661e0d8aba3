"""Tests for the Google Cloud status dashboard parser (monitor/feeds/kinds/gcp.py)."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from monitor.errors import FeedParseError
from monitor.feeds.kinds.gcp import markdown_to_text, parse
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

FIXTURES = SHARED_FIXTURES / "feeds" / "gcp"
INCIDENTS = FIXTURES / "gcp-incidents-excerpt-2022-07.json"
PRODUCTS = FIXTURES / "ai-status-gcp-products-trimmed.json"


def doc(*incidents: dict[str, Any]) -> bytes:
    return json.dumps(list(incidents)).encode()


def incident(**fields: Any) -> dict[str, Any]:
    """A small incidents.json element, shaped like the captured ones."""
    base: dict[str, Any] = {
        "id": "abc123",
        "begin": "2024-01-02T03:04:05+00:00",
        "external_desc": "Cloud Run deploys fail",
        "uri": "incidents/abc123",
        "updates": [],
    }
    return base | fields


@pytest.fixture(scope="module")
def captured() -> list[Incident]:
    return parse(INCIDENTS.read_bytes())


def by_id(incidents: list[Incident], source_id: str) -> Incident:
    return next(i for i in incidents if i.source_id == source_id)


# --- the captured excerpt ---------------------------------------------------------------------


def test_excerpt_gives_its_five_incidents_in_document_order(captured: list[Incident]) -> None:
    assert [i.source_id for i in captured] == [
        "TaA75H7XA1DQyM2ReK2f",
        "mDY7jN545et9XUV541MZ",
        "mbtvSs2qKE3Nz6nxR6rY",
        "iAgVMxJUfE1J9et7j9KB",
        "4Qvmd4q81VnA9RirCMqV",
    ]
    assert {i.provider for i in captured} == {"gcp"}
    assert not any(i.is_maintenance for i in captured)


def test_incidents_with_an_end_are_resolved_at_that_end(captured: list[Incident]) -> None:
    assert [(i.status, i.resolved_at) for i in captured] == [
        ("resolved", at("2022-07-01T19:25:45+00:00")),
        ("resolved", at("2022-07-01T02:15:28+00:00")),
        ("resolved", at("2022-06-28T10:25:35+00:00")),
        ("resolved", at("2022-06-16T09:44:00+00:00")),
        ("resolved", at("2022-05-06T19:06:00+00:00")),
    ]


def test_single_product_incident_maps_every_field(captured: list[Incident]) -> None:
    bigquery = captured[0]
    assert bigquery.title == "[Google BigQuery] Lower throughput from the Read API"
    assert bigquery.started_at == at("2022-07-01T13:37:44+00:00")
    assert bigquery.url == "https://status.cloud.google.com/incidents/TaA75H7XA1DQyM2ReK2f"
    assert bigquery.components == ("Google BigQuery",)
    assert bigquery.impact == "minor"  # severity "low"


def test_updates_come_oldest_first_with_their_states(captured: list[Incident]) -> None:
    assert [(u.at, u.status) for u in captured[0].updates] == [
        (at("2022-07-01T14:04:53+00:00"), "investigating"),
        (at("2022-07-01T14:54:19+00:00"), "investigating"),
        (at("2022-07-01T16:46:20+00:00"), "investigating"),
        (at("2022-07-01T17:48:07+00:00"), "investigating"),
        (at("2022-07-01T19:25:45+00:00"), "resolved"),
    ]
    assert (
        captured[0]
        .updates[0]
        .body.startswith(
            "Summary: [Google BigQuery] Lower throughput from the Read API\n"
            "Description: We are experiencing an issue with Google BigQuery.\n"
        )
    )


def test_resolved_incident_keeps_all_eighteen_updates_in_order(captured: list[Incident]) -> None:
    disk = by_id(captured, "4Qvmd4q81VnA9RirCMqV")
    times = [u.at for u in disk.updates]
    assert len(disk.updates) == 18
    assert times == sorted(times)
    assert (times[0], times[-1]) == (
        at("2022-05-06T12:01:47+00:00"),
        at("2022-05-16T23:12:31+00:00"),
    )
    assert [u.status for u in disk.updates] == (
        ["investigating"] * 15 + ["resolved", "postmortem", "postmortem"]
    )


def test_incident_report_markdown_becomes_plain_text(captured: list[Incident]) -> None:
    report = by_id(captured, "4Qvmd4q81VnA9RirCMqV").updates[-1].body
    assert report.startswith("INCIDENT REPORT\nSummary:\nOn 6 May 2022 at 01:30 US/Pacific")
    assert "**" not in report
    assert (
        "please contact us (https://support.google.com/cloud/contact/cloud_platform_sla)." in report
    )
    mini = by_id(captured, "iAgVMxJUfE1J9et7j9KB").updates[-1].body
    assert mini.startswith("MINI INCIDENT REPORT\nWe apologize")
    assert "Incident Start: 16 June 2022 01:11" in mini


def test_multiple_products_incident_lists_each_product_as_a_component(
    captured: list[Incident],
) -> None:
    assert by_id(captured, "mDY7jN545et9XUV541MZ").components == (
        "Google Cloud Composer",
        "Google Cloud SQL",
    )
    disk = by_id(captured, "4Qvmd4q81VnA9RirCMqV")
    assert len(disk.components) == 14
    assert disk.components[:3] == ("Google BigQuery", "Apigee", "Google Compute Engine")
    assert disk.components[-1] == "Cloud Load Balancing"


def test_regions_are_the_location_ids_in_order_of_first_appearance(
    captured: list[Incident],
) -> None:
    assert by_id(captured, "mDY7jN545et9XUV541MZ").regions == (
        "asia-east1",
        "asia-east2",
        "asia-northeast2",
        "europe-central2",
        "europe-north1",
        "europe-west3",
        "us-east1",
        "us-west2",
    )
    bigquery = captured[0]
    assert len(bigquery.regions) == 29
    assert "northamerica-northeast1" in bigquery.regions  # titled "Montréal (…)"
    assert "southamerica-east1" in bigquery.regions  # titled "São Paulo (…)"
    assert by_id(captured, "4Qvmd4q81VnA9RirCMqV").regions == ("us-central1",)


def test_incident_without_locations_has_no_regions(captured: list[Incident]) -> None:
    assert by_id(captured, "mbtvSs2qKE3Nz6nxR6rY").regions == ()


def test_high_severity_outages_are_critical(captured: list[Incident]) -> None:
    assert [i.impact for i in captured] == ["minor", "minor", "minor", "critical", "critical"]


def test_explicit_provider_is_used() -> None:
    assert {i.provider for i in parse(INCIDENTS.read_bytes(), provider="google")} == {"google"}


def test_parsing_the_same_bytes_twice_gives_equal_incidents(captured: list[Incident]) -> None:
    assert parse(INCIDENTS.read_bytes()) == captured


def test_products_document_holds_no_incidents() -> None:
    assert parse(PRODUCTS.read_bytes()) == []


def test_empty_array_is_a_valid_document_without_incidents() -> None:
    assert parse(b"[]") == []


# --- hand-made edge cases ---------------------------------------------------------------------


def test_open_incident_reads_its_latest_state() -> None:
    update = {
        "when": "2024-01-02T03:30:00+00:00",
        "status": "SERVICE_DISRUPTION",
        "text": "We are investigating.",
        "affected_locations": [{"title": "Iowa (us-central1)", "id": "us-central1"}],
    }
    item = incident(
        most_recent_update=update,
        updates=[update],
        status_impact="SERVICE_DISRUPTION",
        currently_affected_locations=[{"title": "Iowa (us-central1)", "id": "us-central1"}],
    )
    (parsed,) = parse(doc(item))
    assert (parsed.status, parsed.resolved_at, parsed.impact) == ("investigating", None, "major")
    assert parsed.regions == ("us-central1",)
    assert parsed.status not in CLOSED_STATUSES


def test_available_without_end_closes_at_that_update() -> None:
    update = {"when": "2024-01-02T05:00:00+00:00", "status": "AVAILABLE", "text": "Fixed."}
    (parsed,) = parse(doc(incident(most_recent_update=update, updates=[update])))
    assert (parsed.status, parsed.resolved_at) == ("resolved", at("2024-01-02T05:00:00+00:00"))


@pytest.mark.parametrize(
    ("fields", "expected"),
    [
        pytest.param({"severity": "medium"}, "major", id="medium-severity"),
        pytest.param({"severity": "high"}, "critical", id="high-severity"),
        pytest.param({"status_impact": "SERVICE_OUTAGE"}, "critical", id="outage-no-severity"),
        pytest.param({"status_impact": "SERVICE_INFORMATION"}, "minor", id="information"),
        pytest.param({"severity": "weird", "status_impact": "SERVICE_DISRUPTION"}, "major",
                     id="unknown-severity-falls-back"),
        pytest.param({}, "minor", id="nothing-said"),
    ],
)  # fmt: skip
def test_impact_comes_from_severity_else_status_impact(
    fields: dict[str, Any], expected: str
) -> None:
    assert parse(doc(incident(**fields)))[0].impact == expected


def test_update_without_when_is_timed_by_created() -> None:
    updates = [
        {"created": "2024-01-02T04:00:00+00:00", "status": "SERVICE_OUTAGE", "text": "b"},
        {"when": "2024-01-02T03:10:00+00:00", "status": "SERVICE_OUTAGE", "text": "a"},
    ]
    parsed = parse(doc(incident(updates=updates)))[0]
    assert [u.body for u in parsed.updates] == ["a", "b"]


def test_updates_with_unknown_states_or_no_time_are_handled() -> None:
    updates = [
        {"when": "2024-01-02T03:10:00+00:00", "status": "SOMETHING_NEW", "text": "x"},
        {"when": "not a time", "status": "AVAILABLE", "text": "dropped"},
        {"status": "AVAILABLE"},
        "not an update",
    ]
    parsed = parse(doc(incident(updates=updates)))[0]
    assert [(u.status, u.body) for u in parsed.updates] == [("investigating", "x")]


def test_html_in_update_text_is_reduced_to_plain_text() -> None:
    updates = [{"when": "2024-01-02T03:10:00+00:00", "text": "<p>Fixed <b>now</b> &amp; ok</p>"}]
    assert parse(doc(incident(updates=updates)))[0].updates[0].body == "Fixed now & ok"


@pytest.mark.parametrize(
    ("markdown", "text"),
    [
        pytest.param("**Summary:**\nAll good", "Summary:\nAll good", id="bold"),
        pytest.param("# MINI INCIDENT REPORT\nx", "MINI INCIDENT REPORT\nx", id="heading"),
        pytest.param("see [docs](https://x.test/a)", "see docs (https://x.test/a)", id="link"),
        pytest.param("[https://x.test](https://x.test)", "https://x.test", id="bare-link"),
        pytest.param("latency < 5 ms\n- item", "latency < 5 ms\n- item", id="plain-stays"),
        pytest.param("a * b ** c", "a * b ** c", id="lone-stars-stay"),
    ],
)
def test_markdown_marks_are_dropped(markdown: str, text: str) -> None:
    assert markdown_to_text(markdown) == text


def test_title_is_the_first_line_of_the_description() -> None:
    item = incident(external_desc="\n  First line  here \nsecond line")
    assert parse(doc(item))[0].title == "First line here"


def test_missing_description_falls_back_to_the_service_name() -> None:
    item = incident(external_desc=None, service_name="Cloud Run")
    assert parse(doc(item))[0].title == "Cloud Run"


def test_single_product_without_affected_products_uses_the_service_name() -> None:
    item = incident(service_key="abc", service_name="Cloud Run")
    assert parse(doc(item))[0].components == ("Cloud Run",)


def test_location_without_an_id_is_read_from_its_title_and_zones_name_regions() -> None:
    item = incident(
        previously_affected_locations=[{"title": "Iowa (us-central1)"}, {"id": "europe-west4-a"}]
    )
    assert parse(doc(item))[0].regions == ("us-central1", "europe-west4")


def test_incident_without_id_gets_a_stable_hash_id() -> None:
    item = incident(id=None, uri=None)
    first, second = parse(doc(item))[0], parse(doc(item))[0]
    assert first.source_id == second.source_id
    assert len(first.source_id) == 24


def test_elements_that_are_not_incidents_are_skipped() -> None:
    assert parse(doc(incident(), {"unrelated": 1})) == parse(doc(incident()))
    assert parse(json.dumps([1, "x", None]).encode()) == []


def test_repeated_incident_is_kept_once() -> None:
    assert len(parse(doc(incident(), incident()))) == 1


def test_utf8_bom_is_accepted() -> None:
    assert parse(b"\xef\xbb\xbf" + INCIDENTS.read_bytes()) == parse(INCIDENTS.read_bytes())


@pytest.mark.parametrize(
    "raw",
    [
        pytest.param(b"", id="empty"),
        pytest.param(b"<html><body>Error 503</body></html>", id="html"),
        pytest.param(b'{"incidents": []}', id="object"),
        pytest.param(b'"text"', id="string"),
        pytest.param(b"\x89PNG\r\n\x1a\n", id="binary"),
    ],
)
def test_unreadable_documents_raise_feed_parse_error(raw: bytes) -> None:
    with pytest.raises(FeedParseError, match="gcp"):
        parse(raw)


def test_truncated_document_raises_feed_parse_error() -> None:
    raw = INCIDENTS.read_bytes()
    with pytest.raises(FeedParseError, match="invalid JSON"):
        parse(raw[: len(raw) // 2])


# --- properties -------------------------------------------------------------------------------

times = st.one_of(
    st.datetimes(timezones=st.just(UTC)).map(datetime.isoformat),
    st.sampled_from(["2022-07-01T13:37:44+00:00", "soon", "", "99999999999999999999"]),
    json_values,
)
locations = st.lists(
    st.fixed_dictionaries({}, optional={"id": json_values | st.text(), "title": json_values}),
    max_size=3,
)
updates = st.lists(
    st.fixed_dictionaries(
        {},
        optional={
            "when": times,
            "created": times,
            "status": st.sampled_from(["AVAILABLE", "SERVICE_OUTAGE", "?"]) | json_values,
            "text": st.text(max_size=40) | json_values,
            "affected_locations": locations | json_values,
        },
    ),
    max_size=4,
)
incidents = st.fixed_dictionaries(
    {},
    optional={
        "id": json_values,
        "begin": times,
        "end": times,
        "external_desc": st.text(max_size=30) | json_values,
        "severity": st.sampled_from(["low", "medium", "high"]) | json_values,
        "status_impact": json_values,
        "updates": updates | json_values,
        "most_recent_update": json_values,
        "affected_products": json_values,
        "currently_affected_locations": locations | json_values,
        "previously_affected_locations": locations,
        "uri": json_values,
    },
)


def assert_well_formed_gcp(item: Incident) -> None:
    assert_well_formed(item)
    assert item.source_id
    assert (item.resolved_at is not None) == (item.status in CLOSED_STATUSES)
    assert len(set(item.regions)) == len(item.regions)
    assert all(isinstance(r, str) and r for r in item.regions)


@FUZZ
@given(st.lists(incidents, max_size=4))
def test_any_incident_shaped_document_parses_into_well_formed_incidents(
    document: list[dict[str, Any]],
) -> None:
    for item in parse(json.dumps(document).encode()):
        assert_well_formed_gcp(item)


test_arbitrary_or_mutated_fixture_bytes_raise_nothing_but_feed_parse_error = (
    fuzz_raises_only_parse_errors(parse, "gcp", [INCIDENTS.read_bytes()], shortest_cut=1001)
)
