"""Kubernetes' NodeList, as ``GET /api/v1/nodes`` answers it, read into instances (pure).

Each node is one instance, named by the node. The well-known labels say where it runs
(``topology.kubernetes.io/region|zone``), what it is (``node.kubernetes.io/instance-type``,
GPU Feature Discovery's ``nvidia.com/gpu.count`` and ``nvidia.com/gpu.product``) and what
capacity it is bought as (EKS, Karpenter, GKE and AKS each have their own label).
``spec.providerID`` says which cloud instance it is: its id is the instance's external id, so
a node and the cloud source's instance of it are one target. Taints say how a life ends: a
spot-interruption notice is a ``preempted`` end, the cluster autoscaler's scale-in a ``user``
one; a node being deleted (``metadata.deletionTimestamp``) otherwise ends for an unknown
reason. A node whose ``Ready`` condition is not ``True`` is seen but not running.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from monitor.discovery.model import Capacity, EndedBy, Instance, InstanceState
from monitor.sla.times import parse_aware

GPU_COUNT = "nvidia.com/gpu.count"  # GPU Feature Discovery's labels
GPU_PRODUCT = "nvidia.com/gpu.product"
GPU_RESOURCE = "nvidia.com/gpu"  # the device plugin's resource, in status.capacity
# each label, then its deprecated beta spelling (older clusters still set only that)
REGION = ("topology.kubernetes.io/region", "failure-domain.beta.kubernetes.io/region")
ZONE = ("topology.kubernetes.io/zone", "failure-domain.beta.kubernetes.io/zone")
INSTANCE_TYPE = ("node.kubernetes.io/instance-type", "beta.kubernetes.io/instance-type")

# label -> its value -> capacity; the first label a node has decides
CAPACITY_LABELS: dict[str, dict[str, Capacity]] = {
    "eks.amazonaws.com/capacityType": {
        "SPOT": "spot", "ON_DEMAND": "on-demand", "CAPACITY_BLOCK": "reserved",
    },
    "karpenter.sh/capacity-type": {
        "spot": "spot", "on-demand": "on-demand", "reserved": "reserved",
    },
    "cloud.google.com/gke-spot": {"true": "spot"},
    "cloud.google.com/gke-preemptible": {"true": "spot"},
    "kubernetes.azure.com/scalesetpriority": {"spot": "spot"},
}  # fmt: skip

# taints that say the spot market is reclaiming the node: AWS Node Termination Handler's
# interruption notice, GKE's graceful shutdown of a spot or preemptible VM
PREEMPTION_TAINTS = frozenset(
    {"aws-node-termination-handler/spot-itn", "cloud.google.com/impending-node-termination"}
)
# AKS node auto-drain's taint for a scheduled event; on a spot node, that event is an eviction
# (on others a redeploy or a reboot, which the node survives)
AKS_DRAIN_TAINT = "remediator.kubernetes.azure.com/unschedulable"
SCALE_IN_TAINT = "ToBeDeletedByClusterAutoscaler"  # the account's own autoscaler removes it
PROVIDERS = {"aws": "aws", "gce": "gcp", "azure": "azure"}  # providerID scheme -> provider


class NodeListError(ValueError):
    """The answer is not a NodeList; the message says where it goes wrong."""


@dataclass(frozen=True, slots=True)
class CloudInstance:
    """What ``spec.providerID`` says: the cloud (None for a scheme we do not know), the
    cloud's own instance id where we can read one, and the zone where it names one."""

    provider: str | None
    instance_id: str | None = None
    zone: str | None = None


