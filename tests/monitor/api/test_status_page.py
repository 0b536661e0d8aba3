"""The status page at `/`: seeded state shows up, escaped, without a token."""

from __future__ import annotations

import re
from datetime import timedelta

import pytest
from sqlalchemy.orm import Session, sessionmaker

from monitor.api.status_page import SlaView, StatusView, render
from monitor.config.models import TargetConfig
from monitor.db.base import utcnow
from monitor.db.models import Alert, Incident, ObservedWindow, Outage, Provider, TargetState
from monitor.sla.math import month_period
from monitor.targets import upsert_target
from tests.support import ApiClient

EVIL = '<script>alert("pwned")</script>'


def seed(session: Session) -> None:
    now = utcnow()
    aws = Provider(slug="aws", name="Amazon Web Services", regions=[], components=[])
    empty = Provider(slug="quietcloud", name="Quiet Cloud", regions=[], components=[])
    session.add_all([aws, empty])
    session.flush()
    session.add_all(
        [
            _incident(aws.id, "open-1", "EC2 p5 capacity degraded", "https://status.aws/1", now),
            _incident(aws.id, "open-2", "Link that is not http", "javascript:alert(1)", now),
            _incident(aws.id, "done", "Old resolved thing", None, now, resolved=True),
        ]
    )
    gpu = _target(session, "gpu-h100-0", "h100")
    _target(session, EVIL, "h100")
    session.add_all(
        [
            TargetState(target_id=gpu.id, vantage="*", series="reachable", state="up", detail={}),
            Alert(
                fingerprint="f1",
                rule="target_down",
                severity="critical",
                labels={},
                summary="gpu-h100-9 unreachable for 3 minutes",
                state="firing",
                started_at=now - timedelta(minutes=3),
            ),
            Alert(
                fingerprint="f2",
                rule="target_down",
                severity="critical",
                labels={},
                summary="already resolved alert",
                state="resolved",
                started_at=now - timedelta(hours=3),
                resolved_at=now - timedelta(hours=2),
            ),
        ]
    )
    session.commit()


def _target(session: Session, name: str, pool: str):  # type: ignore[no-untyped-def]
    row = upsert_target(
        session,
        TargetConfig(name=name, kind="tcp", url="tcp://h:22", provider="aws", pool=pool),
        "config",
    )
    row.region = "us-east-1"
    row.created_at = utcnow() - timedelta(days=60)
    session.flush()
    return row


def _incident(provider_id, source_id, title, url, now, *, resolved=False):  # type: ignore[no-untyped-def]
    return Incident(
        provider_id=provider_id,
        source_id=source_id,
        title=title,
        status="resolved" if resolved else "investigating",
        impact="major",
        started_at=now - timedelta(hours=1),
        resolved_at=now if resolved else None,
        url=url,
        relevant=True,
        content_hash=source_id,
    )


def test_status_page_shows_fleet_alerts_incidents_and_sla_without_a_token(
    api: ApiClient, sessions: sessionmaker[Session]
) -> None:
    with sessions() as session:
        seed(session)
    response = api.get("/")
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/html")
    page = response.text
    assert '<meta http-equiv="refresh" content="30">' in page
    assert "gpu-h100-0" in page
    assert "us-east-1" in page
    assert "gpu-h100-9 unreachable for 3 minutes" in page
    assert "already resolved alert" not in page
    assert '<a href="https://status.aws/1"' in page
    assert "EC2 p5 capacity degraded" in page
    assert "Old resolved thing" not in page
    assert "Quiet Cloud" in page
    assert "no data" in page
    assert "1 / 2" in page  # pool h100: one member up (the other has no state: unknown)


def test_status_page_escapes_names_and_drops_non_http_links(
    api: ApiClient, sessions: sessionmaker[Session]
) -> None:
    with sessions() as session:
        seed(session)
    page = api.get("/").text
    assert EVIL not in page
    assert "&lt;script&gt;alert(&#34;pwned&#34;)&lt;/script&gt;" in page
    assert "javascript:" not in page
    assert "<script" not in page


def test_status_page_renders_an_empty_deployment(api: ApiClient) -> None:
    page = api.get("/").text
    assert "No targets." in page
    assert "No alerts firing." in page
    assert "<script" not in page
    assert "src=" not in page  # nothing to load: inline CSS only


def test_sla_rows_show_uptime_against_target_and_credit() -> None:
    now = utcnow()
    view = StatusView(
        now=now,
        month=now.strftime("%Y-%m"),
        providers=(),
        fleet=(),
        pools=(),
        alerts=(),
        sla=(SlaView("aws", "AWS", 99.5, 99.9, 10.0), SlaView("gcp", "GCP", 100.0, 99.9, 0.0)),
    )
    page = render(view)
    assert '<span class="badge breach">99.500%</span>' in page
    assert '<span class="badge ok">100.000%</span>' in page
    assert "99.900%" in page
    assert "10.0%" in page


def test_status_page_shows_month_to_date_uptime_target_and_credit_from_outages(
    api: ApiClient, sessions: sessionmaker[Session]
) -> None:
    """A target under AWS's instance SLA was down for 2 % of the month so far: the SLA row
    shows ~98 % against 99.5 %, as a breach, with the 30 % credit tier (below 99.0)."""
    now = utcnow()
    month = month_period(now.strftime("%Y-%m"))
    elapsed = now - month.start
    with sessions() as session:
        session.add(Provider(slug="aws", name="Amazon Web Services", regions=[], components=[]))
        row = upsert_target(
            session,
            TargetConfig(
                name="gpu-0", kind="tcp", url="tcp://h:22", provider="aws", sla="aws-ec2-instance"
            ),
            "config",
        )
        row.created_at = now - timedelta(days=60)
        session.flush()
        down_from = month.start + elapsed / 4
        session.add_all(
            [
                ObservedWindow(target_id=row.id, start=month.start, end=now + timedelta(days=1)),
                Outage(target_id=row.id, start=down_from, end=down_from + elapsed * 0.02),
            ]
        )
        session.commit()
    page = api.get("/").text
    sla_table = page[page.index('<table id="sla">') :]
    aws_row = sla_table[sla_table.index("Amazon Web Services") :].split("</tr>")[0]
    uptime = float(re.search(r'class="badge breach">([\d.]+)%', aws_row).group(1))  # type: ignore[union-attr]
    assert uptime == pytest.approx(98.0, abs=0.002)
    assert "99.500%" in aws_row
    assert "30.0%" in aws_row
