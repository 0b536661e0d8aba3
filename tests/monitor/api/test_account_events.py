"""/api/v1/events: the providers' pushes (an EventBridge aws.health delivery, an Azure Service
Health alert: the real published samples), an agent's interruption notice, and the listing.

Each push is stored once however often it is delivered, an older delivery after a newer one
changes nothing, a malformed body is a 422 naming the field with nothing stored, and the body's
bound is kept on both sides of it. The app is the real one, its request sessions inside the
test's transaction, on SQLite and PostgreSQL."""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import Any, get_args

import pytest
from sqlalchemy import Engine
from sqlalchemy.orm import Session, sessionmaker

from monitor import tokens
from monitor.api.account_events import MAX_NOTICE_BYTES, MAX_PUSH_BYTES, NoticeKind
from monitor.api.app import create_app
from monitor.api.deps import db_session
from monitor.db.base import utcnow
from monitor.db.models import Target
from monitor.interruptions.model import KINDS
from monitor.settings import Settings
from tests.support import ApiClient

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "account"
EVENTBRIDGE: dict[str, Any] = json.loads(
    (FIXTURES / "1-aws-health-ec2-instance-store-issue.json").read_text()
)
SERVICE_HEALTH: dict[str, Any] = json.loads(
    (FIXTURES / "5-azure-servicehealth-incident-commonschema-testaction.json").read_text()
)
AWS_KEY = EVENTBRIDGE["detail"]["eventArn"]
AWS = "/api/v1/events/aws-health"
AZURE = "/api/v1/events/azure-service-health"


@dataclass
class World:
    api: ApiClient
    admin: str
    read: str
    events: str
    box: str  # the heartbeat token of target box-1

    def post(self, path: str, token: str | None, **kwargs: Any) -> Any:
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        return self.api.post(path, headers=headers | kwargs.pop("headers", {}), **kwargs)

    def listed(self, **query: Any) -> dict[str, Any]:
        response: Any = self.api.get(
            "/api/v1/events", headers={"Authorization": f"Bearer {self.read}"}, params=query
        )
        assert response.status_code == 200, response.text
        page: dict[str, Any] = response.json()
        return page


@pytest.fixture
def world(engine: Engine, sessions: sessionmaker[Session], tmp_path: Path) -> Iterator[World]:
    """The real app; the instance the EventBridge sample names (i-abcd1111) is target node-a;
    box-1 (an Azure VM with an agent) has a heartbeat token; box-2 another; tokens of each scope."""
    settings = Settings(  # type: ignore[call-arg]
        database_url=engine.url.render_as_string(hide_password=False),
        config=tmp_path / "none.yaml",
        state_dir=tmp_path / "state",
    )
    app = create_app(settings)

    def session_in_test_transaction() -> Iterator[Session]:
        with sessions() as session:
            yield session

    app.dependency_overrides[db_session] = session_in_test_transaction
    with sessions() as session:
        node = Target(
            name="node-a",
            kind="http",
            url="http://10.0.0.5/healthz",
            provider="aws",
            region="us-west-2",
            external_id="i-abcd1111",
        )
        box = Target(name="box-1", kind="heartbeat", provider="azure", external_id="vm-1")
        other = Target(name="box-2", kind="heartbeat")
        gone = Target(name="gone", kind="heartbeat", retired_at=utcnow())
        session.add_all([node, box, other, gone])
        session.flush()
        box_token = tokens.create_heartbeat_token(session, box)
        tokens.create_heartbeat_token(session, other)
        admin = tokens.create(session, "admin", "admin")
        read = tokens.create(session, "read", "read")
        pushes = tokens.create(session, "eventbridge", "events")
        session.commit()
    with ApiClient(app) as client:
        yield World(client, admin, read, pushes, box_token)


