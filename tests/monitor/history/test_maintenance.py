"""monitor/history/maintenance.py: stored and configured windows that apply to a target, clipped
to the period, on SQLite and PostgreSQL."""

from __future__ import annotations

from datetime import timedelta

from sqlalchemy.orm import Session

from monitor.config.models import MaintenanceConfig
from monitor.history.maintenance import stored_in, target_windows
from monitor.sla.intervals import Span
from tests.monitor.history.conftest import DEC, NOV, window

MONTH = Span(NOV, DEC)
MID = NOV + timedelta(days=15)
LABELS = {"target": "gpu-0", "provider": "aws", "region": "us-east-1"}


def test_stored_and_configured_windows_that_cover_the_target_are_clipped(
    session: Session,
) -> None:
    window(session, NOV - timedelta(hours=2), NOV + timedelta(hours=1), provider="aws")
    window(session, MID, MID + timedelta(hours=1), provider="gcp")  # another provider's
    window(session, DEC - timedelta(hours=1), DEC + timedelta(hours=5), targets=["gpu-0"])
    configured = MaintenanceConfig.model_validate(
        {"name": "upgrade", "start": MID, "end": MID + timedelta(hours=2), "region": "us-east-1"}
    )
    stored = stored_in(session, MONTH)
    assert len(stored) == 3
    assert sorted(target_windows(LABELS, stored, [configured], MONTH)) == [
        Span(NOV, NOV + timedelta(hours=1)),
        Span(MID, MID + timedelta(hours=2)),
        Span(DEC - timedelta(hours=1), DEC),
    ]


def test_windows_outside_the_period_are_not_read(session: Session) -> None:
    window(session, DEC, DEC + timedelta(hours=1), provider="aws")
    window(session, NOV - timedelta(hours=1), NOV, provider="aws")
    assert stored_in(session, MONTH) == []
