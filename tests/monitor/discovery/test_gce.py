"""The ``gce`` source against a real local HTTP server answering Compute Engine's published REST
shapes (``instances.list`` per zone, ``instances.aggregatedList``, ``nextPageToken`` pages),
through google-cloud-compute pointed at it by the source's ``endpoint``: what each instance
becomes, and the one line a failed listing leaves, through the real sweep."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from sqlalchemy.orm import Session, sessionmaker

from monitor.config import parse_config
from monitor.discovery.kind import SweepContext
from monitor.discovery.kinds import KINDS
from monitor.discovery.kinds.gce import GceOptions, list_instances
from monitor.errors import ConfigError, SweepFailed
from tests.monitor.discovery.fake_clouds import swept, targets_by_name
from tests.support import ApiServer

T0 = datetime(2026, 12, 4, 12, tzinfo=UTC)
ZONE = "us-central1-a"
BASE = "https://www.googleapis.com/compute/v1/projects/ml-training"


def vm(number: int, name: str, status: str = "RUNNING", machine: str = "a3-highgpu-8g",
       zone: str = ZONE, **more: Any) -> dict[str, Any]:  # fmt: skip
    """One instance as Compute Engine's REST API describes it."""
    item: dict[str, Any] = {
        "kind": "compute#instance",
        "id": str(4_000_000_000_000_000_000 + number),  # a uint64, sent as a string
        "name": name,
        "status": status,
        "zone": f"{BASE}/zones/{zone}",
        "machineType": f"{BASE}/zones/{zone}/machineTypes/{machine}",
        "networkInterfaces": [
            {"networkIP": f"10.128.0.{number}",
             "accessConfigs": [{"type": "ONE_TO_ONE_NAT", "natIP": f"34.1.2.{number}"}]}
        ],
        "scheduling": {"provisioningModel": "STANDARD", "preemptible": False},
        "labels": {"team": "ml"},
    }  # fmt: skip
    item.update(more)
    return item


class FakeCompute:
    """Compute Engine's instance listings over ``zones``, ``page_size`` instances a page."""

    def __init__(self) -> None:
        self.zones: dict[str, list[dict[str, Any]]] = {}
        self.page_size = 2
        self.failure: tuple[int, Any] | None = None
        self.server = ApiServer(self.answer)

    def answer(self, path: str, query: dict[str, str]) -> tuple[int, Any]:
        if self.failure is not None:
            return self.failure
        parts = path.strip("/").split("/")  # compute v1 projects P (zones Z | aggregated) inst.
        if parts[:3] != ["compute", "v1", "projects"] or parts[-1] != "instances":
            return 404, {"error": {"code": 404, "message": f"no such path {path}"}}
        start = int(query.get("pageToken") or 0)
        if parts[4] == "zones":
            everything = [("", item) for item in self.zones.get(parts[5], [])]
        else:
            everything = [(z, item) for z, items in self.zones.items() for item in items]
        page = everything[start : start + self.page_size]
        more = start + self.page_size < len(everything)
        body: dict[str, Any] = {"kind": "compute#instanceList", "id": path}
        if parts[4] == "zones":
            body["items"] = [item for _, item in page]
        else:
            scoped: dict[str, Any] = {}
            for zone, item in page:
                scoped.setdefault(f"zones/{zone}", {"instances": []})["instances"].append(item)
            scoped["zones/europe-west4-b"] = {"warning": {"code": "NO_RESULTS_ON_PAGE"}}
            body["items"] = scoped
        if more:
            body["nextPageToken"] = str(start + self.page_size)
        return 200, body

    def paths(self) -> list[tuple[str, str | None]]:
        return [(path, query.get("pageToken")) for path, query, _ in self.server.requests]


@pytest.fixture
def compute() -> Iterator[FakeCompute]:
    fake = FakeCompute()
    yield fake
    fake.server.close()


