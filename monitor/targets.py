"""Targets from the config and from the API share one shape (``TargetConfig``) and one way
into the database. Retiring keeps history; re-registering a retired name revives it."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from monitor.config.models import Config, TargetConfig
from monitor.db.models import Target


def target_values(cfg: TargetConfig) -> dict[str, Any]:
    """Column values for a target row from its validated config."""
    settings = {
        "expect_status": cfg.expect_status,
        "expect_body": cfg.expect_body,
        "grace_s": cfg.grace,
        "stall_after_s": cfg.stall_after,
    }
    return {
        "name": cfg.name,
        "kind": cfg.kind,
        "url": cfg.url,
        "provider": cfg.provider,
        "region": cfg.region,
        "zone": cfg.zone,
        "pool": cfg.pool,
        "instance_type": cfg.instance_type,
        "gpus": cfg.gpus,
        "hourly_price": cfg.hourly_price,
        "sla_policy": cfg.sla,
        "interval_s": cfg.interval,
        "timeout_s": cfg.timeout,
        "confirmations": cfg.confirmations,
        "settings": {k: v for k, v in settings.items() if v is not None},
        "labels": dict(cfg.labels),
    }


def upsert_target(session: Session, cfg: TargetConfig, source: str) -> Target:
    """Create or update the target named ``cfg.name``; a retired one comes back to life."""
    row = session.scalars(select(Target).where(Target.name == cfg.name)).one_or_none()
    if row is None:
        row = Target(name=cfg.name)
        session.add(row)
    values = target_values(cfg)
    probe_changed = any(getattr(row, k, None) != values[k] for k in ("kind", "url", "interval_s"))
    for key, value in values.items():
        setattr(row, key, value)
    row.source, row.retired_at = source, None
    if probe_changed:
        row.next_probe_at = None  # due now
    return row


def retire_target(session: Session, row: Target, at: datetime) -> None:
    """Stop probing ``row``; its results, outages and heartbeats stay."""
    row.retired_at = at
    row.next_probe_at = None


def sync_config_targets(session: Session, config: Config, at: datetime) -> None:
    """Make the database's config-sourced targets match the config file; API targets stay."""
    wanted = {t.name for t in config.targets}
    _one_sync_at_a_time(session)
    for cfg in config.targets:
        upsert_target(session, cfg, "config")
    stale = select(Target).where(
        Target.source == "config", Target.retired_at.is_(None), Target.name.not_in(wanted)
    )
    for row in session.scalars(stale):
        retire_target(session, row, at)


SYNC_LOCK_KEY = 0x51A3_0001  # any constant: the advisory lock guarding config-target syncs


def _one_sync_at_a_time(session: Session) -> None:
    """Processes that start together (worker, beat, API) all sync the config targets: on
    PostgreSQL they take turns, or two would insert the same new target and one would fail on
    its unique name. SQLite's write transactions (BEGIN IMMEDIATE) already take turns."""
    if session.get_bind().dialect.name == "postgresql":
        session.execute(select(func.pg_advisory_xact_lock(SYNC_LOCK_KEY)))
