"""The provider's own record in the report (pure): which account events are evidence for an
outage, and which downtime a target's SLA policy leaves out on that record.

Every account event about a target whose window overlaps an outage is that outage's evidence,
whatever its kind: a retirement explains an outage and is still counted. Two kinds are
exclusions where the policy says so: ``user_initiated`` (the user's own doing: a stop, a
restart, a resize) under ``exclude_user_initiated``, and a ``scheduled_maintenance`` the user
scheduled or accepted under ``exclude_maintenance``. Excluded time is the overlap of the
event's window with the outage, as intervals: a second inside two events' windows, or inside an
event's window and a configured maintenance window, is left out once.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import datetime
from typing import Literal

from monitor.reports.inputs import AccountEventInput
from monitor.reports.model import EvidenceRow, ExclusionRow
from monitor.sla.intervals import Span, intersect, merge, subtract
from monitor.sla.policy import SlaPolicy

Reason = Literal["user_initiated", "accepted_maintenance"]
REASONS: tuple[Reason, ...] = ("user_initiated", "accepted_maintenance")


def window(event: AccountEventInput, until: datetime) -> Span | None:
    """The event's window, an open one ending at ``until``; None when empty."""
    end = event.end or until
    return Span(event.start, end) if end > event.start else None


def overlaps(event: AccountEventInput, span: Span) -> bool:
    return event.start < span.end and (event.end is None or event.end > span.start)


def evidence(span: Span, events: Iterable[AccountEventInput]) -> tuple[EvidenceRow, ...]:
    """The events whose window overlaps the outage ``span``, in the order given."""
    return tuple(
        EvidenceRow(
            event_id=e.event_id,
            provider=e.provider,
            kind=e.kind,
            source=e.source,
            title=e.title,
            detail=e.detail,
            start=e.start,
            end=e.end,
        )
        for e in events
        if overlaps(e, span)
    )


def reason(event: AccountEventInput) -> Reason | None:
    """Why the event could be excluded: the user's own doing, or maintenance the user
    scheduled or accepted; None for the rest (a retirement, an issue, a preemption)."""
    if event.kind == "user_initiated":
        return "user_initiated"
    if event.kind == "scheduled_maintenance" and event.accepted:
        return "accepted_maintenance"
    return None


def excludes(policy: SlaPolicy | None, why: Reason) -> bool:
    """Whether ``policy`` leaves out time for ``why``; a target without a policy takes the
    policy defaults (both excluded), as it already has its maintenance windows excluded."""
    if policy is None:
        return True
    return policy.exclude_user_initiated if why == "user_initiated" else policy.exclude_maintenance


def windows(events: Iterable[AccountEventInput], until: datetime, why: Reason) -> list[Span]:
    """The windows of the events excludable for ``why``, merged (whatever the policy)."""
    found = (window(e, until) for e in events if reason(e) == why)
    return merge(w for w in found if w is not None)


def excluded_spans(
    events: Sequence[AccountEventInput], until: datetime, policy: SlaPolicy | None
) -> list[Span]:
    """Every event window ``policy`` leaves out, merged."""
    return merge(
        span for why in REASONS if excludes(policy, why) for span in windows(events, until, why)
    )


def exclusions(
    down: Sequence[Span],
    maintenance: Sequence[Span],
    events: Sequence[AccountEventInput],
    until: datetime,
    policy: SlaPolicy | None,
) -> list[ExclusionRow]:
    """The downtime ``policy`` leaves out on the provider's record, one row per stretch and
    event: each event (earliest first) takes the part of ``down`` inside its window that no
    configured maintenance window the policy excludes, and no earlier event, already took."""
    taken = merge(maintenance) if excludes(policy, "accepted_maintenance") else []
    rows: list[ExclusionRow] = []
    for event in sorted(events, key=lambda e: (e.start, e.event_id)):
        why = reason(event)
        span = window(event, until)
        if why is None or span is None or not excludes(policy, why):
            continue
        part = subtract(intersect(down, [span]), taken)
        rows.extend(
            ExclusionRow(
                start=s.start,
                end=s.end,
                seconds=s.duration.total_seconds(),
                reason=why,
                event_id=event.event_id,
                provider_words=words(event),
            )
            for s in part
        )
        taken = merge([*taken, *part])
    return sorted(rows, key=lambda r: (r.start, r.event_id))


def words(event: AccountEventInput) -> str:
    """The provider's words: its title and detail, as far as it gave them."""
    return "; ".join(text for text in (event.title.strip(), event.detail.strip()) if text)


def claim_event_ids(
    provider: str, outages: Iterable[tuple[float, Sequence[EvidenceRow]]]
) -> tuple[str, ...]:
    """The ids of ``provider``'s events that are evidence for the counted outages, once each,
    in the order of the outages (``outages``: each outage's counted seconds and evidence)."""
    ids: dict[str, None] = {}
    for counted_s, rows in outages:
        if counted_s > 0:
            ids.update((row.event_id, None) for row in rows if row.provider == provider)
    return tuple(ids)
