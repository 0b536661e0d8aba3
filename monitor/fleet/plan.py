"""One sweep, decided: what each instance a source listed means for the targets (pure).

The rules users rely on:

- a new running instance is registered (``added``); one that changed is ``updated`` in place,
  its history kept; one that is the same is ``kept``;
- an instance is retired only when its cloud says its life ended (stopped, terminated,
  preempted, deleted: the reason says who ended it) or after it has been missing from
  ``retire_after`` consecutive successful sweeps (reason ``missing``); a failed sweep never
  reaches this module, so it retires nothing;
- an instance two sources see (one external id) is one target, the first source's;
- an instance whose target name is taken by a config or API target, or by another instance, is
  ``refused`` with one line saying so; so is one whose template names a field it lacks. A
  refused instance that already has a target keeps it as it is (it is not missing).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal

from pydantic import ValidationError

from monitor.config.models import DiscoveryConfig, TargetConfig
from monitor.discovery.gpu_types import gpu_shape
from monitor.discovery.model import EndedBy, Instance
from monitor.discovery.template import TemplateError, render
from monitor.targets import target_values

Action = Literal["added", "updated", "kept", "retired", "refused"]


@dataclass(frozen=True, slots=True)
class Known:
    """A target row as the plan needs it: who owns it, what it is, how the sweep remembers it."""

    id: int
    name: str
    source: str  # config | api | discovery
    discovered_by: str | None
    external_id: str | None
    retired: bool
    missing_sweeps: int = 0
    ended_by: str | None = None  # retired: who ended its life (unknown: lost sight of it)


@dataclass(frozen=True, slots=True)
class Step:
    """What the sweep does about one instance (or one target no longer listed)."""

    action: Action
    target: str
    external_id: str
    reason: str
    instance_type: str | None = None
    gpus: int = 0
    capacity: str = "unknown"
    config: TargetConfig | None = None  # added / updated: the target it should be
    row_id: int | None = None  # the target row it is about, where one exists
    ended_by: EndedBy | None = None  # retired: who ended it
    ended_at: datetime | None = None  # retired: when the cloud says (None: now)
    end_detail: str = ""
    seen_running: bool = False  # the cloud says it runs now (the down alert's confirmation)
    seen: bool = False  # listed at all (not missing)

    def to_json(self, source: str) -> dict[str, Any]:
        """The line `slamon discover once --json` prints (docs/DESIGN.md)."""
        return {
            "source": source,
            "action": self.action,
            "target": self.target,
            "external_id": self.external_id,
            "reason": self.reason,
            "instance_type": self.instance_type,
            "gpus": self.gpus,
            "capacity": self.capacity,
        }


@dataclass(slots=True)
class Plan:
    steps: list[Step] = field(default_factory=list)

    def counts(self) -> dict[str, int]:
        tally = dict.fromkeys(("added", "updated", "kept", "retired", "refused"), 0)
        for step in self.steps:
            tally[step.action] += 1
        return tally


def desired_target(source: DiscoveryConfig, instance: Instance) -> TargetConfig:
    """The target ``instance`` should be under ``source``'s template. Raises ``ValueError``
    with one line (a template field the instance lacks, a value the target refuses)."""
    fields = instance.template_fields()
    rendered = render(source.template, fields)
    wanted: dict[str, Any] = {
        "provider": instance.provider,
        "region": instance.region,
        "zone": instance.zone,
        "instance_type": instance.instance_type,
    }
    wanted = {k: v for k, v in wanted.items() if v is not None}
    wanted |= rendered
    given = dict(instance.target)
    labels = {**rendered.get("labels", {}), **given.pop("labels", {})}
    wanted |= given
    wanted["labels"] = labels
    wanted.setdefault("name", instance.name)
    if "gpus" not in wanted:
        gpus = instance.gpus
        if gpus is None:
            shape = gpu_shape(instance.instance_type, source.gpu_types)
            gpus = shape.count if shape else 0
        wanted["gpus"] = gpus
    if "hourly_price" not in wanted:
        price = _price(source, instance)
        if price is not None:
            wanted["hourly_price"] = price
    wanted["capacity"] = instance.capacity
    wanted["instance_id"] = instance.external_id
    try:
        return TargetConfig.model_validate(wanted)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(part) for part in first["loc"])
        message = str(first["msg"]).removeprefix("Value error, ")
        raise ValueError(f"{where}: {message}" if where else message) from None


def _price(source: DiscoveryConfig, instance: Instance) -> float | None:
    """The hourly price: the source's ``price_tag`` on the instance, else its price table."""
    if source.price_tag and instance.tags.get(source.price_tag):
        try:
            return float(instance.tags[source.price_tag])
        except ValueError:
            raise ValueError(
                f"price_tag: tag {source.price_tag}={instance.tags[source.price_tag]!r} "
                "is not a number"
            ) from None
    if instance.instance_type and instance.instance_type in source.prices:
        return source.prices[instance.instance_type]
    return None


