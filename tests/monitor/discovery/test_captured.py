"""The discovery sources on real documents, as public projects recorded or published them
(tests/fixtures/discovery/SOURCES.md): a recorded EC2 DescribeInstances and GCE aggregated
list, a real GKE node, Prometheus' own file_sd and http_sd fixtures. The GCE, Kubernetes and
http_sd documents are served by a local server, so the cloud SDKs' own parsing reads them."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from monitor.discovery.kind import SweepContext
from monitor.discovery.kinds import KINDS
from monitor.discovery.kinds.ec2 import instances as ec2_instances
from monitor.discovery.kinds.file_sd import FileSdOptions
from monitor.discovery.kinds.gce import GceOptions
from monitor.discovery.kinds.http_sd import HttpSdOptions
from monitor.discovery.kinds.kubernetes import KubernetesOptions
from tests.monitor.discovery.fake_clouds import NodesApi
from tests.support import ApiServer

CAPTURED = Path(__file__).resolve().parents[2] / "fixtures" / "discovery"
CONTEXT = SweepContext("captured", datetime(2026, 12, 4, tzinfo=UTC), timeout_s=5.0)


def document(name: str) -> Any:
    return json.loads((CAPTURED / name).read_text(encoding="utf-8"))


def unwrapped(value: Any) -> Any:
    """A placebo recording as boto3 returned it: its datetimes as datetimes."""
    if isinstance(value, dict) and value.get("__class__") == "datetime":
        fields = {k: v for k, v in value.items() if k != "__class__"}
        return datetime(**fields, tzinfo=UTC)
    if isinstance(value, dict):
        return {k: unwrapped(v) for k, v in value.items()}
    if isinstance(value, list):
        return [unwrapped(v) for v in value]
    return value


def test_a_recorded_describe_instances_is_a_stopped_instance_the_user_ended() -> None:
    page = unwrapped(document("ec2-describeinstances-tagged.placebo.json")["data"])
    [box] = ec2_instances([page], "us-east-2")
    assert (box.external_id, box.name, box.instance_type) == (
        "i-094207d64930768dc", "ssm-test-256", "t2.medium",
    )  # fmt: skip
    assert (box.state, box.ended_by, box.capacity) == ("ended", "user", "on-demand")
    assert box.end_detail == "Client.UserInitiatedShutdown: User initiated shutdown"
    assert box.ended_at == datetime(2018, 6, 7, 14, 35, 24, tzinfo=UTC)  # "User initiated (… GMT)"
    assert (box.provider, box.region, box.zone) == ("aws", "us-east-2", "us-east-2a")
    assert box.fields["private_ip"] == "172.31.10.153"
    assert box.tags == {"Name": "ssm-test-256", "Expires": "2018-09-23", "Launched": "2018-09-16",
                        "App": "Zebra", "OwnerContact": "kapil"}  # fmt: skip


def test_a_recorded_aggregated_list_read_by_the_google_sdk() -> None:
    body = document("gce-aggregatedlist-instances-custodian.json")["body"]
    server = ApiServer(
        lambda path, query: (200, body) if path.endswith("/aggregated/instances") else (404, {})
    )
    try:
        options = GceOptions(projects=("cloud-custodian",), endpoint=server.url)
        [vm] = KINDS["gce"].list_instances(options, CONTEXT)
    finally:
        server.close()
    assert server.requests[0][0] == "/compute/v1/projects/cloud-custodian/aggregated/instances"
    assert (vm.external_id, vm.name) == ("127589370984384384", "name-123")
    # the recording scrubbed the zone and machine type URLs to ".../compute/v1/projects": the
    # zone is the aggregated list's own key, the machine type unknown (not "projects")
    assert (vm.zone, vm.region, vm.provider) == ("us-east4-c", "us-east4", "gcp")
    assert vm.instance_type is None
    assert (vm.state, vm.ended_by, vm.capacity) == ("ended", "user", "on-demand")  # STANDARD
    assert vm.tags == {"goog-ops-agent-policy": "v2-x86-template-1-4-0", "usage": "dev-purpose"}


def test_a_real_gke_node_read_by_the_kubernetes_client() -> None:
    api = NodesApi()
    api.nodes = [document("k8s-node-gke-preemptible.json")]
    try:
        [node] = KINDS["kubernetes"].list_instances(
            KubernetesOptions(host=api.url, label_selector=""), CONTEXT
        )
    finally:
        api.close()
    assert node.name == "gke-gar-1-pool-1-dce25db1-2mm5"
    assert (node.provider, node.external_id) == ("gcp", "gke-gar-1-pool-1-dce25db1-2mm5")
    assert (node.region, node.zone) == ("us-central1", "us-central1-c")  # the beta labels
    assert (node.instance_type, node.capacity, node.state) == ("n1-standard-1", "spot", "running")
    assert (node.fields["internal_ip"], node.fields["external_ip"]) == (
        "10.128.0.4", "35.192.99.255",
    )  # fmt: skip


def test_prometheus_own_file_sd_fixture(tmp_path: Path) -> None:
    path = tmp_path / "valid.json"
    path.write_bytes((CAPTURED / "prom-file-sd-valid.json").read_bytes())
    found = KINDS["file_sd"].list_instances(FileSdOptions(path=str(path)), CONTEXT)
    assert [(i.external_id, dict(i.tags)) for i in found] == [
        ("localhost:9090", {"foo": "bar"}), ("example.org:443", {"foo": "bar"}), ("my.domain", {}),
    ]  # fmt: skip
    assert (found[1].fields["host"], found[1].fields["port"]) == ("example.org", "443")
    assert found[0].target["labels"] == {"foo": "bar"}


def test_prometheus_own_http_sd_fixture() -> None:
    body = (CAPTURED / "prom-http-sd-good.json").read_bytes()
    server = ApiServer(lambda path, query: (200, body))
    try:
        [one] = KINDS["http_sd"].list_instances(HttpSdOptions(url=f"{server.url}/sd"), CONTEXT)
    finally:
        server.close()
    assert (one.external_id, one.fields["__meta_datacenter"]) == ("127.0.0.1:9090", "bru1")
    assert one.tags == {}  # a __meta_ label is a template field, not a target label
