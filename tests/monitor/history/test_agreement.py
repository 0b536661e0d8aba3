"""Agreement by construction: one month holding every kind of event, and every surface (the
monthly report's JSON, ``/api/v1/sla``, the status page, ``/metrics`` and the Grafana panel's
SQL) giving the same month-to-date uptime per target, to 0.001 %, on SQLite and PostgreSQL
(the panel on PostgreSQL, where Grafana reads).

The month is the running one (the surfaces answer for now); every event sits at a fraction of
the time since the month began, and every observed window ends before the first request, so the
figures do not move while the surfaces are asked one after the other.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa
from prometheus_client.parser import text_string_to_metric_families
from sqlalchemy import Engine
from sqlalchemy.orm import Session, sessionmaker

from dashboards.grafana_vars import Selection, TimeRange, expand
from monitor import tokens
from monitor.api.app import create_app
from monitor.api.deps import db_session
from monitor.config import load_config
from monitor.db.base import utcnow
from monitor.db.models import (
    Heartbeat,
    MaintenanceWindow,
    ObservedWindow,
    Outage,
    Target,
)
from monitor.reports.service import build_monthly, render
from monitor.settings import Settings
from monitor.sla.months import month_of, month_period
from tests.support import ApiClient

TOLERANCE = 0.001  # percentage points
DASHBOARDS = Path(__file__).resolve().parents[3] / "dashboards"
PANEL = ("sla-compliance.json", "Month-to-date uptime per target")
GRAFANA_ROLE = "slamon_grafana"


@dataclass(frozen=True)
class Month:
    """The running month and its clock: ``at(f)`` is the fraction ``f`` of the time from the
    month's start to the moment the rows were written."""

    start: datetime
    now: datetime

    def at(self, fraction: float) -> datetime:
        return self.start + (self.now - self.start) * fraction


def _target(session: Session, name: str, created: datetime, **fields: Any) -> Target:
    row = Target(
        name=name,
        kind=fields.pop("kind", "tcp"),
        url=fields.pop("url", f"tcp://{name}:22"),
        provider=fields.pop("provider", "aws"),
        region="us-east-1",
        pool=fields.pop("pool", None),
        interval_s=30.0,
        timeout_s=5.0,
        confirmations=2,
        gpus=8,
        hourly_price=98.32,
        settings=fields.pop("settings", {}),
        labels={},
        source="api",
        created_at=created,
        **fields,
    )
    session.add(row)
    session.flush()
    return row


def _seen(
    session: Session, row: Target, start: datetime, end: datetime, source: str = "probe"
) -> None:
    session.add(ObservedWindow(target_id=row.id, start=start, end=end, source=source))


def _down(
    session: Session,
    row: Target,
    start: datetime,
    end: datetime | None,
    series: str = "reachable",
    source: str = "probe",
) -> None:
    session.add(
        Outage(target_id=row.id, series=series, start=start, end=end, source=source, detail={})
    )


def seed(session: Session, month: Month) -> None:
    """Every kind of event (see the module docstring); observed time ends at 0.9."""
    at, end = month.at, month.at(0.9)
    before = month.start - timedelta(days=30)

    steady = _target(session, "steady", before)
    _seen(session, steady, month.start, end)
    _down(session, steady, at(0.10), at(0.15))
    _down(session, steady, at(0.10), at(0.18), series="usable")  # unusable a while longer
    _down(session, steady, before, at(0.02))  # began last month

    still_open = _target(session, "still-open", before)
    _seen(session, still_open, month.start, end)
    _down(session, still_open, at(0.80), None)  # open: down until nobody watched any more

    future = _target(session, "future", before)
    _seen(session, future, month.start, end)
    _down(session, future, at(0.50), at(0.52))
    _down(session, future, month.now + timedelta(hours=1), None)  # not yet: never counted

    born = _target(session, "born", at(0.40))
    _seen(session, born, at(0.40), end)
    _down(session, born, at(0.60), at(0.62))

    retired = _target(session, "retired", before, retired_at=at(0.60))
    _seen(session, retired, month.start, at(0.60))
    _down(session, retired, at(0.20), at(0.25))

    backfilled = _target(session, "backfilled", at(0.50))  # registered after its history
    _seen(session, backfilled, month.start, at(0.50), source="import")
    _down(session, backfilled, at(0.10), at(0.13), source="import")
    _seen(session, backfilled, at(0.50), end)
    _down(session, backfilled, at(0.70), at(0.71))

    maintained = _target(session, "maintained", before, sla_policy="aws-ec2-instance")
    _seen(session, maintained, month.start, end)
    _down(session, maintained, at(0.30), at(0.40))
    session.add(
        MaintenanceWindow(
            name="stored",
            starts_at=at(0.31),
            ends_at=at(0.35),
            targets=["maintained"],
            source="api",
        )
    )

    trainer = _target(
        session, "trainer", before, kind="heartbeat", url=None, settings={"grace_s": 3600.0}
    )
    _seen(session, trainer, month.start, end)
    _down(session, trainer, at(0.45), at(0.47))
    beats = 400
    first, step = at(0.5), (end - at(0.5)) / beats
    session.execute(
        sa.insert(Heartbeat),
        [
            {
                "target_id": trainer.id,
                "at": first + step * i,
                "throughput": 100.0 if not 200 <= i < 260 else 40.0,  # a slow stretch
                "payload": {"unit": "tokens"},
            }
            for i in range(beats + 1)
        ],
    )
    session.commit()


