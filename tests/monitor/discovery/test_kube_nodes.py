"""What a node says of itself, read (pure): its cloud instance from spec.providerID, its
capacity from the providers' labels, how its life ended from its taints and deletion."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from monitor.discovery.kube_nodes import CloudInstance, cloud_instance, node, node_capacity

SUB = "azure:///subscriptions/0000/resourceGroups/mc_rg/providers/Microsoft.Compute"


@pytest.mark.parametrize(
    ("provider_id", "expected"),
    [
        ("aws:///us-east-1a/i-0abc", CloudInstance("aws", "i-0abc", "us-east-1a")),
        ("aws://us-west-2b/i-0def", CloudInstance("aws", "i-0def", "us-west-2b")),
        ("gce://ml-prod/us-central1-a/gke-a3-1", CloudInstance("gcp", "gke-a3-1", "us-central1-a")),
        (f"{SUB}/virtualMachines/gpu-vm-1", CloudInstance("azure", "gpu-vm-1")),
        (f"{SUB}/virtualMachineScaleSets/aks-gpu-vmss/virtualMachines/3",
         CloudInstance("azure", "aks-gpu-vmss_3")),
        (SUB.lower() + "/virtualmachinescalesets/aks-gpu-vmss/virtualmachines/12",
         CloudInstance("azure", "aks-gpu-vmss_12")),  # AKS writes some ids in lower case
        ("gce://only-a-project", CloudInstance("gcp")),
        ("kind://docker/kind/kind-worker", CloudInstance(None)),
        ("", CloudInstance(None)),
    ],
    ids=["aws", "aws-two-slashes", "gce", "azure-vm", "azure-vmss", "azure-lower-case",
         "gce-short", "unknown-scheme", "none"],
)  # fmt: skip
def test_the_provider_id_names_the_cloud_instance(provider_id: str, expected: Any) -> None:
    assert cloud_instance(provider_id) == expected


@pytest.mark.parametrize(
    ("labels", "capacity"),
    [
        ({"eks.amazonaws.com/capacityType": "SPOT"}, "spot"),
        ({"eks.amazonaws.com/capacityType": "ON_DEMAND"}, "on-demand"),
        ({"eks.amazonaws.com/capacityType": "CAPACITY_BLOCK"}, "reserved"),
        ({"karpenter.sh/capacity-type": "spot"}, "spot"),
        ({"karpenter.sh/capacity-type": "on-demand"}, "on-demand"),
        ({"karpenter.sh/capacity-type": "reserved"}, "reserved"),
        ({"cloud.google.com/gke-spot": "true"}, "spot"),
        ({"cloud.google.com/gke-preemptible": "true"}, "spot"),
        ({"kubernetes.azure.com/scalesetpriority": "spot"}, "spot"),
        ({"cloud.google.com/gke-nodepool": "a3"}, "unknown"),
        ({}, "unknown"),
    ],
    ids=["eks-spot", "eks-on-demand", "eks-capacity-block", "karpenter-spot",
         "karpenter-on-demand", "karpenter-reserved", "gke-spot", "gke-preemptible", "aks-spot",
         "gke-standard", "none"],
)  # fmt: skip
def test_the_capacity_is_read_from_the_providers_labels(labels: dict, capacity: str) -> None:
    assert node_capacity(labels) == capacity


def item(
    labels: dict[str, str] | None = None,
    taints: list[dict[str, str]] | None = None,
    ready: str = "True",
    **metadata: Any,
) -> dict[str, Any]:
    return {
        "metadata": {"name": "gpu-1", "uid": "u-1", "labels": labels or {}, **metadata},
        "spec": {"providerID": "aws:///us-east-1a/i-1", "taints": taints or []},
        "status": {"conditions": [{"type": "Ready", "status": ready}]},
    }


SPOT_AKS = {"kubernetes.azure.com/scalesetpriority": "spot"}


@pytest.mark.parametrize(
    ("node_item", "state", "ended_by", "detail"),
    [
        (item(), "running", None, ""),
        (item(ready="False"), "other", None, ""),
        (item(ready="Unknown"), "other", None, ""),
        (item(taints=[{"key": "aws-node-termination-handler/spot-itn", "effect": "NoSchedule"}]),
         "ended", "preempted", "taint aws-node-termination-handler/spot-itn:NoSchedule"),
        (item(taints=[{"key": "cloud.google.com/impending-node-termination",
                       "effect": "NoSchedule"}]),
         "ended", "preempted", "taint cloud.google.com/impending-node-termination:NoSchedule"),
        (item(SPOT_AKS, [{"key": "remediator.kubernetes.azure.com/unschedulable",
                          "value": "true", "effect": "NoSchedule"}]),
         "ended", "preempted",
         "taint remediator.kubernetes.azure.com/unschedulable=true:NoSchedule"),
        (item(taints=[{"key": "remediator.kubernetes.azure.com/unschedulable",
                       "effect": "NoSchedule"}]),
         "running", None, ""),  # on a regular node: a redeploy or reboot, which it survives
        (item(SPOT_AKS, [{"key": "kubernetes.azure.com/scalesetpriority", "value": "spot",
                          "effect": "NoSchedule"}]),
         "running", None, ""),  # every AKS spot node carries it
        (item(taints=[{"key": "ToBeDeletedByClusterAutoscaler", "value": "1796400000",
                       "effect": "NoSchedule"}]),
         "ended", "user", "taint ToBeDeletedByClusterAutoscaler=1796400000:NoSchedule"),
        (item(deletionTimestamp="2026-12-04T12:00:30Z"),
         "ended", "unknown", "node deleted at 2026-12-04T12:00:30Z"),
        (item(taints=[{"key": "ToBeDeletedByClusterAutoscaler", "effect": "NoSchedule"}],
              deletionTimestamp="2026-12-04T12:00:30Z"),
         "ended", "user", "taint ToBeDeletedByClusterAutoscaler:NoSchedule"),  # the taint says who
        (item(taints=[{"key": "ToBeDeletedByClusterAutoscaler", "effect": "NoSchedule"},
                      {"key": "aws-node-termination-handler/spot-itn", "effect": "NoSchedule"}]),
         "ended", "preempted", "taint aws-node-termination-handler/spot-itn:NoSchedule"),
    ],
    ids=["ready", "not-ready", "ready-unknown", "aws-spot-itn", "gke-impending-termination",
         "aks-spot-drain", "aks-regular-drain", "aks-spot-marker", "cluster-autoscaler",
         "deleted", "autoscaler-deleting", "interruption-first"],
)  # fmt: skip
def test_a_nodes_taints_and_deletion_say_how_its_life_ended(
    node_item: dict[str, Any], state: str, ended_by: str | None, detail: str
) -> None:
    instance = node(node_item)
    assert (instance.state, instance.ended_by, instance.end_detail) == (state, ended_by, detail)


def test_an_end_is_dated_by_the_taint_or_the_deletion_where_they_say() -> None:
    tainted = item(taints=[{"key": "aws-node-termination-handler/spot-itn", "effect": "NoExecute",
                            "timeAdded": "2026-12-04T12:00:50Z"}])  # fmt: skip
    assert node(tainted).ended_at == datetime(2026, 12, 4, 12, 0, 50, tzinfo=UTC)
    deleted = item(deletionTimestamp="2026-12-04T12:01:00+00:00")
    assert node(deleted).ended_at == datetime(2026, 12, 4, 12, 1, tzinfo=UTC)
    undated = item(taints=[{"key": "ToBeDeletedByClusterAutoscaler", "timeAdded": "soon"}])
    assert node(undated).ended_at is None  # the sweep's time, then


@pytest.mark.parametrize(
    ("labels", "capacity", "gpus"),
    [
        ({"nvidia.com/gpu.count": "8"}, {"nvidia.com/gpu": "4"}, 8),
        ({}, {"nvidia.com/gpu": "4"}, 4),
        ({"nvidia.com/gpu.count": "eight"}, {"nvidia.com/gpu": "4"}, 4),
        ({}, {"cpu": "96"}, None),
    ],
    ids=["gpu-feature-discovery", "device-plugin", "unreadable-label", "neither"],
)
def test_gpus_come_from_the_label_else_the_capacity(
    labels: dict[str, str], capacity: dict[str, str], gpus: int | None
) -> None:
    node_item = item(labels)
    node_item["status"]["capacity"] = capacity
    assert node(node_item).gpus == gpus
