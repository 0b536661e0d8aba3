"""Clock edges the other tests leave out: feed timestamps written across the US fall-back DST
change (the same wall-clock hour twice, offsets and EST/EDT names, a naive RSS date), and a
one-minute outage straddling midnight on the last day of a month."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import Engine
from sqlalchemy.orm import Session

from monitor.config import parse_config
from monitor.config.models import TargetConfig
from monitor.db.engine import make_engine
from monitor.db.models import ObservedWindow, Outage
from monitor.feeds.kinds import rss, statuspage
from monitor.reports.service import build_monthly
from monitor.targets import upsert_target

pytestmark = pytest.mark.fault

# 2026-11-01 in New York: 01:00–01:59 happens twice, first EDT (-04:00), then EST (-05:00).
FALL_BACK = [
    ("2026-11-01T01:40:00-04:00", "investigating"),  # 05:40 UTC
    ("2026-11-01T01:55:00-04:00", "identified"),  # 05:55 UTC
    ("2026-11-01T01:10:00-05:00", "monitoring"),  # 06:10 UTC: earlier on the wall, later in fact
    ("2026-11-01T01:35:00-05:00", "resolved"),  # 06:35 UTC
]


def statuspage_document() -> bytes:
    updates = [
        {"id": f"u{i}", "status": status, "body": status, "created_at": at, "display_at": at}
        for i, (at, status) in enumerate(FALL_BACK)
    ]
    incident = {
        "id": "dst1",
        "name": "Storage errors in us-east-1",
        "status": "resolved",
        "impact": "major",
        "created_at": FALL_BACK[0][0],
        "started_at": FALL_BACK[0][0],
        "resolved_at": FALL_BACK[-1][0],
        "shortlink": "https://status.example.test/incidents/dst1",
        "components": [],
        "incident_updates": list(reversed(updates)),  # Statuspage lists newest first
    }
    return json.dumps({"incidents": [incident]}).encode()


def test_statuspage_offsets_across_the_fall_back_hour_become_ordered_utc() -> None:
    [incident] = statuspage.parse(statuspage_document(), "acme")
    assert incident.started_at == datetime(2026, 11, 1, 5, 40, tzinfo=UTC)
    assert incident.resolved_at == datetime(2026, 11, 1, 6, 35, tzinfo=UTC)
    assert [(u.at.strftime("%H:%M"), u.status) for u in incident.updates] == [
        ("05:40", "investigating"),
        ("05:55", "identified"),
        ("06:10", "monitoring"),
        ("06:35", "resolved"),
    ]
    assert all(u.at.utcoffset() == timedelta(0) for u in incident.updates)
    assert incident.resolved_at - incident.started_at == timedelta(minutes=55)  # not 1 h 55 min


RSS = """<?xml version="1.0"?>
<rss version="2.0"><channel><title>Example status</title>
<item><title>Resolved: API errors</title><guid>est</guid>
<link>https://status.example.test/est</link>
<pubDate>Sun, 01 Nov 2026 01:30:00 EST</pubDate><description>resolved</description></item>
<item><title>API errors</title><guid>edt</guid>
<link>https://status.example.test/edt</link>
<pubDate>Sun, 01 Nov 2026 01:30:00 EDT</pubDate><description>investigating</description></item>
<item><title>Naive stamp</title><guid>naive</guid>
<link>https://status.example.test/naive</link>
<pubDate>Sun, 01 Nov 2026 01:30:00</pubDate><description>no zone given</description></item>
</channel></rss>"""


def test_rss_dates_named_edt_and_est_in_the_repeated_hour_are_an_hour_apart_in_utc() -> None:
    by_link = {i.source_id.rsplit("/", 1)[-1]: i.started_at for i in rss.parse(RSS.encode())}
    assert by_link["edt"] == datetime(2026, 11, 1, 5, 30, tzinfo=UTC)
    assert by_link["est"] == datetime(2026, 11, 1, 6, 30, tzinfo=UTC)


def test_an_rss_date_without_a_zone_is_read_as_utc() -> None:
    found = {i.source_id: i for i in rss.parse(RSS.encode(), "acme")}
    [naive] = [i for key, i in found.items() if key.endswith("naive")]
    assert naive.started_at == datetime(2026, 11, 1, 1, 30, tzinfo=UTC)
    assert [u.at for u in naive.updates] == [datetime(2026, 11, 1, 1, 30, tzinfo=UTC)]


# --- an outage across midnight at the end of a month ---------------------------------------

MIDNIGHT = datetime(2026, 11, 1, tzinfo=UTC)
OUTAGE = (MIDNIGHT - timedelta(seconds=30), MIDNIGHT + timedelta(seconds=30))


@pytest.fixture
def engine(database_url: str) -> Iterator[Engine]:
    engine = make_engine(database_url)
    yield engine
    engine.dispose()


def straddling_target(session: Session, sla: str) -> None:
    cfg = TargetConfig.model_validate(
        {"name": f"gpu-{sla}", "kind": "tcp", "url": "tcp://h:22", "sla": sla}
    )
    row = upsert_target(session, cfg, "config")
    row.created_at = MIDNIGHT - timedelta(days=90)
    session.flush()
    session.add_all(
        [
            ObservedWindow(
                target_id=row.id,
                start=MIDNIGHT - timedelta(days=31),
                end=MIDNIGHT + timedelta(days=30),
                source="probe",
            ),
            Outage(target_id=row.id, series="reachable", start=OUTAGE[0], end=OUTAGE[1]),
        ]
    )


@pytest.mark.parametrize("sla", ["aws-ec2-instance", "gcp-compute-single-vm"])
def test_an_outage_from_2359_30_to_0000_30_counts_half_a_minute_in_each_month(
    engine: Engine, sla: str
) -> None:
    with Session(engine) as session, session.begin():
        straddling_target(session, sla)
    config = parse_config("")
    now = MIDNIGHT + timedelta(days=45)
    with Session(engine) as session:
        october = build_monthly(session, "2026-10", now, config)
        november = build_monthly(session, "2026-11", now, config)
    [oct_row], [nov_row] = october.targets, november.targets
    assert (oct_row.downtime_s, nov_row.downtime_s) == (30.0, 30.0)
    # however the policy rounds, the minute is not counted twice across the two months
    assert oct_row.sla_downtime_s + nov_row.sla_downtime_s <= 60.0
    assert oct_row.uptime_pct == pytest.approx(100 * (1 - oct_row.sla_downtime_s / (31 * 86400)))
    assert nov_row.uptime_pct == pytest.approx(100 * (1 - nov_row.sla_downtime_s / (30 * 86400)))
    assert len(oct_row.outages) == len(nov_row.outages) == 1  # the evidence in both months
