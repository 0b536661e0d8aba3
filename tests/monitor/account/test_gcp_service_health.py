"""The gcp_service_health source: its parser on Google's published Personalized Service Health
event (tests/fixtures/account/; its trailing commas removed, nothing else), and its listing
against a local server standing in for servicehealth.googleapis.com."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from monitor.account.kind import EventPollContext
from monitor.account.kinds import KINDS
from monitor.account.kinds.gcp_service_health import (
    GcpServiceHealthOptions,
    MalformedEvent,
    event,
    events,
)
from monitor.account.model import AccountEvent
from monitor.errors import EventPollFailed
from tests.monitor.account.captured import trailing_commas_removed
from tests.support import ApiServer

PUBLISHED = "6-gcp-psh-event-get-docs-scrape.json.txt"
NOW = datetime(2026, 12, 4, 12, 0, tzinfo=UTC)
EVENTS = "/v1/projects/p1/locations/global/events"


def published() -> dict[str, Any]:
    found: dict[str, Any] = trailing_commas_removed(PUBLISHED)
    return found


def test_the_published_event_is_a_closed_issue_of_cloud_sql_in_its_location() -> None:
    assert event(published()) == AccountEvent(
        provider="gcp",
        source="gcp_service_health",
        key="projects/ PROJECT_ID /locations/global/events/ EVENT_ID ",  # Google's placeholder
        kind="issue",
        status="closed",
        starts_at=datetime(2022, 10, 18, 17, 41, 20, 112287, tzinfo=UTC),
        ends_at=datetime(2022, 10, 18, 18, 0, 5, 690761, tzinfo=UTC),
        updated_at=datetime(2022, 10, 18, 18, 0, 5, 690761, tzinfo=UTC),
        region="us-central1",
        service="Google Cloud SQL",
        title="We are experiencing a connectivity issue affecting Google Cloud SQL in us-east1, "
        "australia-southeast2.",
        detail="The issue with Google Cloud SQL has been resolved for all affected projects as of "
        "Tuesday, 2022-10-18 11:00 US/Pacific. We thank you for your patience while we worked on "
        "resolving the issue.",
        entities=(),
        raw_type="CONFIRMED_INCIDENT",
    )


def test_a_page_without_events_is_none() -> None:
    assert events({}) == []


@pytest.mark.parametrize(
    ("change", "field"),
    [
        pytest.param(lambda e: e.pop("name"), "name", id="no-name"),
        pytest.param(lambda e: e.update(state="STATE_UNSPECIFIED"), "state", id="unknown-state"),
        pytest.param(
            lambda e: e.update(eventImpacts={"a": 1}), "eventImpacts", id="impacts-not-list"
        ),
        pytest.param(lambda e: e.update(updateTime="later"), "updateTime", id="update-no-time"),
    ],
)
def test_a_malformed_event_is_refused_naming_its_field(
    change: Callable[[dict[str, Any]], object], field: str
) -> None:
    raw = published()
    change(raw)
    with pytest.raises(MalformedEvent) as raised:
        event(raw)
    assert str(raised.value).startswith(f"{field}:")


def polled(server: ApiServer, since: datetime | None = None, timeout_s: float = 2.0) -> list[Any]:
    opts = GcpServiceHealthOptions(projects=("p1",), endpoint=server.url, token="g0g")
    context = EventPollContext("gcp", NOW, timeout_s, since=since)
    return list(KINDS["gcp_service_health"].list_events(opts, context))


def test_a_poll_follows_page_tokens_with_the_checkpoint_as_its_filter() -> None:
    def answer(path: str, query: dict[str, str]) -> tuple[int, object]:
        if query.get("pageToken") == "next":
            return 200, {"events": [{**published(), "name": "projects/p1/e/2", "state": "ACTIVE"}]}
        return 200, {"events": [published()], "nextPageToken": "next"}

    server = ApiServer(answer)
    try:
        first, second = polled(server, since=NOW - timedelta(hours=1))
    finally:
        server.close()
    assert (first.status, second.status, second.key) == ("closed", "open", "projects/p1/e/2")
    (path, query, headers), (_, again, _) = server.requests
    assert path == EVENTS
    assert query == {"filter": 'update_time>="2026-12-04T11:00:00Z"'}
    assert again["pageToken"] == "next"
    assert headers["authorization"] == "Bearer g0g"


def test_a_refusal_and_a_timeout_are_one_line_naming_the_project() -> None:
    said = "Service Health API has not been used in project p1 before or it is disabled."
    refusal = {"error": {"code": 403, "message": said, "status": "PERMISSION_DENIED"}}
    server = ApiServer(lambda path, query: (403, refusal))
    try:
        with pytest.raises(EventPollFailed) as refused:
            polled(server)
        server.answer = lambda path, query: (200, {"events": []})
        server.delay_s = 1.0
        with pytest.raises(EventPollFailed) as slow:
            polled(server, timeout_s=0.2)
    finally:
        server.close()
    assert str(refused.value) == (
        "gcp_service_health: project p1: HTTP 403: PERMISSION_DENIED: Service Health API has "
        "not been used in project p1 before or it is disabled."
    )
    assert str(slow.value) == "gcp_service_health: project p1: timed out"


def test_an_answer_that_is_not_json_is_one_line() -> None:
    server = ApiServer(lambda path, query: (200, b"<html>sign in</html>"))
    try:
        with pytest.raises(EventPollFailed, match="project p1: answered a body that is not JSON"):
            polled(server)
    finally:
        server.close()