def aws_reading(updated: str, status: str, ends: str | None = None) -> dict[str, Any]:
    """The EventBridge sample read again later: a newer ``lastUpdatedTime`` and status."""
    document = copy.deepcopy(EVENTBRIDGE)
    document["detail"] |= {"lastUpdatedTime": updated, "statusCode": status}
    if ends:
        document["detail"]["endTime"] = ends
    return document


def azure_reading(at: str, stage: str) -> dict[str, Any]:
    document = copy.deepcopy(SERVICE_HEALTH)
    document["data"]["alertContext"]["eventTimestamp"] = at
    document["data"]["alertContext"]["properties"]["stage"] = stage
    return document


# --------------------------------------------------------------------------- aws-health


def test_an_eventbridge_delivery_is_stored_with_its_targets_and_listed(world: World) -> None:
    response = world.post(AWS, world.events, json=EVENTBRIDGE)
    assert response.status_code == 201, response.text
    stored = response.json()
    assert stored == {
        "id": stored["id"],
        "provider": "aws",
        "key": AWS_KEY,
        "kind": "issue",
        "status": "upcoming",  # no statusCode in this old sample; it starts after its delivery
        "outcome": "new",
        "targets": ["node-a"],
    }
    (event,) = world.listed()["items"]
    assert event["id"] == stored["id"]
    assert (event["source"], event["via"], event["readings"]) == ("aws_health", "push", 1)
    assert event["region"] == "us-west-2"  # no eventRegion in this old sample: its ARN's
    assert event["service"] == "EC2"
    assert event["entities"] == ["i-abcd1111"]
    assert event["starts_at"] == "2016-06-05T15:10:09Z"
    assert event["title"] == "EC2 instance store drive performance degraded"
    assert event["detail"] == "A description of the event will be provided here"
    assert event["raw_type"] == "AWS_EC2_INSTANCE_STORE_DRIVE_PERFORMANCE_DEGRADED"


def test_the_events_region_not_the_deliverys_is_stored(world: World) -> None:
    document = copy.deepcopy(EVENTBRIDGE)
    document["detail"]["eventRegion"] = "eu-west-1"  # the rule delivered from us-west-2
    assert world.post(AWS, world.events, json=document).status_code == 201
    assert world.listed()["items"][0]["region"] == "eu-west-1"


def test_an_admin_token_may_push_too(world: World) -> None:
    assert world.post(AWS, world.admin, json=EVENTBRIDGE).status_code == 201


def test_a_duplicate_delivery_is_stored_once_and_counted(world: World) -> None:
    first = world.post(AWS, world.events, json=EVENTBRIDGE).json()
    again = world.post(AWS, world.events, json=EVENTBRIDGE)
    assert again.status_code == 200
    assert again.json() == {**first, "outcome": "unchanged"}
    page = world.listed()
    assert page["total"] == 1
    assert page["items"][0]["readings"] == 2


def test_a_newer_reading_updates_and_an_older_one_delivered_late_changes_nothing(
    world: World,
) -> None:
    older = aws_reading("2016-06-05T07:00:00Z", "open")
    newer = aws_reading("2016-06-05T09:00:00Z", "closed", ends="Sun, 05 Jun 2016 08:45:00 GMT")
    first = world.post(AWS, world.events, json=older).json()
    updated = world.post(AWS, world.events, json=newer).json()
    stale = world.post(AWS, world.events, json=older)
    assert stale.status_code == 200
    assert (first["outcome"], updated["outcome"]) == ("new", "updated")
    assert stale.json() == {**updated, "outcome": "stale"}  # what is stored: the newer one
    (event,) = world.listed()["items"]
    assert (event["status"], event["ends_at"]) == ("closed", "2016-06-05T08:45:00Z")
    assert (event["updated_at"], event["readings"]) == ("2016-06-05T09:00:00Z", 3)


def without(document: dict[str, Any], *path: str) -> dict[str, Any]:
    changed = copy.deepcopy(document)
    parent = changed
    for part in path[:-1]:
        parent = parent[part]
    del parent[path[-1]]
    return changed


