"""The azure_resource_health source: its parsers on Azure's published availability status example
and a Service Health alert in the common alert schema (tests/fixtures/account/), and its listing
against a local server standing in for Azure Resource Manager."""

from __future__ import annotations

import copy
import json
import socket
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

import pytest

from monitor.account.kind import EventPollContext
from monitor.account.kinds import KINDS
from monitor.account.kinds.azure_resource_health import (
    AzureResourceHealthOptions,
    MalformedStatus,
    availability_event,
    from_service_health_alert,
    resource_id,
)
from monitor.account.model import AccountEvent
from monitor.errors import EventPollFailed
from tests.monitor.account.captured import document
from tests.support import ApiServer

STATUS = document("5-azure-resourcehealth-availabilitystatus-unplanned.example.json")
ALERT = "5-azure-servicehealth-incident-commonschema-testaction.json"
VM = (
    "/subscriptions/4abcdefgh-ijkl-mnop-qrstuvwxyz/resourceGroups/rhctestenv/providers/"
    "Microsoft.ClassicCompute/virtualMachines/rhctestenvV1PI"
)
NOW = datetime(2026, 12, 4, 12, 0, tzinfo=UTC)


def body() -> dict[str, Any]:
    return copy.deepcopy(STATUS["responses"]["200"]["body"])


# --- availability statuses, read (pure) ---------------------------------------------------------


def test_the_published_unplanned_status_is_an_open_issue_of_its_vm() -> None:
    assert availability_event(body()) == AccountEvent(
        provider="azure",
        source="azure_resource_health",
        key=f"{VM}@2016-03-29T09:12:00+00:00",
        kind="issue",
        status="open",
        starts_at=datetime(2016, 3, 29, 9, 12, tzinfo=UTC),
        ends_at=None,  # resolutionETA is an estimate, not an end
        updated_at=datetime(2016, 5, 4, 14, 11, 29, 759893, tzinfo=UTC),
        region="eastus",
        service="Microsoft.ClassicCompute/virtualMachines",
        title="Unavailable",
        detail="We're sorry, we couldn't automatically recover your virtual machine",
        entities=(VM,),  # the space inside the published id's path removed
        raw_type="Unplanned",
    )


def test_a_vm_back_from_a_restart_of_its_own_is_a_closed_user_initiated_event() -> None:
    status = body()
    status["properties"].update(availabilityState="Available", reasonType="UserInitiated")
    found = availability_event(status)
    assert found is not None
    assert (found.kind, found.status) == ("user_initiated", "closed")
    assert found.ends_at == datetime(2016, 5, 4, 14, 11, 29, 759893, tzinfo=UTC)


@pytest.mark.parametrize("state", ["Available", "Unknown"])
def test_a_plain_available_or_unknown_status_is_no_event(state: str) -> None:
    status = body()
    status["properties"] = {"availabilityState": state}
    assert availability_event(status) is None


def test_the_resource_is_the_status_id_without_its_own_path() -> None:
    assert (
        resource_id(f"{VM}/providers/Microsoft.ResourceHealth/availabilityStatuses/current") == VM
    )


@pytest.mark.parametrize(
    ("change", "field"),
    [
        pytest.param(lambda s: s.pop("properties"), "properties", id="no-properties"),
        pytest.param(lambda s: s["properties"].pop("availabilityState"), "availabilityState",
                     id="no-state"),
        pytest.param(lambda s: s.pop("id"), "id", id="no-id"),
        pytest.param(lambda s: s["properties"].update(occuredTime="then"), "occuredTime",
                     id="occurred-no-time"),
    ],
)  # fmt: skip
def test_a_malformed_status_is_refused_naming_its_field(
    change: Callable[[dict[str, Any]], object], field: str
) -> None:
    status = body()
    change(status)
    with pytest.raises(MalformedStatus, match=field):
        availability_event(status)


# --- a Service Health alert, read (pure) --------------------------------------------------------


def test_the_published_service_health_test_alert_is_a_closed_issue_keyed_by_tracking_id() -> None:
    when = datetime(2025, 4, 15, 18, 20, 36, 256000, tzinfo=UTC)
    assert from_service_health_alert(document(ALERT)) == AccountEvent(
        provider="azure",
        source="azure_service_health",
        key="TEST-TTT",
        kind="issue",
        status="closed",
        starts_at=when,
        ends_at=when,
        updated_at=when,
        region="Global",
        service="AzureServiceName",
        title="TestActionGroup-TestServiceHealthAlert",
        detail="ThisisatestfromServiceHealthAlert",
        entities=(),
        raw_type="Incident",
    )


def test_impacted_services_as_an_escaped_json_string_reads_the_same() -> None:
    alert = document(ALERT)
    props = alert["data"]["alertContext"]["properties"]
    props["impactedServices"] = json.dumps(props["impactedServices"])
    assert from_service_health_alert(alert) == from_service_health_alert(document(ALERT))


def test_planned_maintenance_is_upcoming_without_an_end() -> None:
    alert = document(ALERT)
    alert["data"]["alertContext"]["properties"].update(incidentType="Maintenance", stage="Planned")
    found = from_service_health_alert(alert)
    assert (found.kind, found.status, found.ends_at) == ("scheduled_maintenance", "upcoming", None)