def listed(compute: FakeCompute, **options: Any) -> dict[str, Any]:
    chosen = GceOptions.model_validate(
        {"projects": ["ml-training"], "endpoint": compute.server.url, **options}
    )
    return {i.name: i for i in list_instances(chosen, SweepContext("gcp", T0, 5.0))}


def test_an_instance_becomes_its_ids_type_gpus_capacity_and_fields(compute: FakeCompute) -> None:
    compute.zones[ZONE] = [
        vm(1, "trainer-1"),
        vm(2, "trainer-2", machine="a2-highgpu-1g",
           scheduling={"provisioningModel": "SPOT", "preemptible": False},
           guestAccelerators=[{"acceleratorType": "nvidia-tesla-a100", "acceleratorCount": 1},
                              {"acceleratorType": "nvidia-tesla-a100", "acceleratorCount": 1}]),
        vm(3, "old-style", machine="n1-standard-8", scheduling={"preemptible": True}),
    ]  # fmt: skip
    found = listed(compute, zones=[ZONE])
    one, two, three = found["trainer-1"], found["trainer-2"], found["old-style"]
    assert one.external_id == "4000000000000000001"
    assert (one.provider, one.region, one.zone, one.instance_type) == (
        "gcp", "us-central1", ZONE, "a3-highgpu-8g",
    )  # fmt: skip
    assert (one.gpus, one.capacity, one.state) == (None, "on-demand", "running")  # the table's
    assert one.fields == {
        "instance_id": "4000000000000000001", "name": "trainer-1", "project": "ml-training",
        "zone": ZONE, "region": "us-central1", "machine_type": "a3-highgpu-8g",
        "private_ip": "10.128.0.1", "public_ip": "34.1.2.1",
    }  # fmt: skip
    assert one.tags == {"team": "ml"}
    assert (two.gpus, two.capacity) == (2, "spot")  # guestAccelerators summed
    assert three.capacity == "spot"  # preemptible, the older spelling
    zonal = f"/compute/v1/projects/ml-training/zones/{ZONE}/instances"
    assert compute.paths() == [(zonal, None), (zonal, "2")]


def test_every_page_of_every_zone_and_of_the_aggregated_list_is_read(
    compute: FakeCompute,
) -> None:
    compute.zones[ZONE] = [vm(n, f"a-{n}") for n in range(1, 6)]
    compute.zones["europe-west4-a"] = [vm(n, f"b-{n}", zone="europe-west4-a") for n in (6, 7)]
    assert sorted(listed(compute, zones=[ZONE, "europe-west4-a"])) == [
        "a-1", "a-2", "a-3", "a-4", "a-5", "b-6", "b-7",
    ]  # fmt: skip
    assert [token for _, token in compute.paths()] == [None, "2", "4", None]
    compute.server.requests.clear()
    everything = listed(compute)  # no zones: the aggregated list
    assert len(everything) == 7
    assert everything["b-7"].region == "europe-west4"
    assert compute.paths() == [("/compute/v1/projects/ml-training/aggregated/instances", token)
                               for token in (None, "2", "4", "6")]  # fmt: skip


def test_the_label_filter_is_sent_to_google_and_held_to_on_our_side(compute: FakeCompute) -> None:
    compute.zones[ZONE] = [vm(1, "ours"), vm(2, "theirs", labels={"team": "web"})]
    found = listed(compute, label_filter={"team": "ml"})
    assert sorted(found) == ["ours"]  # the fake ignores filter; we do not
    assert compute.server.requests[0][1]["filter"] == '(labels.team = "ml")'


