"""The data model (docs/DESIGN.md). Every timestamp is aware UTC (``UTCDateTime``).

Providers have feeds, components and incidents (with updates); targets have probe results,
rollups, states per vantage, outage intervals and heartbeats; alerts have deliveries (the
outbox). Retiring a target sets ``retired_at`` and keeps its history.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import (
    BigInteger,
    Boolean,
    CheckConstraint,
    Float,
    ForeignKey,
    Index,
    Integer,
    LargeBinary,
    Numeric,
    String,
    Text,
    UniqueConstraint,
    text,
)
from sqlalchemy.orm import Mapped, mapped_column, relationship

from monitor.db.base import Base, BigId, CreatedMixin, IdMixin, utcnow

PRICE_DECIMALS = 4  # targets.hourly_price keeps this many decimals

# --------------------------------------------------------------------------- providers and feeds


class Provider(IdMixin, CreatedMixin, Base):
    """A cloud the team rents from; built in (the catalog) or from the config."""

    __tablename__ = "providers"

    slug: Mapped[str] = mapped_column(String(64), unique=True)
    name: Mapped[str] = mapped_column(String(200))
    regions: Mapped[list[str]] = mapped_column(default=list)
    components: Mapped[list[str]] = mapped_column(default=list)
    sla_policy: Mapped[str | None] = mapped_column(String(100))
    source: Mapped[str] = mapped_column(String(16), default="catalog")

    feeds: Mapped[list[Feed]] = relationship(back_populates="provider", lazy="raise")


class Feed(IdMixin, CreatedMixin, Base):
    """One status feed URL and what we know about polling it."""

    __tablename__ = "feeds"
    __table_args__ = (UniqueConstraint("provider_id", "url"),)

    provider_id: Mapped[int] = mapped_column(ForeignKey("providers.id", ondelete="CASCADE"))
    kind: Mapped[str] = mapped_column(String(32))
    url: Mapped[str] = mapped_column(String(2000))
    enabled: Mapped[bool] = mapped_column(Boolean, default=True)
    etag: Mapped[str | None] = mapped_column(String(500))
    last_modified: Mapped[str | None] = mapped_column(String(100))
    content_hash: Mapped[str | None] = mapped_column(String(64))
    last_polled_at: Mapped[datetime | None]
    last_success_at: Mapped[datetime | None]
    last_changed_at: Mapped[datetime | None]
    consecutive_failures: Mapped[int] = mapped_column(Integer, default=0)
    total_failures: Mapped[int] = mapped_column(Integer, default=0)
    last_error: Mapped[str | None] = mapped_column(Text)

    provider: Mapped[Provider] = relationship(back_populates="feeds", lazy="raise")


class Component(IdMixin, Base):
    """A provider's component as its status page names it, with the last status seen."""

    __tablename__ = "components"
    __table_args__ = (UniqueConstraint("provider_id", "name"),)

    provider_id: Mapped[int] = mapped_column(ForeignKey("providers.id", ondelete="CASCADE"))
    name: Mapped[str] = mapped_column(String(300))
    status: Mapped[str | None] = mapped_column(String(50))
    updated_at: Mapped[datetime] = mapped_column(default=utcnow, onupdate=utcnow)