def plan_sweep(
    source: DiscoveryConfig,
    instances: Iterable[Instance],
    known: Sequence[Known],
    current: Mapping[int, Mapping[str, Any]],
    providers: Mapping[str, str] | None = None,
    desired: Mapping[str, TargetConfig | ValueError] | None = None,
) -> Plan:
    """Decide one successful sweep of ``source``.

    ``known``: every target row the sweep may touch (this source's, and any other that holds
    one of the listed external ids or wanted names). ``current``: for this source's rows, the
    columns each holds now (to tell ``updated`` from ``kept``); ``providers`` names each SLA
    policy's provider, as :func:`monitor.targets.target_values` takes it. ``desired``: each
    running instance's :func:`desired_target` (or why it has none), when the caller has it.
    """
    by_external: dict[str, Known] = {}
    for row in sorted(known, key=lambda r: (r.retired, r.id)):  # a live row first
        if row.external_id is not None:
            by_external.setdefault(row.external_id, row)
    by_name = {row.name: row for row in known}
    plan = Plan()
    listed: set[int] = set()
    claimed_names: dict[str, str] = {}  # name -> external id, within this sweep
    for instance in _distinct(instances):
        holder = by_external.get(instance.external_id)
        wanted = (desired or {}).get(instance.external_id)
        step = _step(source, instance, holder, by_name, claimed_names, current, providers, wanted)
        if step is None:
            continue
        if holder is not None and holder.discovered_by == source.name:
            listed.add(holder.id)
        plan.steps.append(step)
    for row in known:
        if row.discovered_by != source.name or row.retired or row.id in listed:
            continue
        if row.source != "discovery":
            continue
        missing = row.missing_sweeps + 1
        external_id = row.external_id or ""
        if missing >= source.retire_after:
            detail = f"missing from {missing} consecutive successful sweeps"
            plan.steps.append(Step("retired", row.name, external_id, "missing", row_id=row.id,
                                   ended_by="unknown", end_detail=detail))  # fmt: skip
        else:
            reason = f"missing from {missing} of {source.retire_after} sweeps"
            plan.steps.append(Step("kept", row.name, external_id, reason, row_id=row.id))
    return plan


def _distinct(instances: Iterable[Instance]) -> list[Instance]:
    """One instance per external id (a source that lists one twice: the first listing)."""
    seen: dict[str, Instance] = {}
    for instance in instances:
        seen.setdefault(instance.external_id, instance)
    return list(seen.values())


def _about(action: Action, name: str, instance: Instance, reason: str, **more: Any) -> Step:
    """A step about ``instance``, carrying its id, type and capacity."""
    return Step(
        action,
        name,
        instance.external_id,
        reason,
        instance_type=instance.instance_type,
        capacity=instance.capacity,
        seen=True,
        **more,
    )


def _step(
    source: DiscoveryConfig,
    instance: Instance,
    row: Known | None,
    by_name: Mapping[str, Known],
    claimed: dict[str, str],
    current: Mapping[int, Mapping[str, Any]],
    providers: Mapping[str, str] | None,
    known_wanted: TargetConfig | ValueError | None = None,
) -> Step | None:
    ours = row is not None and row.source == "discovery" and row.discovered_by == source.name
    if row is not None and not ours:
        owner = f"source {row.discovered_by}" if row.source == "discovery" else row.source
        if not row.retired:
            reason = f"one target: registered by {owner}"
            return _about("kept", row.name, instance, reason, row_id=row.id)
        if _ended_by_its_cloud(row):  # a node that lingers in its cluster after the instance
            reason = f"one target: {owner} saw its life end ({row.ended_by})"
            return _about("kept", row.name, instance, reason)
        row = None  # another owner's old life, or one it lost sight of: this one is new to us
    row_id = row.id if row is not None else None
    if instance.state == "ended":
        if row is None or row.retired:
            return None  # an end we already know, or never registered: nothing to say
        ended_by = instance.ended_by or "unknown"
        return _about("retired", row.name, instance, ended_by, row_id=row_id,
                      ended_by=ended_by, ended_at=instance.ended_at,
                      end_detail=instance.end_detail)  # fmt: skip
    if instance.state == "other":
        if row is None or row.retired:
            return None  # pending: registered once it runs
        return _about("kept", row.name, instance, "not running yet, or stopping", row_id=row_id)
    try:
        if isinstance(known_wanted, ValueError):
            raise known_wanted
        wanted = known_wanted or desired_target(source, instance)
    except (TemplateError, ValueError) as exc:
        name = row.name if row is not None else instance.name
        return _about("refused", name, instance, str(exc), row_id=row_id)
    holder = by_name.get(wanted.name)
    taken = _taken(wanted.name, holder) if holder is not None and holder is not row else None
    if taken is None and claimed.get(wanted.name, instance.external_id) != instance.external_id:
        taken = (
            f"name {wanted.name!r} is taken by instance {claimed[wanted.name]} in this sweep "
            "(give the template a name with {instance_id} or {external_id} in it)"
        )
    if taken is not None:
        return _about("refused", wanted.name, instance, taken, row_id=row_id, gpus=wanted.gpus)
    claimed[wanted.name] = instance.external_id
    common: dict[str, Any] = {"config": wanted, "gpus": wanted.gpus, "seen_running": True}
    if row is None:
        return _about("added", wanted.name, instance, "new instance", **common)
    if row.retired:
        return _about("updated", wanted.name, instance, "running again", row_id=row_id, **common)
    changed = _changes(current.get(row.id), target_values(wanted, providers))
    if changed or row.name != wanted.name:
        reason = "changed: " + ", ".join(changed or ["name"])
        return _about("updated", wanted.name, instance, reason, row_id=row_id, **common)
    return _about("kept", wanted.name, instance, "unchanged", row_id=row_id, **common)


def _ended_by_its_cloud(row: Known) -> bool:
    """Whether a retired row's own source said how the instance's life ended: the id is then
    spent, and another source still listing it running does not start a second life."""
    return row.source == "discovery" and row.ended_by in ("user", "preempted", "provider")


def _taken(name: str, holder: Known) -> str:
    if holder.source == "discovery":
        who = f"instance {holder.external_id} of source {holder.discovered_by}"
    else:
        who = f"a {holder.source} target"
    return f"name {name!r} is taken by {who}"


def _changes(now: Mapping[str, Any] | None, wanted: Mapping[str, Any]) -> list[str]:
    """The columns that differ between the target row as it is and as the template wants it."""
    if now is None:
        return ["everything"]
    return sorted(key for key, value in wanted.items() if now.get(key) != value)