def config_text(month: Month) -> str:
    """Overlapping configured maintenance over the stored window; the slowdown rule on the
    heartbeats' own spacing."""
    spacing = (month.at(0.9) - month.at(0.5)) / 400
    windows = [(0.32, 0.36), (0.34, 0.38)]
    lines = ["maintenance:"]
    for i, (a, b) in enumerate(windows):
        lines += [
            f"  - name: upgrade-{i}",
            f"    start: {month.at(a).isoformat()}",
            f"    end: {month.at(b).isoformat()}",
            "    targets: [maintained]",
        ]
    after, trailing = spacing * 5, spacing * 100
    lines += [
        "alerts:",
        f"  slowdown_after: {after.total_seconds():.3f}s",
        f"  slowdown_trailing: {trailing.total_seconds():.3f}s",
    ]
    return "\n".join(lines) + "\n"


@pytest.fixture
def seeded(
    engine: Engine, sessions: sessionmaker[Session], tmp_path: Path
) -> Iterator[tuple[ApiClient, dict[str, str], Any, Month]]:
    now = utcnow()
    month = Month(month_period(month_of(now)).start, now)
    path = tmp_path / "slamon.yaml"
    path.write_text(config_text(month))
    settings = Settings(  # type: ignore[call-arg]
        database_url=engine.url.render_as_string(hide_password=False),
        config=path,
        state_dir=tmp_path / "state",
    )
    app = create_app(settings)

    def session_in_test_transaction() -> Iterator[Session]:
        with sessions() as session:
            yield session

    app.dependency_overrides[db_session] = session_in_test_transaction
    with sessions() as session:
        seed(session, month)
        read = tokens.create(session, "read", "read")
        session.commit()
    with ApiClient(app) as client:
        yield client, {"Authorization": f"Bearer {read}"}, sessions, month


def from_report(sessions: sessionmaker[Session], path: Path) -> dict[str, dict[str, Any]]:
    """The monthly report as its JSON file says, built apart from any surface's cache."""
    config = load_config(path)
    with sessions() as session:
        report = build_monthly(session, month_of(utcnow()), utcnow(), config)
    document = json.loads(render(report, "json").content)
    return {t["name"]: t for t in document["targets"]}


def from_api(client: ApiClient, headers: dict[str, str]) -> dict[str, dict[str, Any]]:
    response = client.get("/api/v1/sla", headers=headers)
    assert response.status_code == 200, response.text  # type: ignore[attr-defined]
    return {t["name"]: t for t in response.json()["targets"]}  # type: ignore[attr-defined]


def from_page(client: ApiClient) -> dict[str, float | None]:
    page = client.get("/").text  # type: ignore[attr-defined]
    rows = re.findall(
        r'<tr class="target" data-target="([^"]+)".*?data-uptime-pct="([\d.]*)"', page, re.S
    )
    return {name: float(pct) if pct else None for name, pct in rows}


