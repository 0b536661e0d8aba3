"""Tests for the instatus.com parser (monitor/feeds/kinds/instatus.py)."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from monitor.errors import FeedParseError
from monitor.feeds.kinds import instatus
from monitor.feeds.kinds.instatus import parse, read_instatus_time
from tests.monitor.feeds.fuzzing import (
    FUZZ,
    assert_well_formed,
    at,
    fuzz_raises_only_parse_errors,
    json_values,
)
from tests.support import FIXTURES as SHARED_FIXTURES

FIXTURES = SHARED_FIXTURES / "feeds" / "instatus"
SUMMARY = FIXTURES / "ai-status-perplexity-summary.json"
COMPONENTS = FIXTURES / "ai-status-perplexity-components.json"


def incident_item(**fields: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "id": "cm0abc123",
        "name": "Elevated API errors",
        "started": "2026-09-03T14:05:00.000Z",
        "status": "IDENTIFIED",
        "impact": "PARTIALOUTAGE",
        "url": "https://status.perplexity.com/incident/cm0abc123",
        "updatedAt": "2026-09-03T14:40:12.000Z",
    }
    return base | fields


def maintenance_item(**fields: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "id": "cm0mnt456",
        "name": "Database upgrade",
        "start": "2026-09-04T02:00:00.000Z",
        "status": "NOTSTARTEDYET",
        "duration": "90",
        "url": "https://status.perplexity.com/maintenance/cm0mnt456",
        "updatedAt": "2026-09-02T10:00:00.000Z",
    }
    return base | fields


def summary(incidents: list[Any] | None = None, maintenances: list[Any] | None = None) -> bytes:
    """A /summary.json as instatus serves it during an incident (page status still "UP")."""
    doc: dict[str, Any] = {
        "page": {"name": "Perplexity", "url": "https://status.perplexity.com", "status": "UP"}
    }
    if incidents is not None:
        doc["activeIncidents"] = incidents
    if maintenances is not None:
        doc["activeMaintenances"] = maintenances
    return json.dumps(doc).encode()


# --- captured documents ---------------------------------------------------------------------------


@pytest.mark.parametrize("path", [SUMMARY, COMPONENTS], ids=["all-clear-summary", "components"])
def test_captured_documents_without_active_items_give_none(path: Path) -> None:
    assert parse(path.read_bytes()) == []


def test_older_bare_array_components_document_gives_none() -> None:
    raw = json.dumps(json.loads(COMPONENTS.read_bytes())["components"]).encode()
    assert parse(raw) == []


# --- a summary with an active incident and a maintenance ------------------------------------------


def test_active_incident_is_normalized() -> None:
    [item] = parse(summary([incident_item()], []))
    assert item.provider == "perplexity"
    assert item.source_id == "cm0abc123"
    assert item.title == "Elevated API errors"
    assert (item.status, item.impact, item.is_maintenance) == ("identified", "major", False)
    assert item.started_at == at("2026-09-03T14:05:00+00:00")
    assert item.resolved_at is None
    assert item.url == "https://status.perplexity.com/incident/cm0abc123"
    assert (item.components, item.regions, item.updates) == ((), (), ())


def test_incident_shows_even_though_the_page_status_says_up() -> None:
    assert len(parse(summary([incident_item()]))) == 1


def test_upcoming_maintenance_is_scheduled_and_open() -> None:
    [item] = parse(summary([], [maintenance_item()]))
    assert (item.status, item.impact, item.is_maintenance) == ("scheduled", "maintenance", True)
    assert item.started_at == at("2026-09-04T02:00:00+00:00")
    assert item.resolved_at is None
    assert item.url == "https://status.perplexity.com/maintenance/cm0mnt456"


def test_incidents_come_before_maintenances() -> None:
    items = parse(summary([incident_item()], [maintenance_item()]))
    assert [i.is_maintenance for i in items] == [False, True]


def test_completed_maintenance_ends_after_its_duration_in_minutes() -> None:
    [item] = parse(summary(maintenances=[maintenance_item(status="COMPLETED")]))
    assert item.status == "completed"
    assert item.resolved_at == at("2026-09-04T03:30:00+00:00")


def test_completed_maintenance_without_duration_ends_at_its_last_update() -> None:
    [item] = parse(summary(maintenances=[maintenance_item(status="COMPLETED", duration=None)]))
    assert item.resolved_at == at("2026-09-02T10:00:00+00:00")


def test_resolved_incident_ends_at_its_last_update() -> None:
    [item] = parse(summary([incident_item(status="RESOLVED")]))
    assert item.status == "resolved"
    assert item.resolved_at == at("2026-09-03T14:40:12+00:00")


def test_older_scheduled_maintenances_key_and_javascript_dates_are_read() -> None:
    raw = json.dumps(
        {
            "page": {"status": "HASISSUES"},
            "activeIncidents": [
                incident_item(started="Sat Jun 11 2022 18:55:50 GMT+0200 (Central European Time)")
            ],
            "scheduledMaintenances": [
                maintenance_item(
                    status="INPROGRESS",
                    start="Sat Jun 11 2022 20:00:00 GMT+0000 (Coordinated Universal Time)",
                )
            ],
        }
    ).encode()
    incident, maintenance = parse(raw)
    assert incident.provider == "instatus"  # the page has no name
    assert incident.started_at == datetime(2022, 6, 11, 16, 55, 50, tzinfo=UTC)
    assert maintenance.status == "in_progress"
    assert maintenance.started_at == datetime(2022, 6, 11, 20, 0, tzinfo=UTC)


@pytest.mark.parametrize(
    ("word", "impact"),
    [
        ("OPERATIONAL", "none"),
        ("DEGRADEDPERFORMANCE", "minor"),
        ("MINOROUTAGE", "minor"),
        ("PARTIALOUTAGE", "major"),
        ("MAJOROUTAGE", "critical"),
        ("majoroutage", "critical"),
        ("APOCALYPSE", "none"),
        (None, "none"),
    ],
    ids=[
        "operational",
        "degraded",
        "minor",
        "partial",
        "major",
        "lower-case",
        "unknown",
        "missing",
    ],
)
def test_incident_impact_table(word: str | None, impact: str) -> None:
    [item] = parse(summary([incident_item(impact=word)]))
    assert item.impact == impact


@pytest.mark.parametrize(
    ("word", "status"),
    [
        ("INVESTIGATING", "investigating"),
        ("IDENTIFIED", "identified"),
        ("MONITORING", "monitoring"),
        ("RESOLVED", "resolved"),
        ("ON_FIRE", "investigating"),
        (7, "investigating"),
    ],
    ids=["investigating", "identified", "monitoring", "resolved", "unknown", "not-text"],
)
def test_incident_status_table(word: object, status: str) -> None:
    [item] = parse(summary([incident_item(status=word)]))
    assert item.status == status


@pytest.mark.parametrize(
    ("word", "status"),
    [
        ("NOTSTARTEDYET", "scheduled"),
        ("INPROGRESS", "in_progress"),
        ("COMPLETED", "completed"),
        ("in_progress", "in_progress"),
        ("RESOLVED", "completed"),
        ("SOMEDAY", "scheduled"),
    ],
    ids=["not-started", "in-progress", "completed", "snake-case", "resolved-word", "unknown"],
)
def test_maintenance_status_table(word: str, status: str) -> None:
    [item] = parse(summary(maintenances=[maintenance_item(status=word)]))
    assert item.status == status


def test_item_without_an_id_gets_a_stable_id_from_link_and_title() -> None:
    raw = summary([incident_item(id=None)])
    [first], [second] = parse(raw), parse(raw)
    assert first.source_id == second.source_id
    assert len(first.source_id) == 24


def test_item_listed_twice_comes_out_once() -> None:
    assert len(parse(summary([incident_item(), incident_item()]))) == 1


def test_listed_components_are_kept_deduplicated() -> None:
    components = ["API", {"name": "Website"}, {"name": "API"}, 5, {"id": "x"}]
    [item] = parse(summary([incident_item(components=components)]))
    assert item.components == ("API", "Website")


def test_unreadable_times_and_durations_cost_the_field_not_the_document() -> None:
    bad_incident = incident_item(started="yesterday", updatedAt=None)
    bad_maintenance = maintenance_item(status="COMPLETED", start="soon", duration="ninety")
    incident, maintenance = parse(summary([bad_incident], [bad_maintenance]))
    assert incident.started_at is None
    assert maintenance.started_at is None
    assert maintenance.resolved_at == at("2026-09-02T10:00:00+00:00")


@pytest.mark.parametrize(
    "duration",
    ["²", "9" * 5000, 10**30, "-5", 1.5, True],
    ids=["unicode-digit", "huge-text", "huge-number", "negative-text", "fraction", "bool"],
)
def test_odd_durations_fall_back_to_the_last_update(duration: object) -> None:
    [item] = parse(summary(maintenances=[maintenance_item(status="COMPLETED", duration=duration)]))
    assert item.resolved_at == at("2026-09-02T10:00:00+00:00")


def test_entries_that_are_not_objects_are_skipped() -> None:
    assert parse(summary([None, "x", 3], [[]])) == []


def test_utf8_bom_is_accepted() -> None:
    assert len(parse(b"\xef\xbb\xbf" + summary([incident_item()]))) == 1


def test_parsing_the_same_bytes_twice_gives_equal_results() -> None:
    raw = summary([incident_item()], [maintenance_item()])
    assert parse(raw) == parse(raw)


def test_explicit_provider_wins_over_the_page_name() -> None:
    assert parse(summary([incident_item()]), provider="pplx")[0].provider == "pplx"


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("2026-09-03T14:05:00.000Z", datetime(2026, 9, 3, 14, 5, tzinfo=UTC)),
        (
            "Sat Jun 11 2022 18:55:50 GMT-0500 (Central Daylight Time)",
            datetime(2022, 6, 11, 23, 55, 50, tzinfo=UTC),
        ),
        ("Sat Jun 31 2022 18:55:50 GMT+0000 (no such day)", None),
        ("whenever", None),
        (None, None),
    ],
    ids=["iso", "javascript-date", "impossible-date", "words", "missing"],
)
def test_read_instatus_time_table(value: object, expected: datetime | None) -> None:
    assert read_instatus_time(value) == expected


# --- documents that cannot be read ----------------------------------------------------------------


@pytest.mark.parametrize(
    "raw",
    [
        b"",
        b"\xff\xfe\x00garbage",
        b"<html><body>Bad gateway</body></html>",
        summary([incident_item()])[:40],
        b"[1, 2]",
        b"42",
        b'{"message": "Not found"}',
        b'{"page": {}, "activeIncidents": {"id": "x"}}',
    ],
    ids=[
        "empty",
        "garbage",
        "html",
        "truncated",
        "list-of-numbers",
        "number",
        "unrelated-object",
        "incidents-not-a-list",
    ],
)
def test_unreadable_document_raises_feed_parse_error_naming_the_kind(raw: bytes) -> None:
    with pytest.raises(FeedParseError) as caught:
        parse(raw)
    assert caught.value.kind == "instatus"


# --- fuzzing --------------------------------------------------------------------------------------

times = st.one_of(
    st.datetimes(timezones=st.just(UTC)).map(datetime.isoformat),
    st.just("Sat Jun 11 2022 18:55:50 GMT+0000 (Coordinated Universal Time)"),
    json_values,
)
items = st.fixed_dictionaries(
    {},
    optional={
        "id": json_values,
        "name": json_values,
        "status": st.sampled_from(["INVESTIGATING", "RESOLVED", "NOTSTARTEDYET", "COMPLETED"])
        | json_values,
        "impact": st.sampled_from(["MAJOROUTAGE", "X"]) | json_values,
        "started": times,
        "start": times,
        "updatedAt": times,
        "duration": st.integers() | st.text(alphabet="0123456789", max_size=30) | json_values,
        "url": json_values,
        "components": json_values,
    },
)
documents = st.fixed_dictionaries(
    {"page": json_values},
    optional={
        "activeIncidents": st.lists(items | json_values, max_size=3),
        "activeMaintenances": st.lists(items, max_size=3),
    },
)


@FUZZ
@given(documents)
def test_any_instatus_shaped_document_parses_into_well_formed_incidents(
    document: dict[str, Any],
) -> None:
    for item in parse(json.dumps(document).encode()):
        assert_well_formed(item)


test_arbitrary_or_mutated_summary_bytes_raise_nothing_but_feed_parse_error = (
    fuzz_raises_only_parse_errors(
        parse, "instatus", [summary([incident_item()], [maintenance_item()])], shortest_cut=None
    )
)


def test_module_names_its_kind() -> None:
    assert instatus.KIND == "instatus"