class Incident(IdMixin, Base):
    """A provider incident or maintenance, unique per provider + the feed's source id."""

    __tablename__ = "incidents"
    __table_args__ = (
        UniqueConstraint("provider_id", "source_id"),
        Index("ix_incidents_provider_started", "provider_id", "started_at"),
    )

    provider_id: Mapped[int] = mapped_column(ForeignKey("providers.id", ondelete="CASCADE"))
    feed_id: Mapped[int | None] = mapped_column(ForeignKey("feeds.id", ondelete="SET NULL"))
    source_id: Mapped[str] = mapped_column(String(300))
    title: Mapped[str] = mapped_column(Text)
    status: Mapped[str] = mapped_column(String(20))
    impact: Mapped[str] = mapped_column(String(20))
    is_maintenance: Mapped[bool] = mapped_column(Boolean, default=False)
    started_at: Mapped[datetime | None]
    acknowledged_at: Mapped[datetime | None]
    identified_at: Mapped[datetime | None]
    resolved_at: Mapped[datetime | None]
    first_seen_at: Mapped[datetime] = mapped_column(default=utcnow)
    last_seen_at: Mapped[datetime] = mapped_column(default=utcnow)
    url: Mapped[str | None] = mapped_column(String(2000))
    components: Mapped[list[str]] = mapped_column(default=list)
    regions: Mapped[list[str]] = mapped_column(default=list)
    relevant: Mapped[bool] = mapped_column(Boolean, default=False)
    content_hash: Mapped[str] = mapped_column(String(64))

    updates: Mapped[list[IncidentUpdate]] = relationship(
        back_populates="incident", lazy="raise", order_by="IncidentUpdate.at"
    )


class IncidentUpdate(IdMixin, Base):
    """One public update on an incident; appended once (unique on its content)."""

    __tablename__ = "incident_updates"
    __table_args__ = (UniqueConstraint("incident_id", "at", "status", "body_hash"),)

    incident_id: Mapped[int] = mapped_column(ForeignKey("incidents.id", ondelete="CASCADE"))
    at: Mapped[datetime]
    status: Mapped[str] = mapped_column(String(20))
    body: Mapped[str] = mapped_column(Text)
    body_hash: Mapped[str] = mapped_column(String(64))

    incident: Mapped[Incident] = relationship(back_populates="updates", lazy="raise")


# --------------------------------------------------------------------------- targets and probes


class Target(IdMixin, CreatedMixin, Base):
    """A probed GPU instance or a heartbeat-pushing job; retired targets keep their history."""

    __tablename__ = "targets"

    name: Mapped[str] = mapped_column(String(200), unique=True)
    kind: Mapped[str] = mapped_column(String(16))
    url: Mapped[str | None] = mapped_column(String(2000))
    provider: Mapped[str | None] = mapped_column(String(64), index=True)
    region: Mapped[str | None] = mapped_column(String(64))
    zone: Mapped[str | None] = mapped_column(String(64))
    pool: Mapped[str | None] = mapped_column(String(200), index=True)
    instance_type: Mapped[str | None] = mapped_column(String(100))
    gpus: Mapped[int] = mapped_column(Integer, default=0)
    hourly_price: Mapped[float] = mapped_column(
        Numeric(12, PRICE_DECIMALS, asdecimal=False), default=0
    )
    sla_policy: Mapped[str | None] = mapped_column(String(100))
    interval_s: Mapped[float] = mapped_column(Float, default=30.0)
    timeout_s: Mapped[float] = mapped_column(Float, default=5.0)
    confirmations: Mapped[int] = mapped_column(Integer, default=2)
    recovery_confirmations: Mapped[int | None] = mapped_column(Integer)  # None: confirmations
    settings: Mapped[dict[str, Any]] = mapped_column(default=dict)
    labels: Mapped[dict[str, Any]] = mapped_column(default=dict)
    source: Mapped[str] = mapped_column(String(16), default="config")  # config | api | discovery
    heartbeat_token_hash: Mapped[str | None] = mapped_column(String(128))
    retired_at: Mapped[datetime | None]
    next_probe_at: Mapped[datetime | None] = mapped_column(index=True)
    # the cloud's own id (instance id, providerID): discovery matches on it, account events join
    external_id: Mapped[str | None] = mapped_column(String(300), index=True)
    capacity: Mapped[str] = mapped_column(String(16), default="unknown")  # on-demand | spot | …
    discovered_by: Mapped[str | None] = mapped_column(String(100), index=True)  # the source
    last_seen_at: Mapped[datetime | None]  # the last successful sweep that saw it running
    missing_sweeps: Mapped[int] = mapped_column(Integer, default=0)
    # how its life ended (with retired_at): user | preempted | provider | unknown, and the
    # cloud's own words; an end is an event of the target's history, never an outage
    ended_by: Mapped[str | None] = mapped_column(String(16))
    end_detail: Mapped[str | None] = mapped_column(String(500))


