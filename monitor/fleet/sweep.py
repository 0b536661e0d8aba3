"""One discovery source's sweep: list its instances, decide (``plan``), apply in bulk.

The source is listed outside any transaction (a cloud API may take seconds); a failure of the
listing is recorded on the source and retires nothing. The plan is applied in one transaction
with a fixed number of statements whatever the fleet's size: one read of the rows it may touch,
one of the rows it changes, batched inserts, and one UPDATE each for the instances seen running,
seen otherwise, and missing.

The end of a life is an event of the target's history, never an outage: when the cloud says an
instance was stopped by the user or reclaimed by the spot market, the probes' failures that
began after the last sweep saw it running are the end itself, so the life ends where they began
and their open outage is dropped; failures the cloud saw while it still called the instance
running are downtime up to the end. A provider-caused end closes its open outage at the end:
the target's SLA policy counts that downtime as it counts any.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from sqlalchemy import delete, func, insert, or_, select, update
from sqlalchemy.orm import Session, sessionmaker

from monitor.config.models import Config, DiscoveryConfig, TargetConfig, policy_providers
from monitor.db.base import utcnow
from monitor.db.dialect import among
from monitor.db.models import DiscoverySource, Outage, Target
from monitor.discovery.kind import SweepContext
from monitor.discovery.kinds import KINDS
from monitor.discovery.model import Instance
from monitor.errors import SweepFailed
from monitor.events import emitting, words
from monitor.fleet.plan import Known, Plan, Step, desired_target, plan_sweep
from monitor.probes.record import lock_recording
from monitor.targets import PROBE_COLUMNS, target_values

# the columns the plan compares (what the template decides), read for this source's rows
COMPARED = (
    "name", "kind", "url", "provider", "region", "zone", "pool", "instance_type", "gpus",
    "hourly_price", "sla_policy", "interval_s", "timeout_s", "confirmations",
    "recovery_confirmations", "settings", "labels", "external_id", "capacity",
)  # fmt: skip
ENDS_THAT_ARE_NOT_DOWNTIME = frozenset({"user", "preempted"})


@dataclass(frozen=True, slots=True)
class SweepOutcome:
    """What one sweep did: its steps (empty when it failed), or the one line why it failed."""

    source: str
    error: str | None = None
    steps: Sequence[Step] = field(default_factory=list)
    instances: int = 0

    @property
    def ok(self) -> bool:
        return self.error is None

    def counts(self) -> dict[str, int]:
        return Plan(list(self.steps)).counts()


def sweep(
    sessions: sessionmaker[Session],
    config: Config,
    source: DiscoveryConfig,
    now: datetime | None = None,
    *,
    dry_run: bool = False,
) -> SweepOutcome:
    """Sweep ``source`` now; with ``dry_run`` decide and report, but write nothing."""
    now = now or utcnow()
    try:
        instances = list_source(source, now)
    except SweepFailed as exc:
        if not dry_run:
            with sessions() as session, session.begin():
                _failed(session, source, now, str(exc))
        return SweepOutcome(source.name, error=str(exc))
    if dry_run:
        with sessions() as session:
            plan = decide(session, config, source, instances)
            session.rollback()
        return SweepOutcome(source.name, steps=plan.steps, instances=len(instances))
    with sessions() as session, session.begin():
        _one_sweep_at_a_time(session)
        plan = decide(session, config, source, instances)
        apply(session, config, source, plan, now)
        _succeeded(session, source, now, len(instances), plan)
    return SweepOutcome(source.name, steps=plan.steps, instances=len(instances))


def list_source(source: DiscoveryConfig, now: datetime) -> list[Instance]:
    """The source's instances, or ``SweepFailed`` with one line. A kind's unexpected exception
    is a failed sweep too (named, so it can be reported), never a crashed worker."""
    kind = KINDS[source.kind]
    context = SweepContext(source.name, now, source.timeout)
    try:
        return list(kind.list_instances(source.options, context))
    except SweepFailed:
        raise
    except Exception as exc:  # a kind's bug, or an SDK error it did not expect
        first = words.one_line(exc) or type(exc).__name__
        raise SweepFailed(f"{source.kind}: {type(exc).__name__}: {first}") from exc


def decide(
    session: Session, config: Config, source: DiscoveryConfig, instances: Sequence[Instance]
) -> Plan:
    """The plan for ``instances``, from one read of the rows it may touch."""
    desired: dict[str, TargetConfig | ValueError] = {}
    names = set()
    for instance in instances:
        if instance.state != "running" or instance.external_id in desired:
            continue
        try:
            wanted = desired[instance.external_id] = desired_target(source, instance)
            names.add(wanted.name)
        except ValueError as exc:
            desired[instance.external_id] = exc
    external_ids = {instance.external_id for instance in instances}
    columns = (Target.id, Target.name, Target.source, Target.discovered_by, Target.external_id,
               Target.retired_at, Target.missing_sweeps, Target.ended_by)  # fmt: skip
    compared = tuple(getattr(Target, c) for c in COMPARED)
    query = select(*columns, *compared).where(
        or_(
            Target.discovered_by == source.name,
            among(session, Target.external_id, external_ids),
            among(session, Target.name, names),
        )
    )
    known, current = [], {}
    for row in session.execute(query):
        known.append(
            Known(
                row.id,
                row.name,
                row.source,
                row.discovered_by,
                row.external_id,
                row.retired_at is not None,
                row.missing_sweeps,
                row.ended_by,
            )
        )
        if row.discovered_by == source.name:
            current[row.id] = {c: getattr(row, c) for c in COMPARED}
    providers = policy_providers(config.sla_policies)
    return plan_sweep(source, instances, known, current, providers, desired)


def apply(
    session: Session, config: Config, source: DiscoveryConfig, plan: Plan, now: datetime
) -> None:
    """Write ``plan`` in bulk: one batched insert, one batched update per kind of change, the
    ends with their outages, and the sweep's memory of each instance."""
    providers = policy_providers(config.sla_policies)
    added, updated = [], []
    for step in plan.steps:
        if step.config is None:
            continue
        values = target_values(step.config, providers)
        if step.action == "added":
            added.append({**values, **_discovered(source, now)})
        elif step.action == "updated" and step.row_id is not None:
            revived = {"source": "discovery", "retired_at": None, "ended_by": None,
                       "end_detail": None}  # fmt: skip
            updated.append({"id": step.row_id, **values, **revived})
    if added:  # one executemany, not an INSERT per instance (ORM bulk insert, no RETURNING)
        session.execute(insert(Target), added)
    if updated:  # ORM bulk UPDATE by primary key: one executemany per set of columns
        session.execute(update(Target), _due_now_where_probing_changed(session, updated))
    end_lives(session, [s for s in plan.steps if s.action == "retired"], now)
    running = [s.row_id for s in plan.steps if s.seen_running and s.row_id is not None]
    listed = [s.row_id for s in plan.steps if s.seen and not s.seen_running and s.row_id]
    missing = [s.row_id for s in plan.steps if not s.seen and s.action == "kept" and s.row_id]
    _remember(session, running, {"last_seen_at": now, "missing_sweeps": 0})
    _remember(session, listed, {"missing_sweeps": 0})
    _remember(session, missing, {"missing_sweeps": Target.missing_sweeps + 1})


