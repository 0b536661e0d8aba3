"""One-off notices: the monthly report announcement and the credit-claim reminder."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from monitor.alerts.engine import apply
from monitor.alerts.service import evaluate
from monitor.config import parse_config
from monitor.db.models import Alert, CreditClaim, Delivery

CONFIG = parse_config("channels: [{name: ops, kind: webhook, url: 'https://hooks.example/x'}]")
NOW = datetime(2026, 12, 20, 9, tzinfo=UTC)


def deliveries(session: Session) -> list[str]:
    return [d.payload["rule"] for d in session.scalars(select(Delivery).order_by(Delivery.id))]


def test_a_claim_deadline_within_a_week_is_announced_once_and_not_after_it_is_claimed(
    session: Session,
) -> None:
    session.add_all(
        [
            CreditClaim(
                provider="aws",
                month="2026-11",
                scope="provider",
                credit_pct=10.0,
                deadline=NOW + timedelta(days=5),
            ),
            CreditClaim(
                provider="gcp",
                month="2026-11",
                scope="provider",
                credit_pct=25.0,
                deadline=NOW + timedelta(days=20),
            ),
            CreditClaim(
                provider="azure",
                month="2026-11",
                scope="provider",
                credit_pct=10.0,
                deadline=NOW + timedelta(days=3),
                claimed_at=NOW - timedelta(days=1),
            ),
        ]
    )
    session.flush()
    evaluate(session, CONFIG, NOW)
    evaluate(session, CONFIG, NOW + timedelta(hours=1))
    assert deliveries(session) == ["credit_claim_due"]
    [alert] = session.scalars(select(Alert))
    assert (alert.labels, alert.state) == ({"provider": "aws", "month": "2026-11"}, "resolved")


def test_announcing_a_report_twice_sends_one_message(session: Session) -> None:
    from monitor.alerts.rules import announcement
    from monitor.reports.service import build_monthly

    report = build_monthly(session, "2026-11", NOW, CONFIG)
    apply(session, [announcement(report, NOW)], CONFIG, NOW)
    apply(session, [announcement(report, NOW + timedelta(minutes=5))], CONFIG, NOW)
    assert deliveries(session) == ["monthly_report"]
    assert session.scalar(select(func.count()).select_from(Alert)) == 1