def from_metrics(client: ApiClient) -> dict[str, float]:
    text = client.get("/metrics").text  # type: ignore[attr-defined]
    found = {}
    for family in text_string_to_metric_families(text):
        if family.name == "slamon_target_month_uptime_ratio":
            for sample in family.samples:
                found[sample.labels["target"]] = 100 * sample.value
    return found


def from_grafana(sessions: sessionmaker[Session], now: datetime) -> dict[str, float]:
    """The SLA board's per-target panel, its SQL run as Grafana's role with All selected."""
    name, title = PANEL
    board = json.loads((DASHBOARDS / name).read_text())
    [panel] = [p for p in board["panels"] if p.get("title") == title]
    time = TimeRange(now - timedelta(days=7), now)
    with sessions() as session:
        connection = session.connection()
        connection.execute(sa.text(f"SET LOCAL ROLE {GRAFANA_ROLE}"))
        selections: dict[str, Selection] = {}
        for variable in board["templating"]["list"]:
            sql = expand(variable["query"], selections, time)
            options = [str(r[0]) for r in connection.execute(sa.text(sql))]
            selections[variable["name"]] = Selection(variable, options, ["$__all"])
        [target] = panel["targets"]
        rows = connection.execute(sa.text(expand(target["rawSql"], selections, time))).mappings()
        found = {r["target"]: float(r["uptime_pct"]) for r in rows if r["uptime_pct"] is not None}
        session.rollback()
    return found


def observed_uptime(row: dict[str, Any]) -> float | None:
    """The report's per-target figure, from the fields every consumer has."""
    if not row["observed_s"]:
        return None
    return 100 * (1 - row["downtime_s"] / row["observed_s"])


def test_every_surface_gives_the_same_month_to_date_uptime_per_target(
    seeded: tuple[ApiClient, dict[str, str], Any, Month], engine: Engine, tmp_path: Path
) -> None:
    client, headers, sessions, _ = seeded
    report = from_report(sessions, tmp_path / "slamon.yaml")
    expected = {name: row["observed_uptime_pct"] for name, row in report.items()}
    # the seeded month, as its arithmetic says (a few of them worked here by hand)
    assert set(expected) == {
        "steady", "still-open", "future", "born", "retired", "backfilled", "maintained", "trainer"
    }  # fmt: skip
    assert expected["steady"] == pytest.approx(100 * (1 - (0.05 + 0.02) / 0.9), abs=1e-6)
    assert expected["still-open"] == pytest.approx(100 * (1 - 0.10 / 0.9), abs=1e-6)
    assert expected["future"] == pytest.approx(100 * (1 - 0.02 / 0.9), abs=1e-6)
    assert expected["born"] == pytest.approx(100 * (1 - 0.02 / 0.5), abs=1e-6)
    assert expected["retired"] == pytest.approx(100 * (1 - 0.05 / 0.6), abs=1e-6)
    assert expected["backfilled"] == pytest.approx(100 * (1 - 0.04 / 0.9), abs=1e-6)
    assert report["trainer"]["slow_s"] > 0  # the slow stretch came from the heartbeats
    for name, row in report.items():
        assert observed_uptime(row) == pytest.approx(expected[name], abs=TOLERANCE)

    live = set(expected) - {"retired"}
    api = from_api(client, headers)
    page = from_page(client)
    metrics = from_metrics(client)
    surfaces: dict[str, dict[str, float | None]] = {
        "/api/v1/sla": {n: observed_uptime(r) for n, r in api.items()},
        "status page": dict(page),
        "/metrics": dict(metrics),
    }
    if engine.dialect.name == "postgresql":
        surfaces["grafana"] = dict(from_grafana(sessions, utcnow()))
    for surface, figures in surfaces.items():
        shown = live | ({"retired"} if surface in ("/api/v1/sla", "grafana") else set())
        assert set(figures) == shown, surface
        for name in shown:
            assert figures[name] == pytest.approx(expected[name], abs=TOLERANCE), (surface, name)
    # the policy's own figure (maintenance excluded) agrees between the report and the API
    for name, row in report.items():
        assert api[name]["uptime_pct"] == pytest.approx(row["uptime_pct"], abs=TOLERANCE)
        assert api[name]["sla_downtime_s"] == pytest.approx(row["sla_downtime_s"], abs=1e-3)
    assert report["maintained"]["sla_downtime_s"] < report["maintained"]["downtime_s"]