def replaced(document: dict[str, Any], value: Any, *path: str) -> dict[str, Any]:
    changed = copy.deepcopy(document)
    parent = changed
    for part in path[:-1]:
        parent = parent[part]
    parent[path[-1]] = value
    return changed


@pytest.mark.parametrize(
    ("body", "field"),
    [
        (without(EVENTBRIDGE, "source"), "source"),
        (replaced(EVENTBRIDGE, "aws.ec2", "source"), "source"),
        (without(EVENTBRIDGE, "detail-type"), "detail-type"),
        (replaced(EVENTBRIDGE, "EC2 Spot Instance Interruption Warning", "detail-type"),
         "detail-type"),
        (without(EVENTBRIDGE, "detail"), "detail"),
        (replaced(EVENTBRIDGE, "text", "detail"), "detail"),
        (without(EVENTBRIDGE, "detail", "eventArn"), "detail.eventArn"),
        (without(EVENTBRIDGE, "detail", "eventTypeCode"), "detail.eventTypeCode"),
        (without(EVENTBRIDGE, "detail", "eventTypeCategory"), "detail.eventTypeCategory"),
        (replaced(EVENTBRIDGE, "yesterday", "detail", "startTime"), "detail.startTime"),
        (replaced(EVENTBRIDGE, "soon", "time"), "detail.time"),
        (replaced(EVENTBRIDGE, "pending", "detail", "statusCode"), "detail.statusCode"),
        (replaced(EVENTBRIDGE, "i-abcd1111", "detail", "affectedEntities"),
         "detail.affectedEntities"),
        (replaced(EVENTBRIDGE, "x" * 501, "detail", "eventArn"), "detail.eventArn"),
    ],
    ids=["no-source", "other-source", "no-detail-type", "other-detail-type", "no-detail",
         "detail-text", "no-arn", "no-code", "no-category", "bad-start", "bad-time",
         "bad-status", "entities-text", "arn-too-long"],
)  # fmt: skip
def test_a_malformed_delivery_is_a_422_naming_the_field_and_stores_nothing(
    world: World, body: dict[str, Any], field: str
) -> None:
    response = world.post(AWS, world.events, json=body)
    assert response.status_code == 422, response.text
    error = response.json()["error"]
    assert error["code"] == "validation_error"
    assert error["message"].startswith(f"{field}: ")
    assert [(d["location"], d["path"]) for d in error["details"]] == [("body", field)]
    assert world.listed()["total"] == 0


@pytest.mark.parametrize(
    ("raw", "said"),
    [
        (b"", "the body is empty"),
        (b"{not json", "not valid JSON"),
        (b"[1, 2]", "valid dictionary"),
        (b'{"source": NaN}', "NaN is not a JSON number"),
        (b'{"source": "aws.health\\u0000"}', "NUL"),
        (b'{"source": "\\ud800"}', "lone surrogate"),
    ],
    ids=["empty", "not-json", "a-list", "nan", "nul", "lone-surrogate"],
)
@pytest.mark.parametrize("path", [AWS, AZURE])
def test_a_body_that_is_not_a_json_object_is_a_422(
    world: World, path: str, raw: bytes, said: str
) -> None:
    headers = {"Content-Type": "application/json"}
    response = world.post(path, world.events, content=raw, headers=headers)
    assert response.status_code == 422, response.text
    assert said in response.json()["error"]["message"]


def test_a_time_past_year_9999_in_utc_is_a_422_not_a_500(world: World) -> None:
    body = replaced(EVENTBRIDGE, "9999-12-31T23:00:00-05:00", "detail", "startTime")
    response = world.post(AWS, world.events, json=body)
    assert response.status_code == 422, response.text


def padded(size: int) -> bytes:
    """The EventBridge sample, its description padded so the body is ``size`` bytes."""
    base = json.dumps(EVENTBRIDGE).encode()
    body = replaced(EVENTBRIDGE, [{"language": "en_US", "latestDescription": ""}],
                    "detail", "eventDescription")  # fmt: skip
    empty = len(json.dumps(body).encode())
    body["detail"]["eventDescription"][0]["latestDescription"] = "x" * (size - empty)
    raw = json.dumps(body).encode()
    assert len(raw) == size
    assert len(base) < size
    return raw


