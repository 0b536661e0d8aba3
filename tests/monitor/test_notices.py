"""monitor/notices.py: what may be posted (a table), the maintenance window a scoped maintenance
notice holds and what ending it does to the window, and the month's SLA figure with a
maintenance notice and a configured window over the same outage (counted once), on SQLite and
PostgreSQL."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import select
from sqlalchemy.orm import Session

from monitor import notices
from monitor.config import parse_config
from monitor.db.models import MaintenanceWindow, Notice
from monitor.history import notices as read
from monitor.notices import NoticeDraft, refusal, sla_window
from monitor.reports.service import build_monthly
from monitor.sla.intervals import Span
from tests.monitor.history.conftest import observed, outage, target

NOW = datetime(2026, 11, 10, 12, 0, tzinfo=UTC)
H = timedelta(hours=1)


def draft(**fields: object) -> NoticeDraft:
    return NoticeDraft(**{"title": "Fabric swap", "starts_at": NOW + H, **fields})  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("written", "field", "reason"),
    [
        pytest.param(draft(), None, None, id="a-notice-with-no-end"),
        pytest.param(draft(ends_at=NOW + 2 * H), None, None, id="announced-ahead"),
        pytest.param(draft(starts_at=NOW - H, ends_at=NOW + H), None, None, id="begun-already"),
        pytest.param(draft(title="  "), "title", "must not be empty", id="blank-title"),
        pytest.param(draft(title="a\nb"), "title", "must be one line", id="two-line-title"),
        pytest.param(draft(title="x" * 201), "title", "at most 200", id="long-title"),
        pytest.param(draft(body="x" * 4001), "body", "at most 4000", id="long-body"),
        pytest.param(draft(body="a\x00b"), "body", "NUL", id="nul-in-body"),
        pytest.param(draft(kind="outage"), "kind", "notice, maintenance", id="unknown-kind"),
        pytest.param(draft(severity="sev1"), "severity", "info, minor", id="unknown-severity"),
        pytest.param(draft(pool=""), "pool", "1 to 200", id="empty-pool"),
        pytest.param(draft(targets=("",)), "targets", "1 to 200", id="empty-target"),
        pytest.param(draft(ends_at=NOW + H), "ends_at", "after the start", id="end-at-start"),
        pytest.param(draft(ends_at=NOW), "ends_at", "after the start", id="end-before-start"),
        pytest.param(
            draft(starts_at=NOW - 2 * H, ends_at=NOW - H), "ends_at", "already past", id="all-past"
        ),
        pytest.param(draft(kind="maintenance"), "ends_at", "needs an end", id="endless-work"),
    ],
)
def test_what_may_be_posted(written: NoticeDraft, field: str | None, reason: str | None) -> None:
    refused = refusal(written, NOW)
    if field is None:
        assert refused is None
    else:
        assert refused is not None
        assert refused.field == field
        assert reason is not None
        assert reason in refused.reason


@pytest.mark.parametrize(
    ("written", "window"),
    [
        pytest.param(
            draft(kind="maintenance", ends_at=NOW + 3 * H, pool="a100"),
            Span(NOW + H, NOW + 3 * H),
            id="ahead",
        ),
        pytest.param(
            draft(kind="maintenance", starts_at=NOW - H, ends_at=NOW + H, targets=("gpu-1",)),
            Span(NOW, NOW + H),
            id="not-before-it-was-posted",
        ),
        pytest.param(draft(kind="maintenance", ends_at=NOW + 3 * H), None, id="no-scope"),
        pytest.param(draft(ends_at=NOW + 3 * H, provider="aws"), None, id="a-notice"),
    ],
)
def test_the_sla_window_a_notice_holds(written: NoticeDraft, window: Span | None) -> None:
    assert sla_window(written, NOW) == window


def windows(session: Session) -> list[tuple[datetime, datetime, list[str], str]]:
    rows = session.scalars(select(MaintenanceWindow).order_by(MaintenanceWindow.id))
    return [(w.starts_at, w.ends_at, list(w.targets), w.source) for w in rows]


def test_scoped_maintenance_holds_a_window_that_ends_early_with_it(session: Session) -> None:
    posted = notices.post(
        session, draft(kind="maintenance", ends_at=NOW + 4 * H, targets=("gpu-1",)), "ops", NOW
    )
    assert posted.in_sla
    assert posted.created_by == "ops"
    assert windows(session) == [(NOW + H, NOW + 4 * H, ["gpu-1"], "api")]

    ended, changed = notices.end(session, posted.id, "lead", NOW + 2 * H)
    assert changed
    assert (ended.ended_at, ended.ended_by, ended.phase(NOW + 2 * H)) == (
        NOW + 2 * H,
        "lead",
        "past",
    )
    assert windows(session) == [(NOW + H, NOW + 2 * H, ["gpu-1"], "api")]
    again, changed = notices.end(session, posted.id, "lead", NOW + 3 * H)
    assert not changed
    assert again.ended_at == NOW + 2 * H


def test_maintenance_called_off_before_it_began_leaves_no_window(session: Session) -> None:
    posted = notices.post(
        session, draft(kind="maintenance", ends_at=NOW + 4 * H, pool="p"), "ops", NOW
    )
    ended, _ = notices.end(session, posted.id, "ops", NOW + timedelta(minutes=30))
    assert ended.called_off
    assert not ended.in_sla
    assert windows(session) == []
    row = session.get(Notice, posted.id)
    assert row is not None
    assert row.maintenance_window_id is None


def test_a_notice_and_unscoped_maintenance_hold_no_window(session: Session) -> None:
    notices.post(session, draft(ends_at=NOW + 4 * H, pool="p"), "ops", NOW)
    notices.post(session, draft(kind="maintenance", ends_at=NOW + 4 * H), "ops", NOW)
    assert windows(session) == []


def test_a_refused_notice_stores_nothing(session: Session) -> None:
    with pytest.raises(notices.NoticeRefused, match="ends_at: must be after the start"):
        notices.post(session, draft(ends_at=NOW), "ops", NOW)
    assert session.scalars(select(Notice)).all() == []


def test_ending_an_unknown_notice_says_so(session: Session) -> None:
    with pytest.raises(notices.NoticeNotFound, match="no notice 424242"):
        notices.end(session, 424242, "ops", NOW)


def test_a_maintenance_notice_counts_once_beside_a_configured_window(session: Session) -> None:
    """An outage of 2 h (13:00-15:00); the notice covers 13:00-14:30, the YAML 14:00-14:30
    (overlapping it): 90 min excluded, not 120, and the observed figure keeps it all."""
    gpu = target(session, "gpu-1", provider="aws", sla_policy=None)
    observed(session, gpu, datetime(2026, 11, 1, tzinfo=UTC), NOW + 10 * H)
    outage(session, gpu, NOW + H, NOW + 3 * H)
    notices.post(
        session,
        draft(kind="maintenance", ends_at=NOW + 2.5 * H, targets=("gpu-1",)),
        "ops",
        NOW,
    )
    config = parse_config(
        "maintenance:\n"
        f"  - {{name: swap, start: '{(NOW + 2 * H).isoformat()}',"
        f" end: '{(NOW + 2.5 * H).isoformat()}', targets: [gpu-1]}}\n"
    )
    report = build_monthly(session, "2026-11", NOW + 10 * H, config)
    [row] = report.targets
    assert row.downtime_s == 2 * 3600
    assert row.sla_downtime_s == 0.5 * 3600


def test_a_notice_shows_upcoming_then_current_then_not_at_all(session: Session) -> None:
    posted = notices.post(session, draft(ends_at=NOW + 2 * H), "ops", NOW)
    moments = {"upcoming": NOW + H / 2, "current": NOW + 1.5 * H, "past": NOW + 2 * H}
    for phase, moment in moments.items():
        shown = read.shown(session, moment)
        assert [(n.id, n.phase(moment)) for n in shown] == (
            [] if phase == "past" else [(posted.id, phase)]
        ), phase
        query, order = read.listing(moment, (phase,))
        assert [r.id for r in session.scalars(query.order_by(*order))] == [posted.id], phase
