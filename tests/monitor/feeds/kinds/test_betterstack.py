"""Tests for the Better Stack status page parser (monitor/feeds/kinds/betterstack.py)."""

from __future__ import annotations

import copy
import json
from datetime import UTC, datetime
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from monitor.errors import FeedParseError
from monitor.feeds.kinds import betterstack
from monitor.feeds.kinds.betterstack import parse
from monitor.feeds.model import Incident
from tests.monitor.feeds.fuzzing import (
    FUZZ,
    assert_well_formed,
    at,
    fuzz_raises_only_parse_errors,
    json_values,
)
from tests.support import FIXTURES as SHARED_FIXTURES

FIXTURE = SHARED_FIXTURES / "feeds" / "betterstack"
TOGETHER = FIXTURE / "ai-status-together-index.json"
TOGETHER_DOC: dict[str, Any] = json.loads(TOGETHER.read_bytes())


@pytest.fixture(scope="module")
def together() -> list[Incident]:
    return parse(TOGETHER.read_bytes())


# --- the captured Together AI page ----------------------------------------------------------------


def test_together_page_has_one_report_a_completed_maintenance(together: list[Incident]) -> None:
    [report] = together
    assert report.source_id == "941865"
    assert report.title == "Scheduled network maintenance"
    assert (report.status, report.impact, report.is_maintenance) == (
        "completed",
        "maintenance",
        True,
    )
    assert report.started_at == at("2026-07-03T04:00:59+00:00")
    assert report.resolved_at == at("2026-07-03T06:59:00+00:00")


def test_provider_defaults_to_the_company_name(together: list[Incident]) -> None:
    assert together[0].provider == "together-ai"


def test_report_links_to_its_maintenance_page_on_the_custom_domain(
    together: list[Incident],
) -> None:
    assert together[0].url == "https://status.together.ai/maintenance/941865"


def test_affected_resources_become_components_skipping_ids_not_included(
    together: list[Incident],
) -> None:
    # 8 resources are affected; only 8911095 and 8918569 are in the trimmed document
    assert together[0].components == ("MiniMax M3", "GLM 5.2")
    assert together[0].regions == ()


def test_status_updates_come_oldest_first_with_the_state_at_posting(
    together: list[Incident],
) -> None:
    first, last = together[0].updates
    assert (first.at, first.status) == (at("2026-07-03T04:00:59+00:00"), "in_progress")
    assert first.body.startswith(
        "We will be performing scheduled network maintenance on July 2nd, 9 PM – midnight.\n\n"
    )
    assert (last.at, last.status, last.body) == (
        at("2026-07-03T06:59:00+00:00"),
        "completed",
        "Maintenance ended",
    )


def test_parsing_the_same_bytes_twice_gives_equal_results() -> None:
    assert parse(TOGETHER.read_bytes()) == parse(TOGETHER.read_bytes())


def test_explicit_provider_wins_over_the_company_name() -> None:
    assert parse(TOGETHER.read_bytes(), provider="together")[0].provider == "together"


# --- hand-made reports ----------------------------------------------------------------------------


def page_with(*included: dict[str, Any], **page: Any) -> bytes:
    """The Together document with its reports swapped for ``included`` and page fields changed."""
    doc = copy.deepcopy(TOGETHER_DOC)
    kept = [i for i in doc["included"] if i["type"] not in {"status_report", "status_update"}]
    doc["included"] = kept + list(included)
    doc["data"]["attributes"].update(page)
    return json.dumps(doc).encode()


def report(report_id: str, update_ids: list[str] | None = None, **attrs: Any) -> dict[str, Any]:
    attributes: dict[str, Any] = {
        "title": "Elevated errors on Kimi K3",
        "report_type": "manual",
        "starts_at": "2026-09-03T10:00:00.000Z",
        "ends_at": None,
        "affected_resources": [{"status_page_resource_id": "8978884", "status": "downtime"}],
        "aggregate_state": "downtime",
    } | attrs
    item: dict[str, Any] = {"id": report_id, "type": "status_report", "attributes": attributes}
    if update_ids is not None:
        links = [{"id": uid, "type": "status_update"} for uid in update_ids]
        item["relationships"] = {"status_updates": {"data": links}}
    return item


def status_update(update_id: str, published_at: Any, message: Any, **attrs: Any) -> dict[str, Any]:
    attributes = {"message": message, "published_at": published_at, "affected_resources": []}
    return {"id": update_id, "type": "status_update", "attributes": attributes | attrs}