def test_the_body_bound_is_256_kib_on_both_sides(world: World) -> None:
    headers = {"Content-Type": "application/json"}
    over = world.post(AWS, world.events, content=padded(MAX_PUSH_BYTES + 1), headers=headers)
    assert over.status_code == 413
    assert over.json()["error"]["code"] == "payload_too_large"
    assert world.listed()["total"] == 0
    at = world.post(AWS, world.events, content=padded(MAX_PUSH_BYTES), headers=headers)
    assert at.status_code == 201, at.text
    assert world.listed()["items"][0]["detail"] == "x" * 500  # the first line, cut


@pytest.mark.parametrize("path", [AWS, AZURE])
def test_who_may_push_a_providers_event(world: World, path: str) -> None:
    body = EVENTBRIDGE if path == AWS else SERVICE_HEALTH
    assert world.post(path, None, json=body).status_code == 401
    assert world.post(path, "slm_" + "A" * 43, json=body).status_code == 401
    assert world.post(path, world.box, json=body).status_code == 401  # a heartbeat token
    refused = world.post(path, world.read, json=body)
    assert refused.status_code == 403
    assert "events scope" in refused.json()["error"]["message"]
    assert world.listed()["total"] == 0


def test_an_action_groups_webhook_may_carry_an_events_token_in_its_url(world: World) -> None:
    """An action group's webhook sends no header of the user's: Azure documents a token in the
    URI. A URL lands in logs, so only a token that can do nothing but push is taken there."""

    def via_url(path: str, token: str) -> Any:
        body = SERVICE_HEALTH if path == AZURE else EVENTBRIDGE
        return world.api.post(path, params={"token": token}, json=body)

    assert via_url(AZURE, world.events).status_code == 201
    admin = via_url(AZURE, world.admin)
    assert admin.status_code == 403
    assert "in the URL must have the events scope" in admin.json()["error"]["message"]
    assert via_url(AZURE, world.read).status_code == 403
    assert via_url(AZURE, "slm_" + "A" * 43).status_code == 401
    assert via_url(AWS, world.events).status_code == 401  # EventBridge sends the header
    assert world.listed()["items"][0]["readings"] == 1


def test_an_anonymous_oversize_body_is_refused_as_unauthorized_before_it_is_read(
    world: World,
) -> None:
    headers = {"Content-Type": "application/json"}
    response = world.post(AWS, None, content=padded(MAX_PUSH_BYTES + 1), headers=headers)
    assert response.status_code == 401


# --------------------------------------------------------------------------- azure-service-health


def test_a_service_health_alert_is_stored(world: World) -> None:
    response = world.post(AZURE, world.events, json=SERVICE_HEALTH)
    assert response.status_code == 201, response.text
    assert response.json() | {"id": 0} == {
        "id": 0,
        "provider": "azure",
        "key": "TEST-TTT",
        "kind": "issue",
        "status": "closed",
        "outcome": "new",
        "targets": [],  # Global: the whole account, no target of its own
    }
    (event,) = world.listed()["items"]
    assert (event["source"], event["via"], event["scope"]) == (
        "azure_service_health",
        "push",
        "account",
    )
    assert (event["region"], event["service"]) == ("Global", "AzureServiceName")
    assert event["title"] == "TestActionGroup-TestServiceHealthAlert"
    assert event["detail"] == "ThisisatestfromServiceHealthAlert"
    assert event["ends_at"] == "2025-04-15T18:20:36.256000Z"