class DiscoverySource(CreatedMixin, Base):
    """What slamon knows about sweeping one configured discovery source."""

    __tablename__ = "discovery_sources"

    name: Mapped[str] = mapped_column(String(100), primary_key=True)
    kind: Mapped[str] = mapped_column(String(32))
    last_swept_at: Mapped[datetime | None]
    last_success_at: Mapped[datetime | None]
    consecutive_failures: Mapped[int] = mapped_column(Integer, default=0)
    last_error: Mapped[str | None] = mapped_column(Text)
    instances: Mapped[int] = mapped_column(Integer, default=0)  # seen by the last good sweep


class AccountEventRecord(IdMixin, Base):
    """What a provider told the account about its own doing (``monitor.account.model``), once
    per provider key however often it was polled or pushed: its latest reading wins, and a
    reading older than the stored one (an out-of-order delivery) changes nothing.

    ``entities`` are the ids it names (instance ids, resource ids): it is scoped to the targets
    whose ``external_id`` is among them, and to ``target`` (the target an agent or the API
    reported it for); an event naming neither is scoped to its provider's targets in ``region``.
    ``via`` is how the latest reading came (poll | push | agent); ``readings`` counts them all.
    ``accepted`` marks maintenance the user scheduled or accepted (an acknowledged Scheduled
    Event): an SLA policy that excludes maintenance excludes it too.
    """

    __tablename__ = "account_events"
    __table_args__ = (
        UniqueConstraint("provider", "key"),
        Index("ix_account_events_window", "starts_at", "ends_at"),
    )

    provider: Mapped[str] = mapped_column(String(16))
    source: Mapped[str] = mapped_column(String(100))
    key: Mapped[str] = mapped_column(String(500))
    kind: Mapped[str] = mapped_column(String(32))
    status: Mapped[str] = mapped_column(String(16))
    starts_at: Mapped[datetime | None]
    ends_at: Mapped[datetime | None]
    updated_at: Mapped[datetime | None]  # the provider's own last-update time
    region: Mapped[str | None] = mapped_column(String(500))  # one or several, comma-separated
    service: Mapped[str | None] = mapped_column(String(100))
    title: Mapped[str] = mapped_column(String(500), default="")
    detail: Mapped[str] = mapped_column(Text, default="")
    entities: Mapped[list[str]] = mapped_column(default=list)
    target: Mapped[str | None] = mapped_column(String(200))
    raw_type: Mapped[str] = mapped_column(String(200), default="")
    via: Mapped[str] = mapped_column(String(16), default="poll")
    readings: Mapped[int] = mapped_column(Integer, default=1)
    accepted: Mapped[bool] = mapped_column(Boolean, default=False)
    first_seen_at: Mapped[datetime] = mapped_column(default=utcnow)
    last_seen_at: Mapped[datetime] = mapped_column(default=utcnow)


class AccountSource(CreatedMixin, Base):
    """What slamon knows about polling one configured account event source: its checkpoint
    (the latest provider update time a clean poll read) advances only after a clean poll."""

    __tablename__ = "account_sources"

    name: Mapped[str] = mapped_column(String(100), primary_key=True)
    kind: Mapped[str] = mapped_column(String(32))
    checkpoint: Mapped[datetime | None]
    last_polled_at: Mapped[datetime | None]
    last_success_at: Mapped[datetime | None]
    consecutive_failures: Mapped[int] = mapped_column(Integer, default=0)
    last_error: Mapped[str | None] = mapped_column(Text)
    events: Mapped[int] = mapped_column(Integer, default=0)  # read by the last clean poll