def _due_now_where_probing_changed(
    session: Session, updated: list[dict[str, Any]]
) -> list[dict[str, Any]]:
    """A target whose kind, URL or interval changed is due now (as a config change makes it)."""
    probing = (Target.id, *(getattr(Target, c) for c in PROBE_COLUMNS))
    ids = [values["id"] for values in updated]
    before = {row[0]: row[1:] for row in session.execute(select(*probing).where(
        among(session, Target.id, ids)))}  # fmt: skip
    for values in updated:
        if before.get(values["id"]) != tuple(values[c] for c in PROBE_COLUMNS):
            values["next_probe_at"] = None
    return updated


def _discovered(source: DiscoveryConfig, now: datetime) -> dict[str, Any]:
    return {"source": "discovery", "discovered_by": source.name, "last_seen_at": now,
            "missing_sweeps": 0, "created_at": now}  # fmt: skip


def _remember(session: Session, ids: Iterable[int], values: Mapping[str, Any]) -> None:
    ids = list(ids)
    if ids:
        session.execute(update(Target).where(among(session, Target.id, ids)).values(**values))


def end_lives(session: Session, steps: Sequence[Step], now: datetime) -> None:
    """Retire each step's target as its cloud ended it (see the module's docstring for what
    happens to its open outages), in a fixed number of statements."""
    ids = [s.row_id for s in steps if s.row_id is not None]
    if not ids:
        return
    lock_recording(session, ids)  # a round recording them now commits first, or sees them end
    lives = {
        row.id: row
        for row in session.execute(
            select(Target.id, Target.created_at, Target.last_seen_at).where(
                among(session, Target.id, ids)
            )
        )
    }
    open_outages: dict[int, list[tuple[int, datetime]]] = {}
    query = select(Outage.target_id, Outage.id, Outage.start).where(
        among(session, Outage.target_id, ids), Outage.end.is_(None)
    )
    for target_id, outage_id, start in session.execute(query):
        open_outages.setdefault(target_id, []).append((outage_id, start))
    retired, closed, dropped = [], [], []
    for step in steps:
        life = lives.get(step.row_id or -1)
        if life is None:
            continue
        mine = open_outages.get(life.id, [])
        end = life_end(step, life.created_at, life.last_seen_at, [s for _, s in mine], now)
        for outage_id, start in mine:
            if start >= end:
                dropped.append(outage_id)  # the end of the life, not downtime
            else:
                closed.append({"id": outage_id, "end": end})
        retired.append({"id": life.id, "retired_at": end, "next_probe_at": None,
                        "ended_by": step.ended_by or "unknown",
                        "end_detail": (step.end_detail or step.reason)[:500] or None})  # fmt: skip
    if dropped:
        session.execute(delete(Outage).where(among(session, Outage.id, dropped)))
    if closed:
        session.execute(update(Outage), closed)
    session.execute(update(Target), retired)