def test_impacted_services_as_the_escaped_json_string_real_deliveries_carry(
    world: World,
) -> None:
    services = [
        {"ImpactedRegions": [{"RegionName": "East US"}, {"RegionName": "West Europe"}],
         "ServiceName": "Virtual Machines"},
    ]  # fmt: skip
    body = replaced(SERVICE_HEALTH, json.dumps(services),
                    "data", "alertContext", "properties", "impactedServices")  # fmt: skip
    assert world.post(AZURE, world.events, json=body).status_code == 201
    assert world.listed()["items"][0]["region"] == "East US, West Europe"


def test_many_impacted_regions_are_stored_cut_to_the_columns_width(world: World) -> None:
    # Azure's public regions, about sixty, fit; a list beyond the column's 500 is cut
    regions = [{"RegionName": f"Region Number {n}"} for n in range(60)]
    services = json.dumps([{"ImpactedRegions": regions, "ServiceName": "Virtual Machines"}])
    body = replaced(SERVICE_HEALTH, services,
                    "data", "alertContext", "properties", "impactedServices")  # fmt: skip
    assert world.post(AZURE, world.events, json=body).status_code == 201
    region = world.listed()["items"][0]["region"]
    assert len(region) == 500
    assert region.startswith("Region Number 0, Region Number 1, ")


def test_a_service_health_alert_delivered_twice_and_out_of_order(world: World) -> None:
    active = azure_reading("2025-04-15T18:00:00Z", "Active")
    resolved = azure_reading("2025-04-15T20:00:00Z", "Resolved")
    first = world.post(AZURE, world.events, json=active).json()
    again = world.post(AZURE, world.events, json=active).json()
    later = world.post(AZURE, world.events, json=resolved).json()
    late = world.post(AZURE, world.events, json=active).json()
    assert [r["outcome"] for r in (first, again, later, late)] == [
        "new", "unchanged", "updated", "stale"
    ]  # fmt: skip
    assert {r["id"] for r in (first, again, later, late)} == {first["id"]}
    assert late["status"] == "closed"
    (event,) = world.listed()["items"]
    assert (event["status"], event["readings"]) == ("closed", 4)


PROPS = ("data", "alertContext", "properties")


@pytest.mark.parametrize(
    ("body", "field"),
    [
        (without(SERVICE_HEALTH, "data"), "data"),
        (without(SERVICE_HEALTH, "data", "essentials"), "data.essentials"),
        (replaced(SERVICE_HEALTH, "ActivityLog", "data", "essentials", "monitoringService"),
         "data.essentials.monitoringService"),
        (without(SERVICE_HEALTH, "data", "alertContext"), "data.alertContext"),
        (without(SERVICE_HEALTH, *PROPS), "data.alertContext.properties"),
        (without(SERVICE_HEALTH, *PROPS, "trackingId"), "data.alertContext.properties.trackingId"),
        (without(SERVICE_HEALTH, *PROPS, "incidentType"),
         "data.alertContext.properties.incidentType"),
        (without(SERVICE_HEALTH, *PROPS, "stage"), "data.alertContext.properties.stage"),
        (replaced(SERVICE_HEALTH, "Pondering", *PROPS, "stage"),
         "data.alertContext.properties.stage"),
        (replaced(SERVICE_HEALTH, "[{", *PROPS, "impactedServices"),
         "data.alertContext.properties.impactedServices"),
        (replaced(SERVICE_HEALTH, "May", *PROPS, "impactStartTime"),
         "data.alertContext.properties.impactStartTime"),
    ],
    ids=["no-data", "no-essentials", "activity-log", "no-context", "no-properties",
         "no-tracking-id", "no-incident-type", "no-stage", "unknown-stage",
         "services-not-json", "bad-start"],
)  # fmt: skip
def test_a_malformed_alert_is_a_422_naming_the_field_and_stores_nothing(
    world: World, body: dict[str, Any], field: str
) -> None:
    response = world.post(AZURE, world.events, json=body)
    assert response.status_code == 422, response.text
    error = response.json()["error"]
    assert error["message"].startswith(f"{field}: ")
    assert [d["path"] for d in error["details"]] == [field]
    assert world.listed()["total"] == 0


