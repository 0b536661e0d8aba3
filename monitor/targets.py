"""Targets from the config and from the API share one shape (``TargetConfig``) and one way
into the database. Retiring keeps history; re-registering a retired name revives it."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

from sqlalchemy import func, or_, select
from sqlalchemy.orm import Session

from monitor.config.models import Config, TargetConfig, policy_providers, provider_of
from monitor.db.models import PRICE_DECIMALS, Target

PROBE_COLUMNS = frozenset({"kind", "url", "interval_s"})  # a change makes the target due now
_BUILTIN_PROVIDERS = policy_providers()


def target_values(cfg: TargetConfig, providers: Mapping[str, str] | None = None) -> dict[str, Any]:
    """Column values for a target row from its validated config. A target without a provider
    gets its SLA policy's (``providers``: policy name -> provider; the built-ins' by default)."""
    providers = _BUILTIN_PROVIDERS if providers is None else providers
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
        "provider": provider_of(cfg.provider, cfg.sla, providers),
        "region": cfg.region,
        "zone": cfg.zone,
        "pool": cfg.pool,
        "instance_type": cfg.instance_type,
        "gpus": cfg.gpus,
        "hourly_price": round(cfg.hourly_price, PRICE_DECIMALS),  # as stored
        "sla_policy": cfg.sla,
        "interval_s": cfg.interval,
        "timeout_s": cfg.timeout,
        "confirmations": cfg.confirmations,
        "recovery_confirmations": cfg.recovery_confirmations,
        "settings": {k: v for k, v in settings.items() if v is not None},
        "labels": dict(cfg.labels),
        "external_id": cfg.instance_id,
        "capacity": cfg.capacity,
    }


def upsert_target(
    session: Session, cfg: TargetConfig, source: str, providers: Mapping[str, str] | None = None
) -> Target:
    """Create or update the target named ``cfg.name``; a retired one comes back to life.
    ``providers`` names each SLA policy's provider (see :func:`target_values`)."""
    row = session.scalars(select(Target).where(Target.name == cfg.name)).one_or_none()
    if row is None:
        row = Target(name=cfg.name)
        session.add(row)
    _apply(row, cfg, source, providers)
    return row


def _apply(
    row: Target, cfg: TargetConfig, source: str, providers: Mapping[str, str] | None
) -> bool:
    """Bring ``row`` in line with ``cfg``, setting only what differs (an unchanged target costs
    no UPDATE); whether anything did."""
    wanted = target_values(cfg, providers) | {"source": source, "retired_at": None}
    changed = {k: v for k, v in wanted.items() if getattr(row, k, None) != v}
    if changed.keys() & PROBE_COLUMNS:
        changed["next_probe_at"] = None  # due now
    for key, value in changed.items():
        setattr(row, key, value)
    return bool(changed)


def retire_target(session: Session, row: Target, at: datetime) -> None:
    """Stop probing ``row``; its results, outages and heartbeats stay."""
    row.retired_at = at
    row.next_probe_at = None


def sync_config_targets(session: Session, config: Config, at: datetime) -> int:
    """Make the database's config-sourced targets match the config file; API targets stay.

    Runs every tick in every worker, so it reads the rows it may touch in one query and writes
    only what differs: with thousands of unchanged targets it is one SELECT, not thousands.
    Returns how many targets it created, changed or retired.
    """
    wanted = {t.name: t for t in config.targets}
    providers = policy_providers(config.sla_policies)  # the user's policies are known here
    _one_sync_at_a_time(session)
    mine = Target.source == "config"
    rows = {
        row.name: row
        for row in session.scalars(select(Target).where(or_(mine, Target.name.in_(wanted))))
    }
    touched = 0
    for cfg in config.targets:
        row = rows.get(cfg.name)
        if row is None:
            row = Target(name=cfg.name)
            session.add(row)
        touched += _apply(row, cfg, "config", providers)
    for name, row in rows.items():
        if row.source == "config" and row.retired_at is None and name not in wanted:
            retire_target(session, row, at)
            touched += 1
    return touched


SYNC_LOCK_KEY = 0x51A3_0001  # any constant: the advisory lock guarding config-target syncs


def _one_sync_at_a_time(session: Session) -> None:
    """Processes that start together (worker, beat, API) all sync the config targets: on
    PostgreSQL they take turns, or two would insert the same new target and one would fail on
    its unique name. SQLite's write transactions (BEGIN IMMEDIATE) already take turns."""
    if session.get_bind().dialect.name == "postgresql":
        session.execute(select(func.pg_advisory_xact_lock(SYNC_LOCK_KEY)))
