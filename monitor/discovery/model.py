"""What a discovery source says of one instance, in one shape for every cloud.

A source kind (one module in ``monitor/discovery/kinds/``) turns its API's answer into
:class:`Instance` records; the sweep (``monitor/fleet/``) turns those into targets. Nothing
here does I/O.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal

Capacity = Literal["on-demand", "spot", "reserved", "unknown"]
CAPACITIES: tuple[Capacity, ...] = ("on-demand", "spot", "reserved", "unknown")

# Who ended an instance's life: the account (a stop or terminate), the spot or preemptible
# capacity market reclaiming it, the provider (a retirement, a host failure), or nobody knows.
EndedBy = Literal["user", "preempted", "provider", "unknown"]
ENDERS: tuple[EndedBy, ...] = ("user", "preempted", "provider", "unknown")

# running: probe it. ended: the cloud says its life is over (terminated, stopped, preempted,
# deleted). other: it exists but is neither yet (pending, stopping, provisioning): it is seen, so
# it is not missing, but a new one is not registered until it runs.
InstanceState = Literal["running", "ended", "other"]


@dataclass(frozen=True, slots=True)
class Instance:
    """One instance as its source saw it.

    ``external_id`` is the cloud's own id (an EC2 instance id, which is also its Kubernetes
    node's, read from the node's providerID; a file_sd address): the target keeps it, two
    sources that see the same id see one target, and account events join on it. ``fields``
    are what a target template may name (``{private_ip}``, ``{tags.pool}``); ``tags`` holds
    the cloud's tags or labels.
    """

    external_id: str
    name: str
    state: InstanceState = "running"
    fields: Mapping[str, Any] = field(default_factory=dict)
    tags: Mapping[str, str] = field(default_factory=dict)
    provider: str | None = None
    region: str | None = None
    zone: str | None = None
    instance_type: str | None = None
    gpus: int | None = None  # None: from the instance type's table
    capacity: Capacity = "unknown"
    ended_by: EndedBy | None = None  # set when state is "ended"
    ended_at: datetime | None = None  # when the cloud says it ended, where it says
    end_detail: str = ""  # the cloud's own words: a state reason, an eviction notice
    target: Mapping[str, Any] = field(default_factory=dict)  # target fields the source sets

    def template_fields(self) -> dict[str, Any]:
        """Everything a template may name: the source's fields, the common ones, and
        ``tags.<key>`` for each tag."""
        common = {
            "external_id": self.external_id,
            "name": self.name,
            "provider": self.provider,
            "region": self.region,
            "zone": self.zone,
            "instance_type": self.instance_type,
            "capacity": self.capacity,
        }
        values = {k: v for k, v in common.items() if v is not None}
        values.update(self.fields)
        values.update({f"tags.{key}": value for key, value in self.tags.items()})
        return values