class TargetState(Base):
    """The state machine's memory for one target, one series, as seen from one vantage
    (vantage ``*`` holds the quorum's verdict)."""

    __tablename__ = "target_states"

    target_id: Mapped[int] = mapped_column(
        ForeignKey("targets.id", ondelete="CASCADE"), primary_key=True
    )
    vantage: Mapped[str] = mapped_column(String(100), primary_key=True)
    series: Mapped[str] = mapped_column(String(16), primary_key=True)  # reachable | usable
    state: Mapped[str] = mapped_column(String(16), default="unknown")
    since: Mapped[datetime] = mapped_column(default=utcnow)
    consecutive_failures: Mapped[int] = mapped_column(Integer, default=0)
    consecutive_successes: Mapped[int] = mapped_column(Integer, default=0)
    first_failure_at: Mapped[datetime | None]
    first_success_at: Mapped[datetime | None]
    last_probe_at: Mapped[datetime | None]
    detail: Mapped[dict[str, Any]] = mapped_column(default=dict)


class ProbeColumns:
    """What a stored probe says, raw (``probe_results``) or kept whole (``probe_evidence``)."""

    id: Mapped[int] = mapped_column(BigId, primary_key=True)
    target_id: Mapped[int] = mapped_column(ForeignKey("targets.id", ondelete="CASCADE"))
    vantage: Mapped[str] = mapped_column(String(100))
    at: Mapped[datetime]
    ok: Mapped[bool | None] = mapped_column(Boolean)  # None: unknown (our own canary failed)
    usable: Mapped[bool | None] = mapped_column(Boolean)
    latency_ms: Mapped[float | None] = mapped_column(Float)
    status_code: Mapped[int | None] = mapped_column(Integer)
    error_kind: Mapped[str | None] = mapped_column(String(32))
    error: Mapped[str | None] = mapped_column(Text)
    detail: Mapped[dict[str, Any] | None] = mapped_column()


class ProbeResult(ProbeColumns, Base):
    """One raw probe, for the minutes until its minute's rollup is final.

    The recorder marks each row: ``routine`` (a success that repeats the one before at its
    vantage: both series up and confirmed, no error) or not (a failure, an unknown, a first
    success or a recovery: kept whole). Once its minute is final (the rollup will not recompute
    it) ``monitor.probes.rollup.compact_raw`` copies the rows kept whole into
    ``probe_evidence`` and deletes every row: the minute's rollup row holds the routine ones
    (count and latency digest). So the table holds minutes of probes; its index pages empty
    whole and are reused (a kept row left among deleted ones would pin its pages: migration
    0015). ``routine`` is NULL on rows recorded before 0015: compaction leaves them to age out
    at the raw retention."""

    __tablename__ = "probe_results"
    __table_args__ = (
        Index("ix_probe_results_target_at", "target_id", "at"),
        Index("ix_probe_results_at", "at"),
        # what compaction takes, oldest first, and nothing recorded before 0015
        Index(
            "ix_probe_results_marked_at",
            "at",
            sqlite_where=text("routine IS NOT NULL"),
            postgresql_where=text("routine IS NOT NULL"),
        ),
    )

    routine: Mapped[bool | None] = mapped_column(Boolean)


class ProbeEvidence(ProbeColumns, Base):
    """A probe kept whole for ``raw_retention``: every failure, unknown, first success and
    recovery, moved here from ``probe_results`` once its minute's rollup is final (the
    evidence a credit claim cites; routine successes live on only in their minute's rollup).
    Appended in time order and pruned oldest first."""

    __tablename__ = "probe_evidence"
    __table_args__ = (
        Index("ix_probe_evidence_target_at", "target_id", "at"),
        Index("ix_probe_evidence_at", "at"),
    )


