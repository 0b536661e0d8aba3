"""The kubernetes source against a real local API server: the official client sends its real
requests to `GET /api/v1/nodes` (pointed there by the source's `host` option, or by a real
kubeconfig file), and the server answers the published NodeList shape, honouring
`labelSelector`, `limit` and `continue`. The nodes below are built as EKS, GKE and AKS label and
fill them (the providers' documented labels and providerID formats), not captured from a
cluster."""

from __future__ import annotations

import json
import socket
import ssl
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import select
from sqlalchemy.orm import Session, sessionmaker

from monitor.config import parse_config
from monitor.db.models import DiscoverySource, Outage
from monitor.discovery.kind import SweepContext
from monitor.discovery.kinds import KINDS
from monitor.discovery.kinds.kubernetes import KubernetesOptions
from monitor.discovery.model import Instance
from monitor.errors import ConfigError, SweepFailed
from tests.monitor.discovery.fake_clouds import NodesApi, kube_node, swept, targets_by_name
from tests.monitor.probes.test_wire import make_certificate

T0 = datetime(2026, 12, 4, 12, tzinfo=UTC)
CONTEXT = SweepContext("cluster", T0, timeout_s=5.0)
GPU = {"nvidia.com/gpu.present": "true"}


EKS = kube_node(
    "ip-10-0-1-5.ec2.internal",
    {
        **GPU,
        "topology.kubernetes.io/region": "us-east-1",
        "topology.kubernetes.io/zone": "us-east-1a",
        "node.kubernetes.io/instance-type": "p5.48xlarge",
        "eks.amazonaws.com/capacityType": "SPOT",
        "nvidia.com/gpu.count": "8",
        "nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3",
    },
    "aws:///us-east-1a/i-0abc123def4567890",
    ip="10.0.1.5",
)
GKE = kube_node(
    "gke-ml-a3-pool-1a2b3c4d-xk2p",
    {
        **GPU,
        "failure-domain.beta.kubernetes.io/region": "us-central1",  # an older cluster's labels
        "failure-domain.beta.kubernetes.io/zone": "us-central1-a",
        "beta.kubernetes.io/instance-type": "a3-highgpu-8g",
        "cloud.google.com/gke-spot": "true",
    },
    "gce://ml-training/us-central1-a/gke-ml-a3-pool-1a2b3c4d-xk2p",
    capacity={"nvidia.com/gpu": "8"},  # no GPU Feature Discovery: the device plugin says
    ip="10.128.0.7",
)
AKS = kube_node(
    "aks-gpupool-12345678-vmss000003",
    {
        **GPU,
        "topology.kubernetes.io/region": "eastus",
        "topology.kubernetes.io/zone": "eastus-1",
        "node.kubernetes.io/instance-type": "Standard_ND96isr_H100_v5",
        "kubernetes.azure.com/scalesetpriority": "spot",
    },
    "azure:///subscriptions/0000/resourceGroups/mc_ml_aks_eastus/providers/Microsoft.Compute/"
    "virtualMachineScaleSets/aks-gpupool-12345678-vmss/virtualMachines/3",
    taints=[
        {"key": "kubernetes.azure.com/scalesetpriority", "value": "spot", "effect": "NoSchedule"}
    ],
    ip="10.224.0.4",
)
CPU = kube_node("ip-10-0-9-9.ec2.internal", {"node.kubernetes.io/instance-type": "m7i.large"})


def listed(api: NodesApi, timeout_s: float = 5.0, **options: Any) -> list[Instance]:
    context = SweepContext("cluster", T0, timeout_s=timeout_s)
    chosen = KubernetesOptions(host=api.url, **options)
    return list(KINDS["kubernetes"].list_instances(chosen, context))


def failure(api: NodesApi, **options: Any) -> str:
    with pytest.raises(SweepFailed) as caught:
        listed(api, **options)
    message = str(caught.value)
    assert "\n" not in message
    return message


