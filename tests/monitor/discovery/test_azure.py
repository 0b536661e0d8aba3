"""The ``azure`` source against a real local HTTP server answering Azure Resource Manager's
published list of virtual machines (``value``, ``nextLink`` pages, ``statusOnly=true`` instance
views), through azure-mgmt-compute pointed at it by the source's ``endpoint`` with a static
``token``: what each VM becomes, and the one line a failed listing leaves, through the real
sweep."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from sqlalchemy.orm import Session, sessionmaker

from monitor.config import parse_config
from monitor.discovery.kind import SweepContext
from monitor.discovery.kinds import KINDS
from monitor.discovery.kinds.azure import AzureOptions, list_instances
from monitor.errors import ConfigError, SweepFailed
from tests.monitor.discovery.fake_clouds import swept, targets_by_name
from tests.support import ApiServer

T0 = datetime(2026, 12, 4, 12, tzinfo=UTC)
SUB = "6b0a3f0e-0000-4000-8000-00000000ab12"
LIST = f"/subscriptions/{SUB}/providers/Microsoft.Compute/virtualMachines"


def vm(number: int, name: str, power: str = "running", size: str = "Standard_ND96isr_H100_v5",
       group: str = "ml-train", priority: str | None = None, at: str = "2026-12-04T11:00:00Z",
       **more: Any) -> dict[str, Any]:  # fmt: skip
    """One VM as ARM lists it with ``statusOnly=true``: its model and its instance view."""
    properties: dict[str, Any] = {
        "vmId": f"0f9c1d2e-0000-4000-8000-{number:012d}",
        "hardwareProfile": {"vmSize": size},
        "provisioningState": "Succeeded",
        "instanceView": {"statuses": [
            {"code": "ProvisioningState/succeeded", "level": "Info",
             "displayStatus": "Provisioning succeeded", "time": at},
            {"code": f"PowerState/{power}", "level": "Info",
             "displayStatus": f"VM {power}"},
        ]},
    }  # fmt: skip
    if priority:
        properties |= {"priority": priority, "evictionPolicy": "Deallocate",
                       "billingProfile": {"maxPrice": -1}}  # fmt: skip
    properties |= more.pop("properties", {})
    return {
        "id": f"/subscriptions/{SUB}/resourceGroups/{group}/providers/"
              f"Microsoft.Compute/virtualMachines/{name}",
        "name": name,
        "type": "Microsoft.Compute/virtualMachines",
        "location": "eastus2",
        "zones": ["3"],
        "tags": {"team": "ml", "pool": "h100"},
        "properties": properties,
        **more,
    }  # fmt: skip


class FakeArm:
    """ARM's subscription-wide VM list, ``page_size`` VMs a page, each ``nextLink`` an
    absolute URL carrying a ``$skiptoken`` as Azure's do."""

    def __init__(self) -> None:
        self.vms: list[dict[str, Any]] = []
        self.page_size = 2
        self.failure: tuple[int, Any] | None = None
        self.server = ApiServer(self.answer)

    def answer(self, path: str, query: dict[str, str]) -> tuple[int, Any]:
        if self.failure is not None:
            return self.failure
        if path != LIST:
            return 404, {"error": {"code": "NotFound", "message": f"no such path {path}"}}
        start = int(query.get("$skiptoken") or 0)
        body: dict[str, Any] = {"value": self.vms[start : start + self.page_size]}
        if start + self.page_size < len(self.vms):
            body["nextLink"] = (
                f"{self.server.url}{LIST}?api-version={query['api-version']}&statusOnly=true"
                f"&$skiptoken={start + self.page_size}"
            )
        return 200, body


@pytest.fixture
def arm() -> Iterator[FakeArm]:
    fake = FakeArm()
    yield fake
    fake.server.close()


def listed(arm: FakeArm, **options: Any) -> dict[str, Any]:
    chosen = AzureOptions.model_validate(
        {"subscription": SUB, "endpoint": arm.server.url, "token": "test-token", **options}
    )
    return {i.name: i for i in list_instances(chosen, SweepContext("azure", T0, 5.0))}


