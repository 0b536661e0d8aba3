"""Vantages told apart from the fleet: a vantage that disagrees with the quorum on (nearly)
every target it probes is blind (its own network, DNS or firewall), not the fleet failing.

The quorum already keeps a blind vantage from opening outages; this module makes it visible.
``judge`` is pure: from each vantage's current states and the quorum's, how many targets it
disagrees on, and whether that has lasted long enough to call it blind. ``refresh`` runs it
inside the alert evaluator's transaction and keeps the verdict in ``vantages``;
``vantage_health`` reads it for the status page and the API.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy import select
from sqlalchemy.orm import Session

from monitor.db.models import Target, TargetState, Vantage
from monitor.probes.kinds import probed
from monitor.probes.model import PUSH_VANTAGE
from monitor.probes.quorum import QUORUM_VANTAGE
from monitor.probes.state import DOWN, UP

STALE_INTERVALS = 3  # a vantage's opinion older than this many target intervals is not current


@dataclass(frozen=True, slots=True)
class Opinion:
    """One vantage's current verdict on one target's reachability, beside the quorum's."""

    vantage: str
    target_id: int
    state: str
    quorum: str
    last_probe_at: datetime | None


@dataclass(frozen=True, slots=True)
class VantageHealth:
    """What the status page shows per vantage (``blind_since`` None: it sees what the quorum
    sees)."""

    vantage: str
    last_probe_at: datetime | None
    targets: int  # targets it holds a current opinion on, where the quorum has one too
    disagreeing: int
    last_agreed_at: datetime | None
    blind_since: datetime | None


@dataclass(frozen=True, slots=True)
class BlindRule:
    share: float = 0.9  # disagreeing on at least this share of its targets…
    after: timedelta = timedelta(minutes=3)  # …for this long: blind


def judge(
    opinions: Iterable[Opinion],
    previous: Mapping[str, VantageHealth],
    disagreeing_since: Mapping[str, datetime | None],
    now: datetime,
    rule: BlindRule,
) -> tuple[dict[str, VantageHealth], dict[str, datetime | None]]:
    """Each vantage's health now, and since when it has disagreed (None: it agrees).

    A vantage with no current opinion keeps its last agreement time and is not judged blind:
    silence is the liveness checks' business, not this rule's. With one vantage the quorum is
    that vantage, so it always agrees.
    """
    by_vantage: dict[str, list[Opinion]] = defaultdict(list)
    for opinion in opinions:
        by_vantage[opinion.vantage].append(opinion)
    health: dict[str, VantageHealth] = {}
    since: dict[str, datetime | None] = {}
    for vantage in sorted(set(by_vantage) | set(previous)):
        mine = [o for o in by_vantage.get(vantage, []) if o.quorum in (UP, DOWN)]
        before = previous.get(vantage)
        last_probe = max((o.last_probe_at for o in mine if o.last_probe_at), default=None)
        if (
            before is not None
            and before.last_probe_at
            and (last_probe is None or before.last_probe_at > last_probe)
        ):
            last_probe = before.last_probe_at
        disagreeing = sum(o.state != o.quorum for o in mine)
        suspect = bool(mine) and disagreeing >= rule.share * len(mine)
        started = (disagreeing_since.get(vantage) or now) if suspect else None
        agreed = now if mine and not suspect else (before.last_agreed_at if before else None)
        blind = started if started is not None and now - started >= rule.after else None
        health[vantage] = VantageHealth(vantage, last_probe, len(mine), disagreeing, agreed, blind)
        since[vantage] = started
    return health, since


def current_opinions(session: Session, now: datetime) -> list[Opinion]:
    """Every probing vantage's fresh reachability verdict on live targets, with the quorum's."""
    rows = session.execute(
        select(
            TargetState.target_id,
            TargetState.vantage,
            TargetState.state,
            TargetState.last_probe_at,
            Target.interval_s,
        )
        .join(Target, Target.id == TargetState.target_id)
        .where(TargetState.series == "reachable", Target.retired_at.is_(None))
        .where(Target.kind.in_(probed()))
    ).all()
    quorum = {r.target_id: r.state for r in rows if r.vantage == QUORUM_VANTAGE}
    return [
        Opinion(
            r.vantage, r.target_id, r.state, quorum.get(r.target_id, "unknown"), r.last_probe_at
        )
        for r in rows
        if r.vantage not in (QUORUM_VANTAGE, PUSH_VANTAGE)  # pushed: not a place that probes
        and r.last_probe_at is not None
        and now - r.last_probe_at <= timedelta(seconds=r.interval_s * STALE_INTERVALS + 5)
    ]


def refresh(session: Session, now: datetime, rule: BlindRule) -> list[VantageHealth]:
    """Judge every vantage now and store the verdicts (in the caller's transaction)."""
    stored = {v.name: v for v in session.scalars(select(Vantage))}
    previous = {name: _health(row) for name, row in stored.items()}
    since = {name: row.disagreeing_since for name, row in stored.items()}
    health, since_now = judge(current_opinions(session, now), previous, since, now, rule)
    for name, view in health.items():
        row = stored.get(name) or Vantage(name=name)
        row.last_probe_at, row.targets, row.disagreeing = (
            view.last_probe_at,
            view.targets,
            view.disagreeing,
        )
        row.last_agreed_at, row.blind_since = view.last_agreed_at, view.blind_since
        row.disagreeing_since, row.updated_at = since_now[name], now
        session.add(row)
    return list(health.values())


def vantage_health(session: Session, now: datetime | None = None) -> list[VantageHealth]:
    """The vantages as the alert evaluator last judged them, by name (``now`` is unused: the
    stored verdict is the one alerts were sent on, so every surface shows the same)."""
    return [_health(v) for v in session.scalars(select(Vantage).order_by(Vantage.name))]


def _health(row: Vantage) -> VantageHealth:
    return VantageHealth(
        row.name,
        row.last_probe_at,
        row.targets,
        row.disagreeing,
        row.last_agreed_at,
        row.blind_since,
    )