P = "data.alertContext.properties"


@pytest.mark.parametrize(
    ("change", "field"),
    [
        pytest.param(lambda d: d.pop("data"), "data", id="no-data"),
        pytest.param(lambda d: d["data"]["essentials"].update(monitoringService="Platform"),
                     "data.essentials.monitoringService", id="not-service-health"),
        pytest.param(lambda d: d["data"]["alertContext"].pop("properties"), P, id="no-props"),
        pytest.param(lambda d: d["data"]["alertContext"]["properties"].pop("trackingId"),
                     f"{P}.trackingId", id="no-tracking-id"),
        pytest.param(lambda d: d["data"]["alertContext"]["properties"].update(stage="Later"),
                     f"{P}.stage", id="unknown-stage"),
        pytest.param(lambda d: d["data"]["alertContext"]["properties"].update(
                     impactedServices="[{not json"), f"{P}.impactedServices", id="bad-string"),
        pytest.param(lambda d: d["data"]["alertContext"]["properties"].update(
                     impactedServices=7), f"{P}.impactedServices", id="not-a-list"),
        pytest.param(lambda d: d["data"]["alertContext"]["properties"].update(title=42),
                     f"{P}.title", id="title-a-number"),
        pytest.param(lambda d: d["data"]["alertContext"]["properties"].update(
                     communication={"html": "x"}), f"{P}.communication", id="words-an-object"),
    ],
)  # fmt: skip
def test_a_malformed_alert_is_one_line_naming_the_field(
    change: Callable[[dict[str, Any]], object], field: str
) -> None:
    alert = document(ALERT)
    change(alert)
    with pytest.raises(MalformedStatus) as raised:
        from_service_health_alert(alert)
    assert str(raised.value).startswith(f"{field}:")
    assert "\n" not in str(raised.value)


# --- the listing, against a local ARM ------------------------------------------------------------


def polled(server: ApiServer, timeout_s: float = 2.0, **options: Any) -> list[AccountEvent]:
    opts = AzureResourceHealthOptions.model_validate(
        {"subscription": "sub-1", "endpoint": server.url, "token": "t0k", **options}
    )
    context = EventPollContext("az", NOW, timeout_s)
    return list(KINDS["azure_resource_health"].list_events(opts, context))


def test_a_poll_reads_the_subscriptions_statuses_page_after_page() -> None:
    servers: list[ApiServer] = []

    def answer(path: str, query: dict[str, str]) -> tuple[int, object]:
        if query.get("page") == "2":
            healthy = {**body(), "properties": {"availabilityState": "Available"}}
            return 200, {"value": [healthy]}
        return 200, {"value": [body()], "nextLink": f"{servers[0].url}{path}?page=2&api-version=x"}

    server = ApiServer(answer)
    servers.append(server)
    try:
        (found,) = polled(server)
    finally:
        server.close()
    assert found.entities == (VM,)
    (path, query, headers), _ = server.requests
    assert path == "/subscriptions/sub-1/providers/Microsoft.ResourceHealth/availabilityStatuses"
    assert query == {"api-version": "2024-02-01"}
    assert headers["authorization"] == "Bearer t0k"


def test_a_poll_of_named_resources_reads_each_current_status() -> None:
    server = ApiServer(lambda path, query: (200, body()))
    try:
        (found,) = polled(server, resources=[VM])
    finally:
        server.close()
    assert found.kind == "issue"
    assert server.requests[0][0] == (
        f"{VM}/providers/Microsoft.ResourceHealth/availabilityStatuses/current"
    )


def test_a_next_link_elsewhere_is_not_sent_the_token() -> None:
    server = ApiServer(lambda path, query: (200, {"value": [], "nextLink": "https://evil.test/x"}))
    try:
        with pytest.raises(EventPollFailed, match="nextLink leaves"):
            polled(server)
    finally:
        server.close()
    assert len(server.requests) == 1


def test_a_refusal_a_closed_port_and_a_timeout_are_one_line_each() -> None:
    refusal = {"error": {"code": "AuthorizationFailed", "message": "The client 'x' does not\nhave"}}
    server = ApiServer(lambda path, query: (403, refusal))
    try:
        with pytest.raises(EventPollFailed) as refused:
            polled(server)
        server.answer = lambda path, query: (200, body())
        server.delay_s = 1.0
        with pytest.raises(EventPollFailed) as slow:
            polled(server, timeout_s=0.2)
    finally:
        server.close()
    assert str(refused.value) == (
        "azure_resource_health: subscription sub-1: HTTP 403: AuthorizationFailed: "
        "The client 'x' does not have"
    )
    assert str(slow.value) == "azure_resource_health: subscription sub-1: timed out"
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    opts = AzureResourceHealthOptions(
        subscription="s", endpoint=f"http://127.0.0.1:{port}", token="t"
    )
    with pytest.raises(EventPollFailed) as closed:
        KINDS["azure_resource_health"].list_events(opts, EventPollContext("az", NOW, 1.0))
    assert str(closed.value).startswith("azure_resource_health: subscription s: unreachable:")