class ProbeRollup(Base):
    """Per-minute and per-hour aggregates of probe results: minute rows are pruned after
    ``probes.minute_retention`` (14 days by default, as raw rows), hour rows kept for ever.
    A minute row is also the compact record of its routine probes (``ProbeResult.routine``).
    On SQLite the table is its primary key's B-tree (``WITHOUT ROWID``, migration 0015): no
    rowid, and no second copy of the key in an index of its own, a quarter of each row."""

    __tablename__ = "probe_rollups"
    __table_args__ = (
        # what the fleet dashboards aggregate, readable from the index alone (migration 0006)
        Index(
            "ix_probe_rollups_resolution_bucket",
            "resolution",
            "bucket_start",
            postgresql_include=["target_id", "count", "failures", "unknown", "latency_p95_ms"],
        ),
        {"sqlite_with_rowid": False},
    )

    target_id: Mapped[int] = mapped_column(
        ForeignKey("targets.id", ondelete="CASCADE"), primary_key=True
    )
    resolution: Mapped[str] = mapped_column(String(8), primary_key=True)  # minute | hour
    bucket_start: Mapped[datetime] = mapped_column(primary_key=True)
    count: Mapped[int] = mapped_column(Integer)
    failures: Mapped[int] = mapped_column(Integer)
    unknown: Mapped[int] = mapped_column(Integer, default=0)
    latency_p50_ms: Mapped[float | None] = mapped_column(Float)
    latency_p95_ms: Mapped[float | None] = mapped_column(Float)
    latency_max_ms: Mapped[float | None] = mapped_column(Float)


class Outage(IdMixin, Base):
    """A confirmed down (or unusable) interval; ``end`` is null while it is open."""

    __tablename__ = "outages"
    __table_args__ = (
        UniqueConstraint("target_id", "series", "start"),
        CheckConstraint("series IN ('reachable', 'usable')", name="series"),
        Index("ix_outages_target_start", "target_id", "start"),
    )

    target_id: Mapped[int] = mapped_column(ForeignKey("targets.id", ondelete="CASCADE"))
    series: Mapped[str] = mapped_column(String(16), default="reachable")
    start: Mapped[datetime]
    end: Mapped[datetime | None]
    confirmed_at: Mapped[datetime | None]
    cause: Mapped[str | None] = mapped_column(String(32))
    source: Mapped[str] = mapped_column(String(16), default="probe")
    detail: Mapped[dict[str, Any]] = mapped_column(default=dict)


class ObservedWindow(IdMixin, Base):
    """A span during which a target counts as observed (imports; the monitor's own uptime is
    in ``monitor_ticks``). Time outside every window is unknown, never up."""

    __tablename__ = "observed_windows"
    __table_args__ = (UniqueConstraint("target_id", "start", "end"),)

    target_id: Mapped[int] = mapped_column(ForeignKey("targets.id", ondelete="CASCADE"))
    start: Mapped[datetime]
    end: Mapped[datetime]
    source: Mapped[str] = mapped_column(String(16), default="import")


class Heartbeat(IdMixin, Base):
    """A training job's push: it is alive, and how far it got."""

    __tablename__ = "heartbeats"
    __table_args__ = (Index("ix_heartbeats_target_at", "target_id", "at"),)

    target_id: Mapped[int] = mapped_column(ForeignKey("targets.id", ondelete="CASCADE"))
    at: Mapped[datetime] = mapped_column(default=utcnow)
    step: Mapped[int | None] = mapped_column(BigInteger)
    throughput: Mapped[float | None] = mapped_column(Float)
    payload: Mapped[dict[str, Any] | None] = mapped_column()


class MonitorTick(IdMixin, Base):
    """slamon's own liveness: one row per vantage per tick bucket. Gaps are unknown time."""

    __tablename__ = "monitor_ticks"
    __table_args__ = (UniqueConstraint("vantage", "bucket_start"),)

    vantage: Mapped[str] = mapped_column(String(100))
    bucket_start: Mapped[datetime]
    bucket_seconds: Mapped[int] = mapped_column(Integer)
    recorded_at: Mapped[datetime] = mapped_column(default=utcnow)


# --------------------------------------------------------------------------- SLA and reports


class MaintenanceWindow(IdMixin, Base):
    """Planned downtime excluded from SLA math; from config, the API or a provider feed."""

    __tablename__ = "maintenance_windows"
    __table_args__ = (UniqueConstraint("source", "name", "starts_at"),)

    name: Mapped[str] = mapped_column(String(300))
    starts_at: Mapped[datetime]
    ends_at: Mapped[datetime]
    provider: Mapped[str | None] = mapped_column(String(64))
    region: Mapped[str | None] = mapped_column(String(64))
    pool: Mapped[str | None] = mapped_column(String(200))
    targets: Mapped[list[str]] = mapped_column(default=list)
    source: Mapped[str] = mapped_column(String(16), default="config")
    incident_id: Mapped[int | None] = mapped_column(ForeignKey("incidents.id", ondelete="SET NULL"))