def test_a_vm_becomes_its_ids_size_capacity_and_fields(arm: FakeArm) -> None:
    arm.vms = [
        vm(1, "trainer-1"),
        vm(2, "spot-1", size="Standard_NC24ads_A100_v4", priority="Spot"),
        vm(3, "batch-1", size="Standard_NC4as_T4_v3", priority="Low"),
        vm(4, "no-vm-id", properties={"vmId": None}),
    ]
    found = listed(arm)
    one = found["trainer-1"]
    assert one.external_id == "0f9c1d2e-0000-4000-8000-000000000001"  # the vmId
    assert (one.provider, one.region, one.zone, one.instance_type, one.capacity) == (
        "azure", "eastus2", "3", "Standard_ND96isr_H100_v5", "on-demand",
    )  # fmt: skip
    assert one.fields == {
        "name": "trainer-1", "vm_id": "0f9c1d2e-0000-4000-8000-000000000001",
        "resource_group": "ml-train", "location": "eastus2", "vm_size": "Standard_ND96isr_H100_v5",
    }  # fmt: skip
    assert (one.tags, one.state, one.gpus) == ({"team": "ml", "pool": "h100"}, "running", None)
    assert (found["spot-1"].capacity, found["batch-1"].capacity) == ("spot", "spot")
    assert found["no-vm-id"].external_id == f"/subscriptions/{SUB}/resourceGroups/ml-train/" \
        "providers/Microsoft.Compute/virtualMachines/no-vm-id"  # fmt: skip
    path, query, headers = arm.server.requests[0]
    assert (path, query["statusOnly"]) == (LIST, "true")
    assert headers["authorization"] == "Bearer test-token"


def test_every_page_is_read_and_groups_and_tags_are_held_to(arm: FakeArm) -> None:
    arm.vms = [vm(n, f"vm-{n}") for n in range(1, 6)]
    arm.vms += [vm(6, "elsewhere", group="web"), vm(7, "other-team", tags={"team": "web"})]
    assert len(listed(arm)) == 7
    assert [q.get("$skiptoken") for _, q, _ in arm.server.requests] == [None, "2", "4", "6"]
    only = listed(arm, resource_groups=["ML-Train"], tags={"team": "ml"})  # ARM ignores case
    assert sorted(only) == ["vm-1", "vm-2", "vm-3", "vm-4", "vm-5"]


def test_a_power_state_says_whether_it_runs_is_on_its_way_or_ended_and_by_whom(
    arm: FakeArm,
) -> None:
    arm.vms = [
        vm(1, "starting", power="starting"),
        vm(2, "deallocating", power="deallocating"),
        vm(3, "evicted", power="deallocated", priority="Spot",
           at="2026-12-04T11:58:20.1234567+00:00"),
        vm(4, "deallocated", power="deallocated"),
        vm(5, "stopped-spot", power="stopped", priority="Spot"),
    ]  # fmt: skip
    found = listed(arm)
    assert (found["starting"].state, found["deallocating"].state) == ("other", "other")
    evicted = found["evicted"]
    assert (evicted.state, evicted.ended_by) == ("ended", "preempted")
    assert evicted.ended_at == datetime(2026, 12, 4, 11, 58, 20, 123456, tzinfo=UTC)
    assert evicted.end_detail == "Provisioning succeeded; VM deallocated"
    assert (found["deallocated"].state, found["deallocated"].ended_by) == ("ended", "user")
    assert found["stopped-spot"].ended_by == "user"  # stopped in the guest: Azure never evicts so


CONFIG = """
discovery:
  - name: azure
    kind: azure
    subscription: {sub}
    endpoint: {endpoint}
    token: test-token
    template: {{kind: http, url: "http://{{name}}.internal:8000/healthz", pool: "{{tags.pool}}"}}
"""


def run(sessions: sessionmaker[Session], arm: FakeArm, at: datetime) -> Any:
    return swept(sessions, CONFIG.format(sub=SUB, endpoint=arm.server.url), "azure", at)


def test_a_sweep_registers_the_vms_and_retires_an_evicted_spot_vm_and_a_deallocated_one(
    sessions: sessionmaker[Session], arm: FakeArm
) -> None:
    arm.vms = [vm(1, "trainer-1"), vm(2, "spot-1", priority="Spot"),
               vm(3, "t4-box", size="standard_nc64as_t4_v3")]  # fmt: skip
    outcome = run(sessions, arm, T0)
    assert outcome.ok, outcome.error
    assert outcome.counts()["added"] == 3
    added = targets_by_name(sessions)
    trainer = added["trainer-1"]
    assert (trainer.url, trainer.pool, trainer.provider, trainer.gpus) == (
        "http://trainer-1.internal:8000/healthz", "h100", "azure", 8,
    )  # fmt: skip
    assert (trainer.external_id, trainer.discovered_by) == (
        "0f9c1d2e-0000-4000-8000-000000000001", "azure",
    )  # fmt: skip
    assert (added["spot-1"].capacity, added["t4-box"].gpus) == ("spot", 4)  # any case of a size
    arm.vms = [
        vm(1, "trainer-1", power="deallocated", at="2026-12-04T12:00:30Z"),
        vm(2, "spot-1", power="deallocated", priority="Spot", at="2026-12-04T12:00:40Z"),
        vm(3, "t4-box", size="standard_nc64as_t4_v3"),
    ]
    steps = {s.target: s for s in run(sessions, arm, T0 + timedelta(minutes=1)).steps}
    assert (steps["spot-1"].action, steps["spot-1"].reason) == ("retired", "preempted")
    assert (steps["trainer-1"].action, steps["trainer-1"].reason) == ("retired", "user")
    ended = targets_by_name(sessions)
    assert (ended["spot-1"].ended_by, ended["spot-1"].retired_at) == (
        "preempted", T0 + timedelta(seconds=40),
    )  # fmt: skip
    assert ended["spot-1"].end_detail == "Provisioning succeeded; VM deallocated"
    assert (ended["trainer-1"].ended_by, ended["trainer-1"].retired_at) == (
        "user", T0 + timedelta(seconds=30),
    )  # fmt: skip
    assert ended["t4-box"].retired_at is None