# --------------------------------------------------------------------------- notices


def notice(**fields: Any) -> dict[str, Any]:
    ahead = (utcnow() + timedelta(minutes=2)).isoformat()
    return {"cloud": "azure", "kind": "redeploy", "deadline": ahead,
            "key": "C7061BAC-AFDC-4513-B24B-AA5F13A16123",
            "detail": "Redeploy Scheduled by Platform", **fields}  # fmt: skip


def test_the_notice_kinds_are_the_metadata_services() -> None:
    assert get_args(NoticeKind) == KINDS


def test_an_agents_notice_is_stored_for_its_target(world: World) -> None:
    response = world.post("/api/v1/events/notices/box-1", world.box, json=notice())
    assert response.status_code == 201, response.text
    stored = response.json()
    assert stored | {"id": 0} == {
        "id": 0,
        "provider": "azure",
        "key": "azure:box-1:C7061BAC-AFDC-4513-B24B-AA5F13A16123",
        "kind": "scheduled_maintenance",
        "status": "upcoming",
        "outcome": "new",
        "targets": ["box-1"],
    }
    (event,) = world.listed(target="box-1")["items"]
    assert (event["source"], event["via"], event["reported_for"]) == ("agent", "agent", "box-1")
    assert (event["raw_type"], event["title"]) == ("metadata:redeploy", "Azure redeploy notice")
    assert event["entities"] == ["vm-1"]
    assert event["detail"] == "Redeploy Scheduled by Platform"
    assert event["accepted"] is False


def test_a_notice_fires_interruption_notice_at_once_with_no_evaluation(world: World) -> None:
    body = notice(cloud="aws", kind="preemption", key="2026-12-04T22:02:00Z terminate")
    assert world.post("/api/v1/events/notices/box-1", world.box, json=body).status_code == 201
    response: Any = world.api.get(
        "/api/v1/alerts", headers={"Authorization": f"Bearer {world.read}"}
    )
    (alert,) = response.json()["items"]
    assert (alert["rule"], alert["state"], alert["severity"]) == (
        "interruption_notice",
        "firing",
        "critical",
    )
    assert alert["labels"]["target"] == "box-1"
    assert alert["labels"]["event"] == "aws:box-1:2026-12-04T22:02:00Z terminate"


def test_an_acknowledged_notice_is_accepted_maintenance(world: World) -> None:
    world.post("/api/v1/events/notices/box-1", world.box, json=notice(acknowledged=True))
    assert world.listed()["items"][0]["accepted"] is True


def test_a_notice_whose_deadline_passed_or_is_not_given_is_open(world: World) -> None:
    passed = (utcnow() - timedelta(seconds=5)).isoformat()
    aws = {"cloud": "aws", "kind": "preemption", "key": "2026-12-04T22:02:00Z terminate"}
    for body in (aws | {"deadline": passed}, aws | {"key": "x", "deadline": None}):
        response = world.post("/api/v1/events/notices/box-1", world.box, json=body)
        assert (response.json()["kind"], response.json()["status"]) == ("preemption", "open")


def test_a_notice_pushed_again_is_stored_once(world: World) -> None:
    body = notice()
    first = world.post("/api/v1/events/notices/box-1", world.box, json=body).json()
    again = world.post("/api/v1/events/notices/box-1", world.box, json=body)
    assert again.status_code == 200
    assert again.json() == {**first, "outcome": "unchanged"}
    assert world.listed()["items"][0]["readings"] == 2


def test_one_notice_heard_on_two_boxes_is_two_events(world: World) -> None:
    with_token = world.post("/api/v1/events/notices/box-1", world.box, json=notice())
    by_events = world.post("/api/v1/events/notices/box-2", world.events, json=notice())
    assert (with_token.status_code, by_events.status_code) == (201, 201)
    assert world.listed()["total"] == 2
    assert [e["targets"] for e in world.listed(target="box-2")["items"]] == [["box-2"]]