class SlaPolicy(IdMixin, CreatedMixin, Base):
    """An SLA policy as data (built in or from config), with a hash of its definition."""

    __tablename__ = "sla_policies"

    name: Mapped[str] = mapped_column(String(100), unique=True)
    definition: Mapped[dict[str, Any]] = mapped_column()
    definition_hash: Mapped[str] = mapped_column(String(64))
    source: Mapped[str] = mapped_column(String(16), default="builtin")


class Report(IdMixin, Base):
    """A rendered monthly report and the accounting policy hash that reproduces it."""

    __tablename__ = "reports"
    __table_args__ = (UniqueConstraint("month", "format", "policy_hash"),)

    month: Mapped[str] = mapped_column(String(7))
    format: Mapped[str] = mapped_column(String(8))
    generated_at: Mapped[datetime] = mapped_column(default=utcnow)
    policy_hash: Mapped[str] = mapped_column(String(64))
    content: Mapped[bytes] = mapped_column(LargeBinary)
    summary: Mapped[dict[str, Any]] = mapped_column(default=dict)


class CreditClaim(IdMixin, Base):
    """A service credit owed for a provider and month, and whether the team has claimed it."""

    __tablename__ = "credit_claims"
    __table_args__ = (UniqueConstraint("provider", "month", "scope"),)

    provider: Mapped[str] = mapped_column(String(64))
    month: Mapped[str] = mapped_column(String(7))
    scope: Mapped[str] = mapped_column(String(300))
    credit_pct: Mapped[float] = mapped_column(Float)
    deadline: Mapped[datetime]
    claimed_at: Mapped[datetime | None]
    reminded_at: Mapped[datetime | None]


# --------------------------------------------------------------------------- alerts and delivery


class Alert(IdMixin, Base):
    """One alert, deduplicated by fingerprint; it fires, may re-notify, and resolves."""

    __tablename__ = "alerts"
    __table_args__ = (UniqueConstraint("fingerprint"),)

    fingerprint: Mapped[str] = mapped_column(String(64))
    rule: Mapped[str] = mapped_column(String(32))
    severity: Mapped[str] = mapped_column(String(16))
    labels: Mapped[dict[str, Any]] = mapped_column(default=dict)
    summary: Mapped[str] = mapped_column(Text, default="")
    state: Mapped[str] = mapped_column(String(16), default="firing")
    started_at: Mapped[datetime]
    resolved_at: Mapped[datetime | None]
    last_notified_at: Mapped[datetime | None]
    group_key: Mapped[str | None] = mapped_column(String(200))
    suppressed: Mapped[bool] = mapped_column(Boolean, default=False)


class Channel(IdMixin, CreatedMixin, Base):
    """A notification channel by name and kind; its URL and secret stay in the config/env.

    A channel whose receiver said it is dead (a revoked token, a deleted webhook) is disabled:
    ``enabled`` False, since ``disabled_at``, with that answer as ``last_error`` (redacted: never
    a secret). ``config_digest`` is a salted, slow hash of the kind, URL and secret it was
    disabled with, so a change to its config can be seen and re-enable it without keeping them.
    """

    __tablename__ = "channels"

    name: Mapped[str] = mapped_column(String(100), unique=True)
    kind: Mapped[str] = mapped_column(String(16))
    enabled: Mapped[bool] = mapped_column(Boolean, default=True)
    disabled_at: Mapped[datetime | None]
    last_error: Mapped[str | None] = mapped_column(Text)
    config_digest: Mapped[str | None] = mapped_column(String(200))