def test_eks_gke_and_aks_gpu_nodes_are_instances_of_their_cloud(api: NodesApi) -> None:
    api.nodes = [EKS, GKE, AKS, CPU]
    eks, gke, aks = listed(api)
    assert (eks.external_id, eks.name, eks.provider, eks.region, eks.zone) == (
        "i-0abc123def4567890", "ip-10-0-1-5.ec2.internal", "aws", "us-east-1", "us-east-1a",
    )  # fmt: skip
    assert (eks.instance_type, eks.gpus, eks.capacity, eks.state) == (
        "p5.48xlarge", 8, "spot", "running",
    )  # fmt: skip
    assert eks.fields == {
        "internal_ip": "10.0.1.5",
        "hostname": "ip-10-0-1-5.ec2.internal.internal",
        "node": "ip-10-0-1-5.ec2.internal",
        "provider_id": "aws:///us-east-1a/i-0abc123def4567890",
        "gpu_product": "NVIDIA-H100-80GB-HBM3",
        "instance_id": "i-0abc123def4567890",
    }
    assert eks.tags["eks.amazonaws.com/capacityType"] == "SPOT"
    assert (gke.external_id, gke.provider, gke.region, gke.zone) == (
        "gke-ml-a3-pool-1a2b3c4d-xk2p", "gcp", "us-central1", "us-central1-a",
    )  # fmt: skip
    assert (gke.instance_type, gke.gpus, gke.capacity) == ("a3-highgpu-8g", 8, "spot")
    assert (aks.external_id, aks.provider, aks.region, aks.zone) == (
        "aks-gpupool-12345678-vmss_3", "azure", "eastus", "eastus-1",
    )  # fmt: skip
    # no GPU label nor device plugin: the instance type's table says (8 x H100)
    assert (aks.instance_type, aks.gpus, aks.capacity) == ("Standard_ND96isr_H100_v5", None, "spot")
    assert aks.state == "running"  # AKS taints every spot node: that is not an eviction


def test_the_label_selector_is_sent_and_the_default_selects_gpu_nodes(api: NodesApi) -> None:
    api.nodes = [EKS, CPU]
    assert [i.name for i in listed(api)] == [EKS["metadata"]["name"]]
    assert api.requests[-1][0]["labelSelector"] == "nvidia.com/gpu.present=true"
    chosen = listed(api, label_selector="node.kubernetes.io/instance-type=m7i.large")
    assert [i.name for i in chosen] == [CPU["metadata"]["name"]]


def test_a_large_cluster_is_listed_page_by_page(api: NodesApi) -> None:
    api.nodes = [
        kube_node(f"n{n}", {**GPU}, f"aws:///us-east-1a/i-{n:05x}", ip=f"10.1.{n // 250}.{n % 250}")
        for n in range(1201)
    ]
    found = listed(api)
    assert len({i.external_id for i in found}) == 1201
    pages = [query for query, _ in api.requests]
    assert [q.get("continue") for q in pages] == [None, "500", "1000"]
    assert all(q["limit"] == "500" for q in pages)


def test_a_node_without_a_cloud_is_named_by_its_provider_id_or_its_uid(api: NodesApi) -> None:
    api.nodes = [
        kube_node("kind-worker", GPU, "kind://docker/kind/kind-worker"),
        kube_node("bare-metal-7", GPU),
    ]
    kind, bare = listed(api)
    assert (kind.external_id, kind.provider) == ("kind://docker/kind/kind-worker", None)
    assert (bare.external_id, bare.provider, bare.fields["instance_id"]) == (
        "uid-bare-metal-7", None, "uid-bare-metal-7",
    )  # fmt: skip
    assert "provider_id" not in bare.fields


def test_a_token_is_sent_as_a_bearer_token(api: NodesApi) -> None:
    api.nodes = [EKS]
    listed(api, token="s3cret")
    assert api.requests[-1][1]["authorization"] == "Bearer s3cret"
    assert "s3cret" not in repr(KubernetesOptions(host=api.url, token="s3cret"))