def page(document: Any) -> tuple[list[Instance], str | None]:
    """One NodeList page's nodes as instances, and its ``metadata.continue`` (None: the last
    page). Raises :class:`NodeListError` for anything that is not a NodeList."""
    if not isinstance(document, dict):
        raise NodeListError(f"expected a NodeList object, got {type(document).__name__}")
    if document.get("kind", "NodeList") != "NodeList":
        raise NodeListError(f"expected a NodeList, got {document.get('kind')!r}")
    items = document.get("items")
    items = [] if items is None else items  # an empty list may be written as null
    if not isinstance(items, list):
        raise NodeListError("'items' is not a list")
    token = _mapping(document.get("metadata"), "metadata").get("continue") or None
    if token is not None and not isinstance(token, str):
        raise NodeListError("metadata.continue is not a string")
    return [node(item, index) for index, item in enumerate(items)], token


def node(item: Any, index: int = 0) -> Instance:
    """One node as an instance."""
    item = _mapping(item, f"items[{index}]")
    meta = _mapping(item.get("metadata"), f"items[{index}].metadata")
    name = meta.get("name")
    if not isinstance(name, str) or not name:
        raise NodeListError(f"items[{index}]: a node without a name")
    spec = _mapping(item.get("spec"), f"node {name}: spec")
    status = _mapping(item.get("status"), f"node {name}: status")
    labels = _strings(meta.get("labels"), f"node {name}: metadata.labels")
    provider_id = spec.get("providerID") or ""
    if not isinstance(provider_id, str):
        raise NodeListError(f"node {name}: spec.providerID is not a string")
    cloud = cloud_instance(provider_id)
    uid = meta.get("uid") if isinstance(meta.get("uid"), str) else None
    external_id = cloud.instance_id or provider_id or uid or name
    capacity = node_capacity(labels)
    state, ended_by, ended_at, detail = node_state(name, meta, spec, status, capacity)
    fields = _fields(name, status, labels, provider_id, external_id)
    return Instance(
        external_id=external_id,
        name=name,
        state=state,
        fields=fields,
        tags=labels,
        provider=cloud.provider,
        region=_label(labels, REGION),
        zone=_label(labels, ZONE) or cloud.zone,
        instance_type=_label(labels, INSTANCE_TYPE),
        gpus=node_gpus(labels, status),
        capacity=capacity,
        ended_by=ended_by,
        ended_at=ended_at,
        end_detail=detail,
    )


def cloud_instance(provider_id: str) -> CloudInstance:
    """``aws:///us-east-1a/i-0abc`` is AWS instance ``i-0abc`` in us-east-1a;
    ``gce://project/zone/name`` is the GCE VM ``name``; ``azure:///subscriptions/…/
    virtualMachines/name`` the Azure VM ``name``, and a scale set's ``…/virtualMachineScaleSets/
    set/virtualMachines/3`` its VM ``set_3`` (the name Azure gives it)."""
    scheme, _, rest = provider_id.partition("://")
    provider = PROVIDERS.get(scheme.lower()) if rest else None
    parts = [part for part in rest.split("/") if part]
    if provider == "aws" and parts:
        return CloudInstance(provider, parts[-1], parts[0] if len(parts) > 1 else None)
    if provider == "gcp" and len(parts) == 3:
        return CloudInstance(provider, parts[2], parts[1])
    if provider == "azure":
        return CloudInstance(provider, _azure_vm(parts))
    return CloudInstance(provider)


def _azure_vm(parts: list[str]) -> str | None:
    lower = [part.lower() for part in parts]  # Azure's resource ids ignore case
    if "virtualmachinescalesets" in lower:
        at = lower.index("virtualmachinescalesets")
        if len(parts) >= at + 4 and lower[at + 2] == "virtualmachines":
            return f"{parts[at + 1]}_{parts[at + 3]}"
        return None
    if "virtualmachines" in lower and lower.index("virtualmachines") + 1 < len(parts):
        return parts[lower.index("virtualmachines") + 1]
    return None


def node_capacity(labels: Mapping[str, str]) -> Capacity:
    """The capacity the node is bought as, from the first well-known label it carries."""
    for label, values in CAPACITY_LABELS.items():
        if label in labels and labels[label] in values:
            return values[labels[label]]
    return "unknown"


