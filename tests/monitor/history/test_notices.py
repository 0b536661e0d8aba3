"""monitor/history/notices.py: when a notice shows (a table), the status page's order, what a
notice is about and when it last changed; the reads on SQLite and PostgreSQL."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy.orm import Session

from monitor import notices
from monitor.history.notices import NoticeView, Phase, phase_of, shown, touched_since

T = datetime(2026, 11, 10, 12, 0, tzinfo=UTC)
H = timedelta(hours=1)


@pytest.mark.parametrize(
    ("ends_at", "ended_at", "now", "phase"),
    [
        pytest.param(None, None, T - H, "upcoming", id="before-its-start"),
        pytest.param(None, None, T, "current", id="at-its-start"),
        pytest.param(None, None, T + 1000 * H, "current", id="no-end-shows-until-ended"),
        pytest.param(T + H, None, T + H / 2, "current", id="before-its-end"),
        pytest.param(T + H, None, T + H, "past", id="at-its-end"),
        pytest.param(T + H, T + H / 2, T + H / 2, "past", id="ended-early"),
        pytest.param(T + H, T + 2 * H, T + H, "past", id="announced-end-comes-first"),
        pytest.param(None, T - H / 2, T - H / 4, "past", id="called-off-before-its-start"),
        pytest.param(None, T + H, T + H / 2, "current", id="ended-later-than-now"),
    ],
)
def test_when_a_notice_shows(
    ends_at: datetime | None, ended_at: datetime | None, now: datetime, phase: Phase
) -> None:
    assert phase_of(T, ends_at, ended_at, now) == phase


NOTICE = NoticeView(
    id=1, title="t", body="", kind="notice", severity="info", starts_at=T, ends_at=T + 2 * H,
    ended_at=None, provider=None, region=None, pool=None, targets=(), created_at=T - H,
    created_by=None, ended_by=None, in_sla=False,
)  # fmt: skip


@pytest.mark.parametrize(
    ("now", "updated"),
    [
        pytest.param(T - H / 2, T - H, id="announced"),
        pytest.param(T + H, T, id="begun"),
        pytest.param(T + 3 * H, T + 2 * H, id="over"),
    ],
)
def test_a_notice_changes_when_posted_begun_and_over(now: datetime, updated: datetime) -> None:
    assert NOTICE.updated(now) == updated


@pytest.mark.parametrize(
    ("scope", "labels", "about"),
    [
        pytest.param({}, {"target": "gpu-1"}, True, id="unscoped-is-about-everything"),
        pytest.param({"targets": ("gpu-1",)}, {"target": "gpu-1"}, True, id="named"),
        pytest.param({"targets": ("gpu-1",)}, {"target": "gpu-2"}, False, id="another-named"),
        pytest.param({"pool": "a"}, {"target": "gpu-2", "pool": "a"}, True, id="its-pool"),
        pytest.param({"provider": "aws"}, {"target": "g", "provider": "gcp"}, False, id="other"),
    ],
)
def test_what_a_notice_is_about(
    scope: dict[str, object], labels: dict[str, str], about: bool
) -> None:
    assert replace(NOTICE, **scope).about(labels) is about  # type: ignore[arg-type]


def post(session: Session, title: str, starts: datetime, **fields: object) -> int:
    draft = notices.NoticeDraft(title=title, starts_at=starts, **fields)  # type: ignore[arg-type]
    return notices.post(session, draft, "ops", T - 2 * H).id


def test_the_page_shows_current_by_severity_then_upcoming_soonest_first(session: Session) -> None:
    info = post(session, "info", T - H)
    critical = post(session, "critical", T - H, severity="critical")
    later = post(session, "later", T + 5 * H)
    sooner = post(session, "sooner", T + H)
    post(session, "over", T - 1.5 * H, ends_at=T - H / 2)
    assert [n.id for n in shown(session, T)] == [critical, info, sooner, later]


def test_the_feed_reads_what_shows_and_what_changed_lately(session: Session) -> None:
    over = post(session, "over", T - 1.5 * H, ends_at=T - H / 2)
    ahead = post(session, "ahead", T + H)
    assert {n.id for n in touched_since(session, T - H, T)} == {over, ahead}
    assert {n.id for n in touched_since(session, T - H / 4, T)} == {ahead}