def test_a_kubeconfig_and_its_context_are_read(
    api: NodesApi, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    (tmp_path / "kubeconfig").write_text(
        json.dumps({
            "apiVersion": "v1", "kind": "Config", "current-context": "other",
            "clusters": [{"name": "lab", "cluster": {"server": api.url}},
                         {"name": "far", "cluster": {"server": "http://127.0.0.1:9"}}],
            "users": [{"name": "ops", "user": {"token": "from-kubeconfig"}}],
            "contexts": [{"name": "lab", "context": {"cluster": "lab", "user": "ops"}},
                         {"name": "other", "context": {"cluster": "far", "user": "ops"}}],
        })
    )  # fmt: skip
    api.nodes = [EKS]
    chosen = KubernetesOptions(kubeconfig="~/kubeconfig", context="lab")
    found = KINDS["kubernetes"].list_instances(chosen, CONTEXT)
    assert [i.external_id for i in found] == ["i-0abc123def4567890"]
    assert api.requests[-1][1]["authorization"] == "Bearer from-kubeconfig"
    # host overrides the current context's server (a proxy), its credentials stay
    proxied = KubernetesOptions(kubeconfig="~/kubeconfig", host=f"{api.url}/")
    assert len(KINDS["kubernetes"].list_instances(proxied, CONTEXT)) == 1
    assert len(api.requests) == 2


def test_a_missing_kubeconfig_fails_the_sweep_in_one_line(tmp_path: Path) -> None:
    chosen = KubernetesOptions(kubeconfig=str(tmp_path / "nowhere"))
    with pytest.raises(SweepFailed) as caught:
        KINDS["kubernetes"].list_instances(chosen, CONTEXT)
    assert str(caught.value).startswith(f"kubernetes: cannot read kubeconfig {tmp_path}/nowhere")
    assert "\n" not in str(caught.value)


def test_in_cluster_outside_a_pod_fails_the_sweep_in_one_line(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)
    with pytest.raises(SweepFailed) as caught:
        KINDS["kubernetes"].list_instances(KubernetesOptions(in_cluster=True), CONTEXT)
    assert str(caught.value) == (
        "kubernetes: cannot read the pod's service account: Service host/port is not set."
    )


def test_a_403_fails_in_one_line_with_what_the_api_server_said(api: NodesApi) -> None:
    status = {
        "kind": "Status", "apiVersion": "v1", "status": "Failure", "reason": "Forbidden",
        "code": 403, "details": {"kind": "nodes"},
        "message": 'nodes is forbidden: User "system:serviceaccount:slamon:slamon" cannot '
                   'list resource "nodes" in API group "" at the cluster scope',
    }  # fmt: skip
    api.answer = (403, json.dumps(status).encode())
    assert failure(api) == (
        f"kubernetes: {api.url} answered HTTP 403: nodes is forbidden: User "
        '"system:serviceaccount:slamon:slamon" cannot list resource "nodes" in API group "" at '
        "the cluster scope"
    )


def test_a_401_without_a_status_body_says_its_reason(api: NodesApi) -> None:
    api.answer = (401, b"")
    assert failure(api) == f"kubernetes: {api.url} answered HTTP 401: Unauthorized"


def test_a_closed_port_fails_in_one_line() -> None:
    with socket.socket() as free:
        free.bind(("127.0.0.1", 0))
        port = free.getsockname()[1]
    chosen = KubernetesOptions(host=f"http://127.0.0.1:{port}")
    with pytest.raises(SweepFailed) as caught:
        KINDS["kubernetes"].list_instances(chosen, CONTEXT)
    assert (
        str(caught.value) == f"kubernetes: http://127.0.0.1:{port} unreachable: Connection refused"
    )


def test_a_certificate_the_client_does_not_trust_fails_in_one_line(tmp_path: Path) -> None:
    tls = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    tls.load_cert_chain(*make_certificate(tmp_path, "IP:127.0.0.1"))
    api = NodesApi(tls)
    try:
        assert failure(api) == (
            f"kubernetes: {api.url} unreachable: TLS: certificate verify failed: "
            "self-signed certificate"
        )
    finally:
        api.close()


def test_a_slow_api_server_times_out_in_one_line(api: NodesApi) -> None:
    api.nodes, api.server.delay_s = [EKS], 2.0
    with pytest.raises(SweepFailed) as caught:
        listed(api, timeout_s=0.5)
    assert str(caught.value) == f"kubernetes: {api.url} timed out after 0.5 s"
    assert len(api.requests) == 1  # one try: the next sweep is the retry


@pytest.mark.parametrize(
    ("body", "said"),
    [
        (b"<html>Sign in</html>", "Expecting value: line 1 column 1 (char 0)"),
        (b'{"kind": "PodList", "items": []}', "expected a NodeList, got 'PodList'"),
        (b'{"kind": "NodeList", "items": {}}', "'items' is not a list"),
        (b'{"kind": "NodeList", "items": [{"metadata": {}}]}', "items[0]: a node without a name"),
        (b'{"items": [{"metadata": {"name": "n", "labels": {"gpus": 8}}}]}',
         "node n: metadata.labels must map names to strings"),
    ],
    ids=["html", "another-kind", "items-not-a-list", "nameless-node", "numeric-label"],
)  # fmt: skip
def test_a_malformed_answer_fails_in_one_line(api: NodesApi, body: bytes, said: str) -> None:
    api.answer = (200, body)
    assert failure(api) == f"kubernetes: {api.url} answered a malformed NodeList: {said}"


def test_the_config_checks_the_options_and_the_connection_is_one_way_in() -> None:
    def check(extra: str) -> str:
        with pytest.raises(ConfigError) as caught:
            parse_config(
                "discovery:\n  - {name: c, kind: kubernetes, template: {kind: tcp, url: "
                f"'tcp://{{internal_ip}}:22'}}, {extra}}}\n"
            )
        return str(caught.value)

    assert "in_cluster" in check("in_cluster: true, kubeconfig: /etc/kube")
    assert "token: goes with host" in check("token: abc")
    assert "namespace" in check("namespace: default")
    assert "host" in check("host: 'ftp://x'")


# --- through the real sweep ------------------------------------------------------------------

CONFIG = """
discovery:
  - name: cluster
    kind: kubernetes
    host: {url}
    template: {{kind: dcgm, url: "http://{{internal_ip}}:9400/metrics", pool: "{{tags.pool}}",
               name: "{{node}}"}}
"""
POOL = {**GPU, "pool": "h100", "karpenter.sh/capacity-type": "spot",
        "node.kubernetes.io/instance-type": "p5.48xlarge"}  # fmt: skip
ITN = {"key": "aws-node-termination-handler/spot-itn", "value": "spot-itn-7f3d",
       "effect": "NoSchedule"}  # fmt: skip


def run(sessions: sessionmaker[Session], api: NodesApi, at: datetime) -> Any:
    return swept(sessions, CONFIG.format(url=api.url), "cluster", at)


def test_a_spot_interruption_taint_ends_the_life_as_a_preemption(
    sessions: sessionmaker[Session], api: NodesApi
) -> None:
    api.nodes = [kube_node("gpu-1", POOL, "aws:///us-east-1a/i-1"),
                 kube_node("gpu-2", POOL, "aws:///us-east-1b/i-2", ip="10.0.0.2")]  # fmt: skip
    added = run(sessions, api, T0)
    assert [(s.action, s.target, s.gpus, s.capacity) for s in added.steps] == [
        ("added", "gpu-1", 8, "spot"), ("added", "gpu-2", 8, "spot"),
    ]  # fmt: skip
    one = targets_by_name(sessions)["gpu-1"]
    assert (one.url, one.pool, one.external_id, one.provider, one.zone) == (
        "http://10.0.0.1:9400/metrics", "h100", "i-1", "aws", "us-east-1a",
    )  # fmt: skip
    api.nodes[0] = kube_node("gpu-1", POOL, "aws:///us-east-1a/i-1", taints=[ITN])
    steps = run(sessions, api, T0 + timedelta(minutes=1)).steps
    assert [(s.action, s.target, s.reason) for s in steps] == [
        ("retired", "gpu-1", "preempted"), ("kept", "gpu-2", "unchanged"),
    ]  # fmt: skip
    gone = targets_by_name(sessions)["gpu-1"]
    assert gone.retired_at == T0 + timedelta(minutes=1)
    assert (gone.ended_by, gone.end_detail) == (
        "preempted", "taint aws-node-termination-handler/spot-itn=spot-itn-7f3d:NoSchedule",
    )  # fmt: skip
    with sessions() as session:
        assert list(session.scalars(select(Outage))) == []


def test_a_403_sweep_is_recorded_and_retires_nothing(
    sessions: sessionmaker[Session], api: NodesApi
) -> None:
    api.nodes = [kube_node("gpu-1", POOL, "aws:///us-east-1a/i-1")]
    run(sessions, api, T0)
    api.answer = (403, b'{"kind": "Status", "code": 403, "message": "nodes is forbidden"}')
    for minute in (1, 2, 3):
        outcome = run(sessions, api, T0 + timedelta(minutes=minute))
        assert outcome.error == f"kubernetes: {api.url} answered HTTP 403: nodes is forbidden"
        assert not outcome.steps
    assert targets_by_name(sessions)["gpu-1"].retired_at is None
    with sessions() as session:
        state = session.get(DiscoverySource, "cluster")
        assert state is not None
        assert (state.consecutive_failures, state.last_success_at) == (3, T0)