def test_a_status_says_whether_it_runs_is_on_its_way_or_ended_and_by_whom(
    compute: FakeCompute,
) -> None:
    spot = {"provisioningModel": "SPOT", "instanceTerminationAction": "STOP"}
    compute.zones[ZONE] = [
        vm(1, "staging", status="STAGING"),
        vm(2, "reclaimed", status="TERMINATED", scheduling=spot,
           lastStopTimestamp="2026-12-04T03:58:20.123-08:00",
           statusMessage="Instance was preempted."),
        vm(3, "stopped", status="TERMINATED", lastStopTimestamp="2026-12-04T04:00:00.000-08:00"),
        vm(4, "suspended", status="SUSPENDED"),
    ]  # fmt: skip
    found = listed(compute, zones=[ZONE])
    assert found["staging"].state == "other"
    reclaimed, stopped = found["reclaimed"], found["stopped"]
    assert (reclaimed.state, reclaimed.ended_by) == ("ended", "preempted")
    assert reclaimed.ended_at == datetime(2026, 12, 4, 11, 58, 20, 123000, tzinfo=UTC)
    assert reclaimed.end_detail == "TERMINATED: Instance was preempted."
    assert (stopped.state, stopped.ended_by, stopped.end_detail) == ("ended", "user", "TERMINATED")
    assert (found["suspended"].state, found["suspended"].ended_by) == ("ended", "user")


CONFIG = """
discovery:
  - name: gcp
    kind: gce
    projects: [ml-training]
    zones: [us-central1-a]
    endpoint: {endpoint}
    template: {{kind: http, url: "http://{{private_ip}}:8000/healthz", pool: "{{tags.team}}"}}
"""


def run(sessions: sessionmaker[Session], compute: FakeCompute, at: datetime) -> Any:
    return swept(sessions, CONFIG.format(endpoint=compute.server.url), "gcp", at)


def test_a_sweep_registers_the_vms_and_retires_a_preempted_spot_vm_and_a_stopped_one(
    sessions: sessionmaker[Session], compute: FakeCompute
) -> None:
    spot = {"provisioningModel": "SPOT"}
    compute.zones[ZONE] = [vm(1, "trainer-1"), vm(2, "spot-1", scheduling=spot),
                           vm(3, "l4-box", machine="g2-standard-24")]  # fmt: skip
    outcome = run(sessions, compute, T0)
    assert outcome.ok, outcome.error
    assert outcome.counts()["added"] == 3
    added = targets_by_name(sessions)
    assert (added["trainer-1"].gpus, added["spot-1"].capacity, added["l4-box"].gpus) == (
        8, "spot", 2,
    )  # fmt: skip
    trainer = added["trainer-1"]
    assert (trainer.url, trainer.pool, trainer.provider) == (
        "http://10.128.0.1:8000/healthz", "ml", "gcp",
    )  # fmt: skip
    assert (trainer.external_id, trainer.discovered_by) == ("4000000000000000001", "gcp")
    compute.zones[ZONE] = [
        vm(1, "trainer-1", status="TERMINATED", lastStopTimestamp="2026-12-04T12:00:30Z"),
        vm(2, "spot-1", status="TERMINATED", scheduling=spot,
           lastStopTimestamp="2026-12-04T12:00:40Z"),
        vm(3, "l4-box", machine="g2-standard-24"),
    ]  # fmt: skip
    steps = {s.target: s for s in run(sessions, compute, T0 + timedelta(minutes=1)).steps}
    assert (steps["spot-1"].action, steps["spot-1"].reason) == ("retired", "preempted")
    assert (steps["trainer-1"].action, steps["trainer-1"].reason) == ("retired", "user")
    ended = targets_by_name(sessions)
    assert (ended["spot-1"].ended_by, ended["spot-1"].end_detail) == ("preempted", "TERMINATED")
    assert ended["spot-1"].retired_at == T0 + timedelta(seconds=40)
    assert (ended["trainer-1"].ended_by, ended["trainer-1"].retired_at) == (
        "user", T0 + timedelta(seconds=30),
    )  # fmt: skip
    assert ended["l4-box"].retired_at is None