def life_end(
    step: Step,
    created_at: datetime,
    last_seen_at: datetime | None,
    open_starts: Sequence[datetime],
    now: datetime,
) -> datetime:
    """When a life ended: when the cloud says (never after now), or, for an end by the user or
    the spot market, where the probes' failures began if they began after the last sweep that
    saw it running (they were the end itself); never before it was registered."""
    end = min(step.ended_at or now, now)
    if (step.ended_by or "unknown") in ENDS_THAT_ARE_NOT_DOWNTIME:
        confirmed_running = last_seen_at or created_at
        after = [start for start in open_starts if start >= confirmed_running]
        if after:
            end = min(end, *after)
    return max(end, created_at)


def _failed(session: Session, source: DiscoveryConfig, now: datetime, error: str) -> None:
    state = _state(session, source)
    if state.consecutive_failures == 0:
        emitting.after_commit(session, words.DISCOVERY_FAILING, f"{source.name}: {error}")
    state.last_swept_at = now
    state.consecutive_failures += 1
    state.last_error = error


def _succeeded(
    session: Session, source: DiscoveryConfig, now: datetime, instances: int, plan: Plan
) -> None:
    state = _state(session, source)
    if state.consecutive_failures:
        text = words.discovery_back_text(source.name, state.consecutive_failures)
        emitting.after_commit(session, words.DISCOVERY_BACK, text)
    counts = plan.counts()
    if any(n for action, n in counts.items() if action != "kept"):
        ends = [f"{s.target} {s.reason}" for s in plan.steps if s.action == "retired"]
        text = words.fleet_changed_text(source.name, counts, ends)
        emitting.after_commit(session, words.FLEET_CHANGED, text)
    state.last_swept_at = now
    state.last_success_at = now
    state.consecutive_failures = 0
    state.last_error = None
    state.instances = instances


def _state(session: Session, source: DiscoveryConfig) -> DiscoverySource:
    state = session.get(DiscoverySource, source.name, with_for_update=True)
    if state is None:
        state = DiscoverySource(name=source.name, kind=source.kind, consecutive_failures=0,
                                instances=0)  # fmt: skip
        session.add(state)
    state.kind = source.kind
    return state


SWEEP_LOCK_KEY = 0x51A3_0002  # any constant: the advisory lock guarding sweeps' writes


def _one_sweep_at_a_time(session: Session) -> None:
    """Two workers that sweep at once (a slow sweep overlapping the next) take turns on
    PostgreSQL, or both would insert one new instance; SQLite's writers take turns anyway."""
    if session.get_bind().dialect.name == "postgresql":
        session.execute(select(func.pg_advisory_xact_lock(SWEEP_LOCK_KEY)))


def due_sources(session: Session, config: Config, now: datetime) -> list[DiscoveryConfig]:
    """The sources whose ``every`` has passed since their last sweep (never swept: due)."""
    # .all(): a Result has keys(), so dict() would read it as a mapping of its columns
    rows = session.execute(select(DiscoverySource.name, DiscoverySource.last_swept_at)).all()
    last = dict(rows)
    due = []
    for source in config.discovery:
        swept = last.get(source.name)
        if swept is None or (now - swept).total_seconds() >= source.every - 0.5:
            due.append(source)
    return due