@pytest.mark.parametrize(
    ("target", "token", "status"),
    [
        ("box-2", "box", 401),  # box-1's heartbeat token on another target
        ("box-1", None, 401),
        ("box-1", "read", 403),
        ("box-1", "admin", 201),
        ("nobody", "events", 404),
        ("gone", "events", 404),
    ],
)
def test_who_may_push_a_notice(world: World, target: str, token: str | None, status: int) -> None:
    presented = getattr(world, token) if token else None
    response = world.post(f"/api/v1/events/notices/{target}", presented, json=notice())
    assert response.status_code == status, response.text


@pytest.mark.parametrize(
    ("fields", "field"),
    [
        ({"cloud": "lambda"}, "cloud"),
        ({"kind": "reclaim"}, "kind"),
        ({"deadline": "2026-12-04T22:02:00"}, "deadline"),
        ({"deadline": "in two minutes"}, "deadline"),
        ({"key": ""}, "key"),
        ({"key": "k" * 251}, "key"),
        ({"acknowledged": "maybe"}, "acknowledged"),
        ({"acknowledged": 0}, "acknowledged"),
    ],
    ids=[
        "cloud",
        "kind",
        "naive-deadline",
        "bad-deadline",
        "empty-key",
        "long-key",
        "ack",
        "ack-a-number",
    ],
)
def test_a_malformed_notice_is_a_422_naming_the_field(
    world: World, fields: dict[str, Any], field: str
) -> None:
    response = world.post("/api/v1/events/notices/box-1", world.box, json=notice(**fields))
    assert response.status_code == 422, response.text
    assert [d["path"] for d in response.json()["error"]["details"]] == [field]
    assert world.listed()["total"] == 0


def test_a_notice_body_is_bounded(world: World) -> None:
    body = json.dumps(notice(padding="x" * MAX_NOTICE_BYTES)).encode()
    headers = {"Content-Type": "application/json"}
    response = world.post("/api/v1/events/notices/box-1", world.box, content=body, headers=headers)
    assert response.status_code == 413


# --------------------------------------------------------------------------- the listing


def test_the_listing_filters_by_target_kind_and_status_newest_first(world: World) -> None:
    world.post(AWS, world.events, json=EVENTBRIDGE)  # 2016, issue, open, node-a
    world.post(AZURE, world.events, json=SERVICE_HEALTH)  # 2025, issue, closed, no target
    world.post("/api/v1/events/notices/box-1", world.box, json=notice())  # now, upcoming
    keys = [e["key"] for e in world.listed()["items"]]
    assert keys == ["azure:box-1:C7061BAC-AFDC-4513-B24B-AA5F13A16123", "TEST-TTT", AWS_KEY]
    assert [e["key"] for e in world.listed(target="node-a")["items"]] == [AWS_KEY]
    assert [e["key"] for e in world.listed(kind="issue")["items"]] == ["TEST-TTT", AWS_KEY]
    assert [e["key"] for e in world.listed(status="closed")["items"]] == ["TEST-TTT"]
    page = world.listed(limit=1, offset=1)
    assert ([e["key"] for e in page["items"]], page["total"], page["next_offset"]) == (
        ["TEST-TTT"],
        3,
        2,
    )
    assert world.listed(limit=1, offset=2)["next_offset"] is None


def test_the_listing_needs_a_read_token_and_a_known_target(world: World) -> None:
    def get(token: str | None, **query: Any) -> Any:
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        return world.api.get("/api/v1/events", headers=headers, params=query)

    assert get(None).status_code == 401
    assert get(world.events).status_code == 403  # an events token only writes
    assert get(world.admin).status_code == 200
    unknown = get(world.read, target="nobody")
    assert unknown.status_code == 404
    assert "nobody" in unknown.json()["error"]["message"]
    assert get(world.read, target="gone").status_code == 200  # a retired target's history
    assert get(world.read, kind="outage").status_code == 422