def _failed_sweep_retires_nothing(
    sessions: sessionmaker[Session], arm: FakeArm, break_it: Any
) -> str:
    arm.vms = [vm(1, "trainer-1")]
    assert run(sessions, arm, T0).ok
    break_it()
    run(sessions, arm, T0 + timedelta(minutes=1))
    outcome = run(sessions, arm, T0 + timedelta(minutes=2))  # past retire_after: 2
    assert outcome.steps == []
    assert targets_by_name(sessions)["trainer-1"].retired_at is None
    assert outcome.error is not None
    assert "\n" not in outcome.error
    return str(outcome.error)


@pytest.mark.parametrize(
    ("status", "code", "message", "said"),
    [
        (403, "AuthorizationFailed",
         "The client 'slamon' does not have authorization to perform action "
         "'Microsoft.Compute/virtualMachines/read'",
         "HTTP 403 Forbidden: (AuthorizationFailed) The client 'slamon' does not have "
         "authorization to perform action 'Microsoft.Compute/virtualMachines/read'"),
        (401, "InvalidAuthenticationToken", "The access token is invalid.",
         "HTTP 401 Unauthorized: (InvalidAuthenticationToken) The access token is invalid."),
        (429, "TooManyRequests", "Rate limit exceeded.",
         "HTTP 429 Too Many Requests: (TooManyRequests) Rate limit exceeded."),
    ],
    ids=["403", "401", "429"],
)  # fmt: skip
def test_a_refusal_fails_the_sweep_with_one_line_and_retires_nothing(
    sessions: sessionmaker[Session], arm: FakeArm, status: int, code: str, message: str, said: str
) -> None:
    error = {"error": {"code": code, "message": message}}
    line = _failed_sweep_retires_nothing(
        sessions, arm, lambda: setattr(arm, "failure", (status, error))
    )
    assert line == f"azure subscription {SUB}: {said}"


def test_a_closed_port_fails_the_sweep_with_one_line(
    sessions: sessionmaker[Session], arm: FakeArm
) -> None:
    line = _failed_sweep_retires_nothing(sessions, arm, arm.server.close)
    assert line == f"azure subscription {SUB}: unreachable: Connection refused"


@pytest.mark.parametrize(
    "body",
    [b"<html>502 Bad Gateway</html>", {"value": [{"name": "no-id"}]}, [1, 2]],
    ids=["not json", "a VM without its id", "not an object"],
)
def test_a_malformed_answer_fails_the_sweep_with_one_line(
    sessions: sessionmaker[Session], arm: FakeArm, body: Any
) -> None:
    line = _failed_sweep_retires_nothing(
        sessions, arm, lambda: setattr(arm, "failure", (200, body))
    )
    assert line.startswith(f"azure subscription {SUB}: malformed answer: "), line


def test_the_config_takes_the_kind_and_refuses_a_source_without_its_subscription() -> None:
    assert (KINDS["azure"].extra, KINDS["azure"].requires) == (
        "azure", ("azure.mgmt.compute", "azure.identity"),
    )  # fmt: skip
    with pytest.raises(ConfigError, match="subscription: Field required"):
        parse_config("discovery: [{name: a, kind: azure, template: {kind: http, url: 'http://x'}}]")


def test_an_answer_slower_than_the_timeout_fails_with_one_line(arm: FakeArm) -> None:
    arm.server.delay_s = 2.0
    chosen = AzureOptions(subscription=SUB, endpoint=arm.server.url, token="test-token")
    with pytest.raises(SweepFailed) as failed:
        list_instances(chosen, SweepContext("azure", T0, 0.5))
    assert len(arm.server.requests) == 1  # no retries
    assert str(failed.value).startswith(f"azure subscription {SUB}: no answer: "), failed.value
    assert "\n" not in str(failed.value)
