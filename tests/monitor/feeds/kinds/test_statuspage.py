"""Tests for the Atlassian Statuspage v2 JSON parser (monitor/feeds/kinds/statuspage.py)."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from monitor.errors import FeedParseError
from monitor.feeds.kinds import statuspage
from monitor.feeds.kinds.statuspage import parse
from monitor.feeds.model import IMPACTS, STATUSES, Incident
from tests.monitor.feeds.fuzzing import (
    FUZZ,
    assert_well_formed,
    at,
    fuzz_raises_only_parse_errors,
    json_values,
)
from tests.support import FIXTURES as SHARED_FIXTURES

FIXTURES = SHARED_FIXTURES / "feeds" / "statuspage"
CLOUDFLARE = FIXTURES / "ai-status-cloudflare-summary-trimmed.json"


def doc(**parts: Any) -> bytes:
    return json.dumps(parts).encode()


@pytest.fixture(scope="module")
def cloudflare() -> list[Incident]:
    return parse(CLOUDFLARE.read_bytes())


def by_id(incidents: list[Incident], source_id: str) -> Incident:
    return next(i for i in incidents if i.source_id == source_id)


# --- the captured Cloudflare summary --------------------------------------------------------------


def test_cloudflare_summary_gives_two_incidents_then_eleven_maintenances(
    cloudflare: list[Incident],
) -> None:
    assert [i.is_maintenance for i in cloudflare] == [False] * 2 + [True] * 11
    assert [i.source_id for i in cloudflare[:3]] == ["k7l4hzmthl3k", "9g65dxfbcjln", "xtmjwqxfxf1g"]
    assert cloudflare[-1].source_id == "d2fnybw2k1k2"


def test_provider_defaults_to_the_page_name_without_status(cloudflare: list[Incident]) -> None:
    assert {i.provider for i in cloudflare} == {"cloudflare"}


def test_explicit_provider_wins_over_the_page_name() -> None:
    assert {i.provider for i in parse(CLOUDFLARE.read_bytes(), provider="cf")} == {"cf"}


def test_open_incident_keeps_its_updates_oldest_first(cloudflare: list[Incident]) -> None:
    tunnel = cloudflare[0]
    assert tunnel.title == "Cloudflare Tunnel Availability Issues"
    assert (tunnel.status, tunnel.impact) == ("identified", "minor")
    assert tunnel.started_at == at("2026-09-11T21:55:52+00:00")
    assert tunnel.resolved_at is None
    assert tunnel.url == "https://www.cloudflarestatus.com/incidents/k7l4hzmthl3k"
    assert tunnel.components == ("Tunnel",)
    assert tunnel.regions == ()
    assert [(u.at, u.status) for u in tunnel.updates] == [
        (at("2026-09-11T21:55:52.123+00:00"), "investigating"),
        (at("2026-09-11T23:15:41.328+00:00"), "identified"),
        (at("2026-09-12T03:49:34.038+00:00"), "identified"),
    ]
    assert tunnel.updates[1].body == "The issue has been identified and a fix is being implemented."


def test_update_is_timed_by_display_at_when_it_differs_from_created_at(
    cloudflare: list[Incident],
) -> None:
    warp = by_id(cloudflare, "9g65dxfbcjln")
    assert len(warp.updates) == 8
    # update tmxm91dk7f98: created 18:56:11.313, displayed 18:56:11.000
    assert warp.updates[1].at == at("2026-08-27T18:56:11+00:00")
    assert warp.updates[1].body.startswith("The issue has been identified and we are working")
    assert warp.updates[0].status == "investigating"
    assert warp.updates[-1].at == at("2026-09-01T08:29:56.950+00:00")


def test_scheduled_maintenance_starts_at_its_scheduled_time_not_its_announcement(
    cloudflare: list[Incident],
) -> None:
    iad = by_id(cloudflare, "xtmjwqxfxf1g")
    assert iad.title == "IAD (Ashburn) on 2026-09-14"
    assert (iad.status, iad.impact, iad.is_maintenance) == ("scheduled", "maintenance", True)
    assert iad.started_at == at("2026-09-14T06:00:00+00:00")
    assert iad.resolved_at is None
    assert iad.components == ("Ashburn, VA, United States - (IAD)",)
    assert [(u.at, u.status) for u in iad.updates] == [
        (at("2026-09-10T09:50:53.381+00:00"), "scheduled")
    ]


def test_maintenance_body_keeps_its_paragraphs(cloudflare: list[Incident]) -> None:
    body = by_id(cloudflare, "xtmjwqxfxf1g").updates[0].body
    assert body.startswith("We will be performing scheduled maintenance in IAD (Ashburn)")
    assert "between 06:00 and 10:00 UTC.\n\nTraffic might be re-routed" in body


def test_maintenance_with_non_ascii_component_name_keeps_it(cloudflare: list[Incident]) -> None:
    assert by_id(cloudflare, "hykw18x3c0q5").components == ("São Paulo, Brazil - (GRU)",)


def test_parsing_the_same_bytes_twice_gives_equal_results() -> None:
    raw = CLOUDFLARE.read_bytes()
    assert parse(raw) == parse(raw)


@pytest.mark.parametrize(
    "name",
    ["ai-status-anthropic-summary.json", "ai-status-anthropic-components.json"],
    ids=["all-clear-summary", "components"],
)
def test_documents_without_incidents_give_none(name: str) -> None:
    assert parse((FIXTURES / name).read_bytes()) == []


# --- hand-made documents for the other endpoints --------------------------------------------------

# An incidents.json shaped like an older page that writes local -06:00 times and lacks
# started_at and components.
OLD_CHICAGO_PAGE: dict[str, Any] = {
    "page": {"id": "4lzycl8t1x0c", "name": "Emma", "url": "https://status.myemma.com"},
    "incidents": [
        {
            "id": "x0ljvc9m1wxj",
            "name": "Intermittent navigation/sending trouble for some users",
            "status": "resolved",
            "impact": "major",
            "created_at": "2019-02-20T12:00:19.418-06:00",
            "resolved_at": "2019-02-20T13:40:58.572-06:00",
            "shortlink": "http://stspg.io/7a0d3a4d2",
            "incident_updates": [
                {
                    "status": "resolved",
                    "body": "This incident has been resolved.",
                    "created_at": "2019-02-20T13:40:58.572-06:00",
                    "display_at": "2019-02-20T13:40:58.572-06:00",
                    "affected_components": None,
                },
                {
                    "status": "monitoring",
                    "body": "A fix has been implemented and we are monitoring the results.",
                    "created_at": "2019-02-20T13:11:24.478-06:00",
                    "display_at": "2019-02-20T13:11:24.478-06:00",
                    "affected_components": None,
                },
                {
                    "status": "investigating",
                    "body": "We are investigating.",
                    "created_at": "2019-02-20T12:00:19.418-06:00",
                    "display_at": None,
                },
            ],
        }
    ],
}


def test_old_incident_local_offsets_become_utc_and_created_at_stands_in_for_started_at() -> None:
    [incident] = parse(json.dumps(OLD_CHICAGO_PAGE).encode())
    assert incident.provider == "emma"
    assert (incident.status, incident.impact) == ("resolved", "major")
    assert incident.started_at == datetime(2019, 2, 20, 18, 0, 19, 418000, tzinfo=UTC)
    assert incident.resolved_at == datetime(2019, 2, 20, 19, 40, 58, 572000, tzinfo=UTC)
    assert incident.components == ()
    assert incident.url == "http://stspg.io/7a0d3a4d2"
    assert [(u.at.hour, u.at.minute, u.status) for u in incident.updates] == [
        (18, 0, "investigating"),
        (19, 11, "monitoring"),
        (19, 40, "resolved"),
    ]
    assert all(u.at.tzinfo is UTC for u in incident.updates)


def maintenance(**fields: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "id": "m1",
        "name": "Database upgrade",
        "status": "completed",
        "impact": "maintenance",
        "created_at": "2026-01-01T00:00:00Z",
        "started_at": "2026-01-01T00:00:00Z",
        "scheduled_for": "2026-01-05T02:00:00Z",
        "scheduled_until": "2026-01-05T04:00:00Z",
        "resolved_at": None,
        "incident_updates": [],
    }
    return base | fields


def test_completed_maintenance_without_resolved_at_ends_at_scheduled_until() -> None:
    [item] = parse(doc(scheduled_maintenances=[maintenance()]))
    assert (item.status, item.is_maintenance) == ("completed", True)
    assert item.started_at == at("2026-01-05T02:00:00+00:00")
    assert item.resolved_at == at("2026-01-05T04:00:00+00:00")


def test_completed_maintenance_prefers_its_resolved_at() -> None:
    [item] = parse(doc(scheduled_maintenances=[maintenance(resolved_at="2026-01-05T03:10:00Z")]))
    assert item.resolved_at == at("2026-01-05T03:10:00+00:00")


def test_maintenance_in_progress_has_no_end_yet() -> None:
    [item] = parse(doc(scheduled_maintenances=[maintenance(status="in_progress")]))
    assert (item.status, item.resolved_at) == ("in_progress", None)


def test_maintenance_listed_among_incidents_is_recognised_by_scheduled_for() -> None:
    [item] = parse(doc(incidents=[maintenance(impact="none", status="verifying")]))
    assert (item.is_maintenance, item.impact, item.status) == (True, "maintenance", "verifying")


def test_maintenance_never_reads_as_an_incident_status() -> None:
    updates = [{"status": "investigating", "body": "x", "created_at": "2026-01-05T02:00:00Z"}]
    [item] = parse(
        doc(scheduled_maintenances=[maintenance(status="resolved", incident_updates=updates)])
    )
    assert item.status == "completed"
    assert item.updates[0].status == "in_progress"


def test_item_listed_twice_comes_out_once() -> None:
    old = OLD_CHICAGO_PAGE["incidents"][0]
    assert len(parse(doc(incidents=[old], scheduled_maintenances=[old]))) == 1


def incident(**fields: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "id": "i1",
        "name": "API errors",
        "status": "investigating",
        "impact": "critical",
        "created_at": "2026-03-01T10:00:00Z",
        "started_at": "2026-03-01T09:55:00Z",
        "shortlink": "https://stspg.io/i1",
        "incident_updates": [],
    }
    return base | fields


def update(minute: int, status: str | None, body: Any = "text") -> dict[str, Any]:
    return {"status": status, "body": body, "created_at": f"2026-03-01T10:{minute:02d}:00Z"}


def test_update_without_a_known_status_word_carries_the_previous_state() -> None:
    updates = [update(30, "update"), update(20, "identified"), update(10, "investigating")]
    [item] = parse(doc(incidents=[incident(status="identified", incident_updates=updates)]))
    assert [u.status for u in item.updates] == ["investigating", "identified", "identified"]


def test_updates_posted_in_the_same_second_keep_the_feeds_newest_first_listing_reversed() -> None:
    updates = [update(10, "resolved", "second"), update(10, "monitoring", "first")]
    [item] = parse(doc(incidents=[incident(status="resolved", incident_updates=updates)]))
    assert [(u.status, u.body) for u in item.updates] == [
        ("monitoring", "first"),
        ("resolved", "second"),
    ]


def test_unknown_incident_status_falls_back_to_its_latest_update() -> None:
    updates = [update(20, "monitoring"), update(10, "investigating")]
    [item] = parse(doc(incidents=[incident(status="exploding", incident_updates=updates)]))
    assert item.status == "monitoring"


def test_unknown_status_without_updates_reads_as_investigating() -> None:
    [item] = parse(doc(incidents=[incident(status="exploding")]))
    assert (item.status, item.resolved_at) == ("investigating", None)


def test_resolved_incident_without_resolved_at_ends_at_its_resolving_update() -> None:
    updates = [update(50, "postmortem"), update(40, "resolved"), update(10, "investigating")]
    [item] = parse(doc(incidents=[incident(status="postmortem", incident_updates=updates)]))
    assert item.resolved_at == at("2026-03-01T10:40:00+00:00")


def test_html_in_an_update_body_comes_out_as_plain_text() -> None:
    body = "<p>We are <strong>investigating</strong> &amp; will update.</p><p>Next</p>"
    [item] = parse(doc(incidents=[incident(incident_updates=[update(10, None, body)])]))
    assert item.updates[0].body == "We are investigating & will update.\nNext"


def test_incident_without_components_takes_the_names_its_updates_affect() -> None:
    affected = [{"code": "c1", "name": "Compute - us-east-1", "new_status": "major_outage"}]
    updates = [update(10, "investigating") | {"affected_components": affected}]
    [item] = parse(doc(incidents=[incident(incident_updates=updates)]))
    assert item.components == ("Compute - us-east-1",)


def test_components_are_deduplicated_in_order_of_first_appearance() -> None:
    components = [{"name": "API"}, {"name": "Dashboard"}, {"name": "API"}, {"id": "x"}, "junk"]
    [item] = parse(doc(incidents=[incident(components=components)]))
    assert item.components == ("API", "Dashboard")


def test_incident_without_an_id_gets_a_stable_id_from_link_and_title() -> None:
    raw = doc(incidents=[incident(id=None)])
    [first], [second] = parse(raw), parse(raw)
    assert first.source_id == second.source_id
    assert len(first.source_id) == 24


def test_incident_without_a_shortlink_links_to_the_page() -> None:
    raw = doc(page={"name": "Acme", "url": "https://status.acme.io/"}, incidents=[incident()])
    [item] = parse(raw.replace(b'"shortlink": "https://stspg.io/i1"', b'"shortlink": null'))
    assert item.url == "https://status.acme.io/incidents/i1"


def test_unreadable_times_cost_the_field_not_the_document() -> None:
    updates = [update(10, "investigating"), {"status": "identified", "created_at": "soon"}]
    raw = doc(
        incidents=[incident(started_at="yesterday", created_at=12.5e30, incident_updates=updates)]
    )
    [item] = parse(raw)
    assert item.started_at == at("2026-03-01T10:10:00+00:00")
    assert len(item.updates) == 1


def test_entries_that_are_not_incidents_are_skipped() -> None:
    assert parse(doc(incidents=[None, 3, "x", {}, {"body": "no id or name"}])) == []


def test_empty_incident_list_is_a_valid_feed() -> None:
    assert parse(doc(page={"name": "Acme"}, incidents=[])) == []


@pytest.mark.parametrize(
    ("prefix", "encoding"),
    [(b"\xef\xbb\xbf", "utf-8"), (b"", "utf-16"), (b"\xef\xbb\xbf\n  ", "utf-8")],
    ids=["utf8-bom", "utf16-bom", "bom-and-whitespace"],
)
def test_byte_order_marks_do_not_change_the_result(
    prefix: bytes, encoding: str, cloudflare: list[Incident]
) -> None:
    text = CLOUDFLARE.read_text(encoding="utf-8")
    assert parse(prefix + text.encode(encoding)) == cloudflare


# --- documents that cannot be read ----------------------------------------------------------------


@pytest.mark.parametrize(
    "raw",
    [
        b"",
        b"   \n",
        b"\x00\x01\x02garbage",
        b"<!DOCTYPE html><html><body>Service Unavailable</body></html>",
        CLOUDFLARE.read_bytes()[:5000],
        b"[]",
        b'"summary"',
        b"null",
        b'{"error": "not found"}',
        b'{"incidents": {"id": "x"}}',
        b'{"page": {}, "scheduled_maintenances": "none"}',
    ],
    ids=[
        "empty",
        "blank",
        "garbage",
        "html-error-page",
        "truncated",
        "top-level-list",
        "top-level-string",
        "null",
        "unrelated-object",
        "incidents-not-a-list",
        "maintenances-not-a-list",
    ],
)
def test_unreadable_document_raises_feed_parse_error_naming_the_kind(raw: bytes) -> None:
    with pytest.raises(FeedParseError) as caught:
        parse(raw)
    assert caught.value.kind == "statuspage"
    assert str(caught.value).startswith("statuspage feed: ")


# --- fuzzing --------------------------------------------------------------------------------------

times = st.one_of(
    st.datetimes(timezones=st.just(UTC)).map(datetime.isoformat),
    st.sampled_from(["2019-02-20T12:00:19.418-06:00", "2026-09-14T06:00:00.000Z", "soon", ""]),
    json_values,
)
update_items = st.fixed_dictionaries(
    {},
    optional={
        "status": st.sampled_from(["investigating", "resolved", "scheduled", "completed", "?"]),
        "body": st.text(max_size=40) | json_values,
        "created_at": times,
        "display_at": times,
        "affected_components": json_values | st.lists(st.fixed_dictionaries({"name": st.text()})),
    },
)
incident_items = st.fixed_dictionaries(
    {},
    optional={
        "id": st.text(max_size=8) | json_values,
        "name": st.text(max_size=20) | json_values,
        "status": st.sampled_from([*STATUSES, "weird", ""]) | json_values,
        "impact": st.sampled_from([*IMPACTS, "huge"]) | json_values,
        "created_at": times,
        "started_at": times,
        "resolved_at": times,
        "scheduled_for": times,
        "scheduled_until": times,
        "shortlink": st.text(max_size=20) | json_values,
        "components": json_values | st.lists(st.fixed_dictionaries({"name": st.text()})),
        "incident_updates": st.lists(update_items, max_size=4) | json_values,
    },
)
documents = st.fixed_dictionaries(
    {"incidents": st.lists(incident_items | json_values, max_size=4)},
    optional={
        "page": json_values | st.fixed_dictionaries({"name": json_values, "url": json_values}),
        "scheduled_maintenances": st.lists(incident_items, max_size=3),
    },
)


@FUZZ
@given(documents)
def test_any_statuspage_shaped_document_parses_into_well_formed_incidents(
    document: dict[str, Any],
) -> None:
    for item in parse(json.dumps(document).encode()):
        assert_well_formed(item)
        if item.is_maintenance:
            assert item.impact == "maintenance"
        assert len(set(item.components)) == len(item.components)


test_arbitrary_or_mutated_fixture_bytes_raise_nothing_but_feed_parse_error = (
    fuzz_raises_only_parse_errors(parse, "statuspage", [CLOUDFLARE.read_bytes()], shortest_cut=1001)
)


def test_module_names_its_kind() -> None:
    assert statuspage.KIND == "statuspage"