OPEN_INCIDENT = (
    report("77", ["2", "1"]),
    status_update(
        "2",
        "2026-09-03T10:20:00.000Z",
        "Still down.",
        affected_resources=[{"status_page_resource_id": "8980894", "status": "degraded"}],
    ),
    status_update("1", "2026-09-03T10:05:00.000Z", "<p>We are <b>investigating</b>.</p>"),
)


def test_open_manual_report_is_an_investigating_incident() -> None:
    [item] = parse(page_with(*OPEN_INCIDENT))
    assert (item.source_id, item.status, item.is_maintenance) == ("77", "investigating", False)
    assert item.impact == "major"  # downtime outranks the update's "degraded"
    assert item.started_at == at("2026-09-03T10:00:00+00:00")
    assert item.resolved_at is None
    assert item.url == "https://status.together.ai/incident/77"
    assert item.components == ("Kimi K3", "Inkling Small")


def test_incident_updates_are_plain_text_and_oldest_first() -> None:
    [item] = parse(page_with(*OPEN_INCIDENT))
    assert [(u.at.minute, u.status, u.body) for u in item.updates] == [
        (5, "investigating", "We are investigating."),
        (20, "investigating", "Still down."),
    ]


def test_resolved_report_ends_at_its_ends_at_with_a_resolving_last_update() -> None:
    resolved = report(
        "78",
        ["3"],
        aggregate_state="resolved",
        ends_at="2026-09-03T11:00:00.000Z",
        affected_resources=[{"status_page_resource_id": "8978884", "status": "resolved"}],
    )
    update = status_update("3", "2026-09-03T11:02:00.000Z", "Fixed.")
    [item] = parse(page_with(resolved, update))
    assert (item.status, item.resolved_at) == ("resolved", at("2026-09-03T11:00:00+00:00"))
    assert item.updates[-1].status == "resolved"
    assert item.impact == "none"


def test_report_whose_resources_are_all_resolved_is_closed_at_its_last_update() -> None:
    resolved = report(
        "79",
        aggregate_state="degraded",
        affected_resources=[{"status_page_resource_id": "8978884", "status": "resolved"}],
    )
    update = status_update("4", "2026-09-03T10:45:00.000Z", "Recovered.", status_report_id=79)
    [item] = parse(page_with(resolved, update))
    assert item.status == "resolved"
    assert item.resolved_at == at("2026-09-03T10:45:00+00:00")
    assert [u.body for u in item.updates] == ["Recovered."]  # linked by status_report_id


@pytest.mark.parametrize(
    ("page_updated_at", "status"),
    [("2026-09-01T00:00:00.000Z", "scheduled"), ("2026-09-10T03:00:00.000Z", "in_progress")],
    ids=["before-start", "after-start"],
)
def test_open_maintenance_is_scheduled_until_it_starts_by_the_page_clock(
    page_updated_at: str, status: str
) -> None:
    upcoming = report(
        "80",
        ["5"],
        report_type="maintenance",
        starts_at="2026-09-10T02:00:00.000Z",
        ends_at="2026-09-10T04:00:00.000Z",
        aggregate_state="maintenance",
    )
    announcement = status_update("5", "2026-08-30T12:00:00.000Z", "Planned upgrade.")
    [item] = parse(page_with(upcoming, announcement, updated_at=page_updated_at))
    assert (item.status, item.impact, item.resolved_at) == (status, "maintenance", None)
    assert item.updates[0].status == "scheduled"
    assert item.url == "https://status.together.ai/maintenance/80"


def test_page_without_custom_domain_links_through_betteruptime() -> None:
    [item] = parse(page_with(*OPEN_INCIDENT, custom_domain=None))
    assert item.url == "https://together-public.betteruptime.com/incident/77"


def test_provider_falls_back_to_the_subdomain_then_the_kind() -> None:
    assert parse(page_with(*OPEN_INCIDENT, company_name=None))[0].provider == "together-public"
    bare = page_with(*OPEN_INCIDENT, company_name=None, subdomain=None, custom_domain=None)
    [item] = parse(bare)
    assert (item.provider, item.url) == ("betterstack", None)


def test_updates_without_a_readable_time_are_skipped() -> None:
    updates = [status_update("2", "whenever", "lost"), status_update("1", None, "lost too")]
    [item] = parse(page_with(report("77", ["2", "1"]), *updates))
    assert item.updates == ()
    assert item.started_at == at("2026-09-03T10:00:00+00:00")