def _failed_sweep_retires_nothing(
    sessions: sessionmaker[Session], compute: FakeCompute, break_it: Any
) -> str:
    compute.zones[ZONE] = [vm(1, "trainer-1")]
    assert run(sessions, compute, T0).ok
    break_it()
    outcome = run(sessions, compute, T0 + timedelta(minutes=1))
    outcome = run(sessions, compute, T0 + timedelta(minutes=2))  # past retire_after: 2
    assert outcome.steps == []
    assert targets_by_name(sessions)["trainer-1"].retired_at is None
    assert outcome.error is not None
    assert "\n" not in outcome.error
    return str(outcome.error)


def test_a_refusal_fails_the_sweep_with_one_line_and_retires_nothing(
    sessions: sessionmaker[Session], compute: FakeCompute
) -> None:
    denied = {"error": {"code": 403, "errors": [{"reason": "forbidden"}],
                        "message": "Required 'compute.instances.list' permission for "
                                   "'projects/ml-training'"}}  # fmt: skip
    line = _failed_sweep_retires_nothing(
        sessions, compute, lambda: setattr(compute, "failure", (403, denied))
    )
    assert line == (
        f"gce ml-training/{ZONE}: HTTP 403 Forbidden: "
        "Required 'compute.instances.list' permission for 'projects/ml-training'"
    )


def test_a_closed_port_fails_the_sweep_with_one_line(
    sessions: sessionmaker[Session], compute: FakeCompute
) -> None:
    line = _failed_sweep_retires_nothing(sessions, compute, compute.server.close)
    assert line == f"gce ml-training/{ZONE}: unreachable: Connection refused"


@pytest.mark.parametrize(
    "body",
    [b"<html>503 from a proxy</html>", {"items": [{"id": "not-a-number", "name": "x"}]},
     {"items": [{"name": "no-id"}]}],
    ids=["not json", "a field of the wrong type", "an instance without its id"],
)  # fmt: skip
def test_a_malformed_answer_fails_the_sweep_with_one_line(
    sessions: sessionmaker[Session], compute: FakeCompute, body: Any
) -> None:
    line = _failed_sweep_retires_nothing(
        sessions, compute, lambda: setattr(compute, "failure", (200, body))
    )
    assert line.startswith(f"gce ml-training/{ZONE}: malformed answer: "), line


def test_the_config_takes_the_kind_and_refuses_a_bad_option() -> None:
    assert KINDS["gce"].extra == "gcp"
    with pytest.raises(ConfigError, match="projects: Field required"):
        parse_config(
            "discovery: [{name: g, kind: gce, zones: [a], template: {kind: http, url: 'http://x'}}]"
        )
    with pytest.raises(ConfigError, match="label_filter"):
        parse_config(
            "discovery: [{name: g, kind: gce, projects: [p], label_filter: {Team: ML},"
            " template: {kind: http, url: 'http://x'}}]"
        )


def test_no_credentials_fail_the_sweep_with_one_line(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Any
) -> None:
    monkeypatch.setenv("GOOGLE_APPLICATION_CREDENTIALS", str(tmp_path / "missing.json"))
    options = GceOptions(projects=("ml-training",))
    with pytest.raises(SweepFailed) as failed:
        list_instances(options, SweepContext("gcp", T0, 1.0))
    assert str(failed.value).startswith("gce ml-training: no credentials: ")
    assert "\n" not in str(failed.value)


def test_an_answer_slower_than_the_timeout_fails_with_one_line(compute: FakeCompute) -> None:
    compute.server.delay_s = 2.0
    chosen = GceOptions(projects=("ml-training",), zones=(ZONE,), endpoint=compute.server.url)
    with pytest.raises(SweepFailed) as failed:
        list_instances(chosen, SweepContext("gcp", T0, 0.5))
    assert len(compute.server.requests) == 1  # no retries
    assert str(failed.value).startswith(f"gce ml-training/{ZONE}: timed out: "), failed.value
    assert "\n" not in str(failed.value)
