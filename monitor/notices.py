"""Posting and ending operator notices: the one writer of ``notices`` and of the maintenance
windows they hold. ``monitor.history.notices`` reads them for every surface.

A notice says something to whoever reads the status page or its feed ("the fabric is being
replaced tonight", "gpu-7 is reserved for the benchmark"): posted through ``POST
/api/v1/notices`` or ``slamon notices post``, shown from ``starts_at`` (ahead of it as
upcoming) until its ``ends_at`` or until an operator ends it.

Maintenance announced as a notice is also a real maintenance window for the SLA arithmetic,
as a window in the YAML is (the report subtracts the windows that cover a target where its
policy excludes maintenance), written beside it in the same transaction:

- only when it has a scope (targets, or a provider/region/pool): a window covers only what it
  names (``monitor.sla.maintenance.covers``), so maintenance of the whole deployment holds none;
- from ``starts_at``, but never from before it was posted: maintenance announced after the fact
  does not erase downtime already seen, as the providers' terms exclude only maintenance
  announced ahead;
- until its announced end; ending the notice early ends the window then, and calling it off
  before it began deletes the window;
- once: ``source`` "api", named after the notice; a window the YAML also has for that time
  is merged by the SLA arithmetic, never counted twice, and the feed tells the notice alone.

Functions that take a session add or change rows and never commit: the request or the command
commits.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from sqlalchemy.orm import Session

from monitor.db.models import MaintenanceWindow, Notice
from monitor.errors import SlamonError
from monitor.history.notices import NoticeView, view
from monitor.sla.intervals import Span

KINDS = ("notice", "maintenance")
SEVERITIES = ("info", "minor", "major", "critical")
MAX_TITLE = 200
MAX_BODY = 4000
MAX_TARGETS = 100
MAX_NAME = {"provider": 64, "region": 64, "pool": 200, "targets": 200, "by": 200}


class NoticeRefused(SlamonError):
    """A notice that cannot be posted as written: ``field`` and why, in one line."""

    def __init__(self, field: str, reason: str) -> None:
        self.field = field
        self.reason = reason
        super().__init__(f"{field}: {reason}")


class NoticeNotFound(SlamonError):
    def __init__(self, notice_id: int) -> None:
        self.notice_id = notice_id
        super().__init__(f"no notice {notice_id}")


@dataclass(frozen=True, slots=True)
class NoticeDraft:
    """A notice as an operator wrote it, before it is stored."""

    title: str
    starts_at: datetime
    ends_at: datetime | None = None
    body: str = ""
    kind: str = "notice"
    severity: str = "info"
    provider: str | None = None
    region: str | None = None
    pool: str | None = None
    targets: tuple[str, ...] = ()

    @property
    def scoped(self) -> bool:
        return bool(self.targets or self.provider or self.region or self.pool)


def refusal(draft: NoticeDraft, now: datetime) -> NoticeRefused | None:
    """Why ``draft`` cannot be posted at ``now``, or None (pure). The field names are the API's."""
    return _words(draft) or _scope(draft) or _times(draft, now)


def _words(draft: NoticeDraft) -> NoticeRefused | None:
    if not draft.title.strip():
        return NoticeRefused("title", "must not be empty")
    if len(draft.title) > MAX_TITLE or "\n" in draft.title or "\r" in draft.title:
        return NoticeRefused("title", f"must be one line of at most {MAX_TITLE} characters")
    if len(draft.body) > MAX_BODY:
        return NoticeRefused("body", f"must be at most {MAX_BODY} characters")
    for field, text in (("title", draft.title), ("body", draft.body)):
        if "\x00" in text:
            return NoticeRefused(field, "must not contain NUL characters")
    if draft.kind not in KINDS:
        return NoticeRefused("kind", f"must be one of {', '.join(KINDS)}")
    if draft.severity not in SEVERITIES:
        return NoticeRefused("severity", f"must be one of {', '.join(SEVERITIES)}")
    return None