def test_report_with_missing_fields_still_comes_out() -> None:
    [item] = parse(page_with({"id": "81", "type": "status_report"}))
    assert (item.source_id, item.title, item.status, item.impact) == (
        "81",
        "",
        "investigating",
        "none",
    )
    assert (item.started_at, item.components, item.updates) == (None, (), ())


def test_page_without_reports_is_a_valid_empty_feed() -> None:
    assert parse(page_with()) == []
    assert parse(b'{"data": {"id": "1", "type": "status_page", "attributes": {}}}') == []


def test_daily_resource_downtime_is_not_turned_into_incidents() -> None:
    # Kimi K3 shows "downtime" on 2026-09-03 in its status_history; only reports count
    assert len(parse(TOGETHER.read_bytes())) == 1


def test_utf8_bom_is_accepted(together: list[Incident]) -> None:
    assert parse(b"\xef\xbb\xbf" + TOGETHER.read_bytes()) == together


# --- documents that cannot be read ----------------------------------------------------------------


@pytest.mark.parametrize(
    "raw",
    [
        b"",
        b"\x89PNG\r\n\x1a\n",
        b"<!doctype html><title>Status</title>",
        TOGETHER.read_bytes()[:3000],
        b"[]",
        b'{"data": []}',
        b'{"errors": [{"status": "404"}]}',
        b'{"data": {"type": "status_page"}, "included": {"id": "1"}}',
    ],
    ids=[
        "empty",
        "binary",
        "html",
        "truncated",
        "top-level-list",
        "data-not-an-object",
        "error-object",
        "included-not-a-list",
    ],
)
def test_unreadable_document_raises_feed_parse_error_naming_the_kind(raw: bytes) -> None:
    with pytest.raises(FeedParseError) as caught:
        parse(raw)
    assert caught.value.kind == "betterstack"


# --- fuzzing --------------------------------------------------------------------------------------

times = st.datetimes(timezones=st.just(UTC)).map(datetime.isoformat) | json_values
ids = st.sampled_from(["1", "2", "3", 1, 2]) | json_values
affected = st.lists(
    st.fixed_dictionaries(
        {},
        optional={
            "status_page_resource_id": st.sampled_from(["8978884", "nope"]) | json_values,
            "status": st.sampled_from(["downtime", "degraded", "resolved", "maintenance"])
            | json_values,
        },
    ),
    max_size=3,
)
included_items = st.fixed_dictionaries(
    {
        "id": ids,
        "type": st.sampled_from(["status_report", "status_update", "status_page_resource"])
        | json_values,
    },
    optional={
        "attributes": st.fixed_dictionaries(
            {},
            optional={
                "title": json_values,
                "report_type": st.sampled_from(["manual", "maintenance"]) | json_values,
                "starts_at": times,
                "ends_at": times,
                "published_at": times,
                "message": json_values,
                "aggregate_state": st.sampled_from(["resolved", "downtime"]) | json_values,
                "affected_resources": affected | json_values,
                "status_report_id": ids,
                "public_name": json_values,
            },
        )
        | json_values,
        "relationships": st.fixed_dictionaries(
            {
                "status_updates": st.fixed_dictionaries(
                    {"data": st.lists(st.fixed_dictionaries({"id": ids}), max_size=3) | json_values}
                )
            }
        )
        | json_values,
    },
)
documents = st.fixed_dictionaries(
    {
        "data": st.fixed_dictionaries(
            {},
            optional={
                "attributes": st.fixed_dictionaries(
                    {},
                    optional={
                        "company_name": json_values,
                        "updated_at": times,
                        "custom_domain": json_values,
                    },
                )
                | json_values
            },
        ),
        "included": st.lists(included_items | json_values, max_size=5),
    }
)


@FUZZ
@given(documents)
def test_any_betterstack_shaped_document_parses_into_well_formed_incidents(
    document: dict[str, Any],
) -> None:
    for item in parse(json.dumps(document).encode()):
        assert_well_formed(item)


test_arbitrary_or_mutated_fixture_bytes_raise_nothing_but_feed_parse_error = (
    fuzz_raises_only_parse_errors(parse, "betterstack", [TOGETHER.read_bytes()], shortest_cut=1001)
)


def test_module_names_its_kind() -> None:
    assert betterstack.KIND == "betterstack"
