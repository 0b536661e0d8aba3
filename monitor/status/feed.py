"""What the Atom feed at ``/feed.atom`` tells, as frozen values: slamon's own record of the
provider incidents relevant to the team, the targets' outages, maintenance windows and the
operators' notices, newest change first, at most ``MAX_ENTRIES`` changed within ``HISTORY``.

Read through ``monitor.history`` and shaped here by pure functions; ``monitor.api.feed`` only
writes the XML. Each entry has a stable key (the feed's id for it never changes) and its
``updated`` moves when what it tells changes as of now: an outage when it ends, a notice when
it begins or ends. A moment still ahead is never an entry's ``updated``: maintenance from the
YAML (which says nothing of when it was announced) enters the feed when it begins, so
announcing maintenance ahead is a notice's job. A notice and the window it holds are told
once, as the notice. An outage that ended is told as ended, never as "up": what came after it
may be unknown.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy.orm import Session

from monitor.alerts.links import STATUS_PAGE, provider_path, target_path
from monitor.config import Config
from monitor.history import incidents, maintenance, spans
from monitor.history import notices as notice_history
from monitor.history.incidents import ProviderIncident
from monitor.history.notices import NoticeView
from monitor.history.spans import OutageRecord
from monitor.status.history import duration
from monitor.status.pages import http_only

MAX_ENTRIES = 50
HISTORY = timedelta(days=30)
SERIES_WORDS = {"reachable": "down", "usable": "not usable"}


@dataclass(frozen=True, slots=True)
class FeedEntry:
    key: str  # stable and unique: what the entry's id is made of
    kind: str  # incident | outage | maintenance | notice
    title: str
    summary: str
    published: datetime
    updated: datetime  # never after now
    path: str  # slamon's page for it, from slamon's root
    related: str | None = None  # the provider's own page for an incident (http(s) only)
    content: str = ""  # a notice's own words


def when(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%d %H:%M UTC")


def latest(moments: Iterable[datetime | None], now: datetime) -> datetime | None:
    """The latest of ``moments`` that has happened by ``now``."""
    past = [m for m in moments if m is not None and m <= now]
    return max(past) if past else None


def scope_path(targets: Sequence[str], provider: str | None) -> str:
    """The page a scoped announcement links to: its one target's, its provider's, or the
    status page."""
    if len(targets) == 1:
        return target_path(targets[0])
    if provider and not targets:
        return provider_path(provider)
    return STATUS_PAGE


def scope_words(
    targets: Sequence[str], provider: str | None, region: str | None, pool: str | None
) -> str:
    if targets:
        return ", ".join(targets)
    named = (("provider", provider), ("region", region), ("pool", pool))
    return ", ".join(f"{word} {value}" for word, value in named if value)


# --------------------------------------------------------------------------- one entry each


def incident_entry(incident: ProviderIncident, now: datetime) -> FeedEntry | None:
    times = (
        incident.first_seen_at,
        incident.started_at,
        incident.acknowledged_at,
        incident.identified_at,
        incident.resolved_at,
    )
    updated = latest(times, now)
    if updated is None:
        return None
    start = incident.started_at or incident.first_seen_at
    what = "maintenance" if incident.is_maintenance else f"{incident.impact} incident"
    if incident.resolved_at is not None and incident.resolved_at <= now:
        state = f"resolved {when(incident.resolved_at)}"
    else:
        state = f"open{f' ({incident.status})' if incident.status else ''}"
    regions = f" in {', '.join(incident.regions)}" if incident.regions else ""
    return FeedEntry(
        key=f"incident/{incident.provider}/{incident.source_id}",
        kind="incident",
        title=f"{incident.provider}: {incident.title}",
        summary=f"{incident.provider} {what}{regions}, since {when(start)}; {state}.",
        published=min(start, updated),
        updated=updated,
        path=provider_path(incident.provider),
        related=http_only(incident.url),
    )


def told_once(outages: Sequence[tuple[str, OutageRecord]]) -> list[tuple[str, OutageRecord]]:
    """``outages`` without a ``usable`` one inside a ``reachable`` one of the same target: a
    target that is down is not usable either, and one entry says it (a GPU still failing after
    the box came back is an outage of its own and stays)."""
    down: dict[str, list[OutageRecord]] = {}
    for name, outage in outages:
        if outage.series == "reachable":
            down.setdefault(name, []).append(outage)

    def inside(outage: OutageRecord, of: OutageRecord) -> bool:
        if outage.start < of.start:
            return False
        return of.end is None or (outage.end is not None and outage.end <= of.end)

    return [
        (name, outage)
        for name, outage in outages
        if outage.series != "usable" or not any(inside(outage, d) for d in down.get(name, ()))
    ]


def outage_entry(target: str, outage: OutageRecord, now: datetime) -> FeedEntry:
    word = SERIES_WORDS.get(outage.series, outage.series)
    cause = f" ({outage.cause})" if outage.cause else ""
    if outage.end is None or outage.end > now:
        title = f"{target} {word}"
        summary = f"{target} {word}{cause} since {when(outage.start)}; still open."
        updated = outage.start
    else:
        span = duration(outage.end - outage.start)
        title = f"{target} was {word} for {span}"
        summary = (
            f"{target} {word}{cause} from {when(outage.start)} to {when(outage.end)} ({span}); "
            "the outage has ended."
        )
        updated = outage.end
    return FeedEntry(
        key=f"outage/{target}/{outage.series}/{outage.start.isoformat()}",
        kind="outage",
        title=title,
        summary=summary,
        published=outage.start,
        updated=updated,
        path=target_path(target),
    )


def window_entry(
    name: str,
    start: datetime,
    end: datetime,
    scope: tuple[Sequence[str], str | None, str | None, str | None],
    source: str,
    now: datetime,
) -> FeedEntry | None:
    """A maintenance window (from the YAML, or stored), once it has begun."""
    updated = latest((start, end), now)
    if updated is None:
        return None
    targets, provider, region, pool = scope
    state = "under way" if now < end else "ended"
    covered = scope_words(targets, provider, region, pool) or "nothing named"
    return FeedEntry(
        key=f"maintenance/{source}/{name}/{start.isoformat()}",
        kind="maintenance",
        title=f"Maintenance: {name}",
        summary=f"Planned maintenance of {covered} from {when(start)} to {when(end)}; {state}.",
        published=start,
        updated=updated,
        path=scope_path(targets, provider),
    )


def notice_state(notice: NoticeView, now: datetime) -> str:
    """Where a notice stands at ``now``, in words."""
    phase = notice.phase(now)
    until = f" until {when(notice.ends_at)}" if notice.ends_at else ""
    if phase == "upcoming":
        return f"Upcoming: from {when(notice.starts_at)}{until}."
    if phase == "current":
        return f"Since {when(notice.starts_at)}{until}."
    if notice.called_off and notice.ended_at is not None:
        return f"Called off {when(notice.ended_at)} (it was to start {when(notice.starts_at)})."
    end = notice.end or notice.starts_at
    early = " (ended early)" if notice.ends_at is not None and end < notice.ends_at else ""
    return f"From {when(notice.starts_at)} to {when(end)}{early}; over."


def notice_entry(notice: NoticeView, now: datetime) -> FeedEntry:
    label = "Maintenance" if notice.kind == "maintenance" else "Notice"
    scope = scope_words(notice.targets, notice.provider, notice.region, notice.pool)
    about = f" About {scope}." if scope else ""
    sla = " Excluded from the SLA where the policy excludes maintenance." if notice.in_sla else ""
    return FeedEntry(
        key=f"notice/{notice.id}",
        kind="notice" if notice.kind == "notice" else "maintenance",
        title=f"{label}: {notice.title}",
        summary=f"{notice_state(notice, now)}{about}{sla}",
        published=notice.created_at,
        updated=notice.updated(now),
        path=scope_path(notice.targets, notice.provider),
        content=notice.body,
    )


# --------------------------------------------------------------------------- the feed


def newest(entries: Iterable[FeedEntry | None], now: datetime) -> tuple[FeedEntry, ...]:
    """The entries changed within ``HISTORY`` of ``now``, newest change first, at most
    ``MAX_ENTRIES`` (pure)."""
    kept = [e for e in entries if e is not None and e.updated > now - HISTORY]
    kept.sort(key=lambda e: (e.updated, e.key), reverse=True)
    return tuple(kept[:MAX_ENTRIES])


def feed_entries(session: Session, config: Config, now: datetime) -> tuple[FeedEntry, ...]:
    """What the feed tells as of ``now``: a bounded read of each kind, then ``newest``."""
    since = now - HISTORY
    found: list[FeedEntry | None] = []
    found += [incident_entry(i, now) for i in incidents.recent(session, since, MAX_ENTRIES)]
    outages = spans.recent_outages(session, since, now, MAX_ENTRIES)
    found += [outage_entry(name, o, now) for name, o in told_once(outages)]
    found += [
        window_entry(
            w.name, w.starts_at, w.ends_at, (w.targets, w.provider, w.region, w.pool), w.source, now
        )
        for w in maintenance.stored_apart_from_notices(session, since)
    ]
    found += [
        window_entry(
            w.name, w.start, w.end, (w.targets, w.provider, w.region, w.pool), "config", now
        )
        for w in config.maintenance
        if w.end > since
    ]
    found += [notice_entry(n, now) for n in notice_history.touched_since(session, since, now)]
    return newest(found, now)