class Delivery(IdMixin, CreatedMixin, Base):
    """The outbox: one notification to one channel, committed with the alert's state change."""

    __tablename__ = "deliveries"
    __table_args__ = (
        UniqueConstraint("idempotency_key"),
        Index("ix_deliveries_status_next", "status", "next_attempt_at"),
    )

    alert_id: Mapped[int] = mapped_column(ForeignKey("alerts.id", ondelete="CASCADE"))
    channel_id: Mapped[int] = mapped_column(ForeignKey("channels.id", ondelete="CASCADE"))
    event: Mapped[str] = mapped_column(String(16))
    idempotency_key: Mapped[str] = mapped_column(String(100))
    payload: Mapped[dict[str, Any]] = mapped_column()
    status: Mapped[str] = mapped_column(String(16), default="pending")
    attempts: Mapped[int] = mapped_column(Integer, default=0)
    next_attempt_at: Mapped[datetime] = mapped_column(default=utcnow)
    lease_until: Mapped[datetime | None]
    leased_by: Mapped[str | None] = mapped_column(String(200))
    last_status_code: Mapped[int | None] = mapped_column(Integer)
    last_error: Mapped[str | None] = mapped_column(Text)
    delivered_at: Mapped[datetime | None]


class Silence(IdMixin, CreatedMixin, Base):
    """Mutes alerts whose labels match, between two times."""

    __tablename__ = "silences"

    matchers: Mapped[dict[str, Any]] = mapped_column()
    starts_at: Mapped[datetime]
    ends_at: Mapped[datetime]
    comment: Mapped[str] = mapped_column(Text, default="")
    created_by: Mapped[str | None] = mapped_column(String(200))
    source: Mapped[str] = mapped_column(String(16), default="api")


class Notice(IdMixin, CreatedMixin, Base):
    """An operator's notice, or maintenance announced ahead (``kind``), shown on the status page
    and in the feed from ``starts_at`` until ``ends_at`` (open-ended without one) or until an
    operator ended it (``ended_at``; before ``starts_at`` it was called off). Scoped like a
    maintenance window (named targets, or a provider/region/pool), or to nothing: the whole
    deployment. Maintenance with a scope also holds the ``maintenance_windows`` row the SLA
    arithmetic subtracts (``monitor.notices``); ending the notice ends that window too."""

    __tablename__ = "notices"
    __table_args__ = (
        CheckConstraint("kind IN ('notice', 'maintenance')", name="kind"),
        Index("ix_notices_starts_at", "starts_at"),
    )

    title: Mapped[str] = mapped_column(String(200))
    body: Mapped[str] = mapped_column(Text, default="")
    kind: Mapped[str] = mapped_column(String(16), default="notice")
    severity: Mapped[str] = mapped_column(String(16), default="info")
    starts_at: Mapped[datetime]
    ends_at: Mapped[datetime | None]
    ended_at: Mapped[datetime | None]
    provider: Mapped[str | None] = mapped_column(String(64))
    region: Mapped[str | None] = mapped_column(String(64))
    pool: Mapped[str | None] = mapped_column(String(200))
    targets: Mapped[list[str]] = mapped_column(default=list)
    created_by: Mapped[str | None] = mapped_column(String(200))
    ended_by: Mapped[str | None] = mapped_column(String(200))
    maintenance_window_id: Mapped[int | None] = mapped_column(
        ForeignKey("maintenance_windows.id", ondelete="SET NULL")
    )


class ApiToken(IdMixin, CreatedMixin, Base):
    """An API token, stored only as a hash; scope ``read`` or ``admin``."""

    __tablename__ = "api_tokens"

    name: Mapped[str] = mapped_column(String(100), unique=True)
    token_hash: Mapped[str] = mapped_column(String(128), unique=True)
    scope: Mapped[str] = mapped_column(String(16))
    last_used_at: Mapped[datetime | None]
    revoked_at: Mapped[datetime | None]


# --------------------------------------------------------------------------- slamon's own work