def node_gpus(labels: Mapping[str, str], status: Mapping[str, Any]) -> int | None:
    """GPU Feature Discovery's count, else the device plugin's capacity; None when neither
    says (the instance type's table then does)."""
    capacity = status.get("capacity")
    resources = capacity if isinstance(capacity, dict) else {}
    for value in (labels.get(GPU_COUNT), resources.get(GPU_RESOURCE)):
        if isinstance(value, str | int) and str(value).isdigit():
            return int(value)
    return None  # neither, or not a count (a quantity like "1k" is not a GPU count)


def node_state(
    name: str,
    meta: Mapping[str, Any],
    spec: Mapping[str, Any],
    status: Mapping[str, Any],
    capacity: Capacity,
) -> tuple[InstanceState, EndedBy | None, datetime | None, str]:
    """Running, ended (who ended it, when, in the cluster's own words) or neither."""
    taints = spec.get("taints") or []
    if not isinstance(taints, list):
        raise NodeListError(f"node {name}: spec.taints is not a list")
    for taint in (t for t in taints if isinstance(t, dict)):
        key = taint.get("key")
        if key in PREEMPTION_TAINTS or (key == AKS_DRAIN_TAINT and capacity == "spot"):
            return "ended", "preempted", _time(taint.get("timeAdded")), _taint(taint)
    for taint in (t for t in taints if isinstance(t, dict)):
        if taint.get("key") == SCALE_IN_TAINT:
            return "ended", "user", _time(taint.get("timeAdded")), _taint(taint)
    deleted = meta.get("deletionTimestamp")
    if deleted:
        return "ended", "unknown", _time(deleted), f"node deleted at {deleted}"
    return ("running" if _ready(status) else "other"), None, None, ""


def _ready(status: Mapping[str, Any]) -> bool:
    conditions = status.get("conditions") or []
    if not isinstance(conditions, list):
        return False
    return any(
        isinstance(c, dict) and c.get("type") == "Ready" and c.get("status") == "True"
        for c in conditions
    )


def _fields(
    name: str,
    status: Mapping[str, Any],
    labels: Mapping[str, str],
    provider_id: str,
    instance_id: str,
) -> dict[str, str]:
    """The template fields: the node's first address of each type, and what names it."""
    addresses = status.get("addresses") or []
    found: dict[str, str] = {}
    for address in addresses if isinstance(addresses, list) else []:
        if isinstance(address, dict) and isinstance(address.get("address"), str):
            found.setdefault(str(address.get("type")), address["address"])
    fields = {
        "internal_ip": found.get("InternalIP"),
        "external_ip": found.get("ExternalIP"),
        "hostname": found.get("Hostname"),
        "node": name,
        "provider_id": provider_id or None,
        "gpu_product": labels.get(GPU_PRODUCT),
        "instance_id": instance_id,
    }
    return {key: value for key, value in fields.items() if value}


def _label(labels: Mapping[str, str], names: tuple[str, ...]) -> str | None:
    return next((labels[name] for name in names if labels.get(name)), None)


def _taint(taint: Mapping[str, Any]) -> str:
    """A taint as kubectl writes it: ``key=value:effect``."""
    value = f"={taint['value']}" if taint.get("value") else ""
    effect = f":{taint['effect']}" if taint.get("effect") else ""
    return f"taint {taint.get('key')}{value}{effect}"


def _time(value: Any) -> datetime | None:
    """A timestamp the API gave, or None where it gave none we can read (the end is then
    now: a timestamp is a detail, not a reason to fail the sweep)."""
    try:
        return parse_aware(value) if isinstance(value, str) else None
    except ValueError:
        return None


def _mapping(value: Any, where: str) -> dict[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise NodeListError(f"{where} is not an object")
    return value


def _strings(value: Any, where: str) -> dict[str, str]:
    found = _mapping(value, where)
    if not all(isinstance(v, str) for v in found.values()):
        raise NodeListError(f"{where} must map names to strings")
    return found