def _scope(draft: NoticeDraft) -> NoticeRefused | None:
    if len(draft.targets) > MAX_TARGETS:
        return NoticeRefused("targets", f"at most {MAX_TARGETS}")
    named = {"provider": draft.provider, "region": draft.region, "pool": draft.pool}
    for field, value in [*named.items(), *(("targets", t) for t in draft.targets)]:
        if value is not None and not 0 < len(value) <= MAX_NAME[field]:
            return NoticeRefused(field, f"must be 1 to {MAX_NAME[field]} characters")
        if value is not None and "\x00" in value:
            return NoticeRefused(field, "must not contain NUL characters")
    return None


def _times(draft: NoticeDraft, now: datetime) -> NoticeRefused | None:
    if draft.ends_at is None:
        if draft.kind == "maintenance":
            return NoticeRefused("ends_at", "maintenance needs an end (when the work is done)")
        return None
    if draft.ends_at <= draft.starts_at:
        return NoticeRefused("ends_at", "must be after the start")
    if draft.ends_at <= now:
        return NoticeRefused("ends_at", "is already past: there is nothing left to announce")
    return None


def sla_window(draft: NoticeDraft, posted_at: datetime) -> Span | None:
    """The maintenance window ``draft`` holds for the SLA arithmetic (pure): scoped
    maintenance only, from its start but not before it was posted, to its end."""
    if draft.kind != "maintenance" or not draft.scoped or draft.ends_at is None:
        return None
    start = max(draft.starts_at, posted_at)
    return Span(start, draft.ends_at) if draft.ends_at > start else None


def post(session: Session, draft: NoticeDraft, by: str | None, now: datetime) -> NoticeView:
    """Store ``draft`` as posted by ``by`` at ``now``, with its maintenance window if it holds
    one; raises ``NoticeRefused`` (nothing stored) when it cannot be posted."""
    refused = refusal(draft, now)
    if refused is not None:
        raise refused
    row = Notice(
        title=draft.title.strip(),
        body=draft.body,
        kind=draft.kind,
        severity=draft.severity,
        starts_at=draft.starts_at,
        ends_at=draft.ends_at,
        provider=draft.provider,
        region=draft.region,
        pool=draft.pool,
        targets=list(draft.targets),
        created_at=now,
        created_by=(by or "")[: MAX_NAME["by"]] or None,
    )
    session.add(row)
    session.flush()  # its id names the window
    window = sla_window(draft, now)
    if window is not None:
        held = MaintenanceWindow(
            name=f"notice {row.id}: {row.title}"[:300],
            starts_at=window.start,
            ends_at=window.end,
            provider=draft.provider,
            region=draft.region,
            pool=draft.pool,
            targets=list(draft.targets),
            source="api",
        )
        session.add(held)
        session.flush()
        row.maintenance_window_id = held.id
    return view(row)


def end(session: Session, notice_id: int, by: str | None, now: datetime) -> tuple[NoticeView, bool]:
    """End notice ``notice_id`` at ``now`` (call it off if it has not begun), and its
    maintenance window with it; the notice, and whether anything changed (a notice already
    past is left as it was). Raises ``NoticeNotFound``."""
    row = session.get(Notice, notice_id)
    if row is None:
        raise NoticeNotFound(notice_id)
    if view(row).phase(now) == "past":
        return view(row), False
    row.ended_at = now
    row.ended_by = (by or "")[: MAX_NAME["by"]] or None
    if row.maintenance_window_id is not None:
        _end_window(session, row, now)
    session.flush()
    return view(row), True


def _end_window(session: Session, row: Notice, now: datetime) -> None:
    held = session.get(MaintenanceWindow, row.maintenance_window_id)
    if held is None:
        return
    if now <= held.starts_at:
        session.delete(held)  # called off before the work began: it excludes nothing
        row.maintenance_window_id = None
    else:
        held.ends_at = min(held.ends_at, now)