class TaskStat(Base):
    """Running totals of each Celery task's runs and durations, written by the workers so that
    whichever process serves /metrics can report them (workers expose no HTTP of their own)."""

    __tablename__ = "task_stats"

    task: Mapped[str] = mapped_column(String(200), primary_key=True)
    runs: Mapped[int] = mapped_column(BigInteger, default=0)
    failures: Mapped[int] = mapped_column(BigInteger, default=0)
    seconds_total: Mapped[float] = mapped_column(Float, default=0.0)
    last_seconds: Mapped[float] = mapped_column(Float, default=0.0)
    last_finished_at: Mapped[datetime] = mapped_column(default=utcnow)


class Vantage(Base):
    """What the alert evaluator last concluded about one probing vantage: whether it agrees
    with the quorum, and since when it has not (a vantage that disagrees on nearly every
    target is blind — its own network — not the fleet)."""

    __tablename__ = "vantages"

    name: Mapped[str] = mapped_column(String(100), primary_key=True)
    last_probe_at: Mapped[datetime | None]
    targets: Mapped[int] = mapped_column(Integer, default=0)
    disagreeing: Mapped[int] = mapped_column(Integer, default=0)
    last_agreed_at: Mapped[datetime | None]
    disagreeing_since: Mapped[datetime | None]
    blind_since: Mapped[datetime | None]
    updated_at: Mapped[datetime] = mapped_column(default=utcnow)


class HistoryChange(Base):
    """One write to what happened (an outage, a target, a verdict, an incident, a window, an
    alert, a channel, a notice), logged by the database's own triggers (migration 0009, and
    0014 for notices) in the writing transaction: how a reader knows its cached figures may be
    stale. Pruned by the rollup."""

    __tablename__ = "history_changes"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    source: Mapped[str] = mapped_column(String(32))


class SchedulerLease(Base):
    """Who leads the schedulers: the one holder of the lease named ``name`` until
    ``expires_at``. ``token`` grows by one each time the lease changes hands: the fencing token
    every message the leader sends carries, which a worker checks here before running it, so a
    leader that lost the lease while paused dispatches nothing (``monitor.scheduler``)."""

    __tablename__ = "scheduler_leases"

    name: Mapped[str] = mapped_column(String(40), primary_key=True)
    holder: Mapped[str] = mapped_column(String(200))
    token: Mapped[int] = mapped_column(BigInteger)
    acquired_at: Mapped[datetime]
    renewed_at: Mapped[datetime]
    expires_at: Mapped[datetime]


class ScheduleSlot(Base):
    """One periodic task of the schedule: the last slot the leader sent and the last one a
    worker admitted. A slot is admitted once (a compare-and-set on ``done_slot``), and only
    with the current lease's token; refused messages are counted, not run."""

    __tablename__ = "schedule_slots"

    name: Mapped[str] = mapped_column(String(80), primary_key=True)
    task: Mapped[str] = mapped_column(String(200))
    period_s: Mapped[float | None] = mapped_column(Float)  # None: a calendar entry (monthly)
    sent_slot: Mapped[datetime | None]
    sent_at: Mapped[datetime | None]
    sent_token: Mapped[int | None] = mapped_column(BigInteger)
    done_slot: Mapped[datetime | None]
    done_at: Mapped[datetime | None]
    fenced: Mapped[int] = mapped_column(BigInteger, default=0)  # stale-token messages refused
    repeated: Mapped[int] = mapped_column(BigInteger, default=0)  # slots delivered again, refused


class WatchdogPing(Base):
    """The watchdog's last ping, as the leader that sent it recorded it (one row, ``name``
    "watchdog"): every API replica's /metrics reads it (``monitor.health``)."""

    __tablename__ = "watchdog_pings"

    name: Mapped[str] = mapped_column(String(40), primary_key=True)
    holder: Mapped[str] = mapped_column(String(200))  # the leader that sent it ("host:pid")
    attempted_at: Mapped[datetime]
    pinged_at: Mapped[datetime | None]  # the last ping the receiver took (a 2xx)
    error: Mapped[str | None] = mapped_column(Text)  # why the last attempt failed; None if not
