"""Prometheus' service-discovery document, as file_sd files and http_sd endpoints serve it: a
list of target groups, each ``{"targets": ["host:port", …], "labels": {…}}``.

Each address is one instance. The labels ``name``, ``provider``, ``region``, ``zone``,
``pool``, ``instance_type``, ``gpus``, ``hourly_price``, ``sla``, ``capacity`` and
``external_id`` fill those target fields; labels starting with ``__`` (Prometheus' meta labels)
are template fields only; every other label becomes a target label.
"""

from __future__ import annotations

from typing import Any

from monitor.discovery.model import CAPACITIES, Instance

TARGET_FIELDS = ("provider", "region", "zone", "pool", "instance_type", "sla")
NUMBER_FIELDS = ("gpus", "hourly_price")
SPECIAL = frozenset({"name", "capacity", "external_id", *TARGET_FIELDS, *NUMBER_FIELDS})


class DocumentError(ValueError):
    """The document is not a list of target groups; the message says where it goes wrong."""


def instances(document: Any) -> list[Instance]:
    """Every address in ``document`` as an instance (the first group naming an address wins)."""
    if not isinstance(document, list):
        raise DocumentError(f"expected a list of target groups, got {type(document).__name__}")
    found: dict[str, Instance] = {}
    for index, group in enumerate(document):
        if not isinstance(group, dict):
            raise DocumentError(f"group {index}: expected an object")
        addresses = group.get("targets")
        labels = group.get("labels") or {}
        if not isinstance(addresses, list) or not all(isinstance(a, str) for a in addresses):
            raise DocumentError(f"group {index}: 'targets' must be a list of addresses")
        if not isinstance(labels, dict) or not all(
            isinstance(k, str) and isinstance(v, str) for k, v in labels.items()
        ):
            raise DocumentError(f"group {index}: 'labels' must map names to strings")
        for address in addresses:
            if address and address not in found:
                found[address] = _instance(address, labels, index)
    return list(found.values())


def _instance(address: str, labels: dict[str, str], index: int) -> Instance:
    host, _, port = address.rpartition(":") if ":" in address else (address, "", "")
    capacity = labels.get("capacity", "unknown")
    if capacity not in CAPACITIES:
        raise DocumentError(
            f"group {index}: capacity {capacity!r} is not one of {', '.join(CAPACITIES)}"
        )
    target: dict[str, Any] = {k: labels[k] for k in TARGET_FIELDS if labels.get(k)}
    for key in NUMBER_FIELDS:
        if labels.get(key):
            try:
                target[key] = int(labels[key]) if key == "gpus" else float(labels[key])
            except ValueError:
                raise DocumentError(
                    f"group {index}: label {key}={labels[key]!r} is not a number"
                ) from None
    target["labels"] = {
        k: v for k, v in labels.items() if k not in SPECIAL and not k.startswith("__")
    }
    return Instance(
        external_id=labels.get("external_id") or address,
        name=labels.get("name") or address,
        fields={"address": address, "host": host or address, "port": port, **labels},
        tags={k: v for k, v in labels.items() if not k.startswith("__")},
        provider=target.get("provider"),
        region=target.get("region"),
        zone=target.get("zone"),
        instance_type=target.get("instance_type"),
        gpus=target.get("gpus"),
        capacity=capacity,
        target=target,
    )
