"""Each target's observed time and SLA downtime over all stored history
(``monitor/reports/cumulative.py``, behind /metrics' two availability counters): the sum of
the monthly reports, worked out by hand here; never lower at a later scrape, even across the
confirmed recovery that dates an outage's end back; closed months kept, not rebuilt."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy.orm import Session

from monitor.config import Config, parse_config
from monitor.config.models import TargetConfig
from monitor.db.models import ObservedWindow, Outage, Target
from monitor.reports.cumulative import (
    ClosedMonths,
    Totals,
    cut_open_outages,
    months_between,
    settle_of,
    settled_month,
    totals,
)
from monitor.reports.inputs import TargetInput
from monitor.reports.service import build_monthly
from monitor.sla.intervals import Span
from monitor.targets import upsert_target

OCT31 = datetime(2026, 10, 31, tzinfo=UTC)
NOV = datetime(2026, 11, 1, tzinfo=UTC)
DEC = datetime(2026, 12, 1, tzinfo=UTC)
DAY, MINUTE, SECOND = timedelta(days=1), timedelta(minutes=1), timedelta(seconds=1)
CONFIG = """
sla_policies:
  - {name: minutes, provider: aws, target_pct: 99.9, measurement: whole_minutes}
  - {name: exact, provider: aws, target_pct: 99.5}
maintenance:
  - {name: kernel, start: "2026-11-20T10:00:00Z", end: "2026-11-20T10:30:00Z", targets: [gpu-a]}
"""


def at(text: str) -> datetime:
    return datetime.fromisoformat(text).replace(tzinfo=UTC)


def add(session: Session, name: str, policy: str, born: datetime) -> Target:
    cfg = TargetConfig(name=name, kind="tcp", url="tcp://h:22", provider="aws", sla=policy)
    row = upsert_target(session, cfg, "config")
    row.created_at = born
    session.flush()
    return row


def watched(session: Session, target: Target, *spans: tuple[datetime, datetime]) -> None:
    session.add_all(ObservedWindow(target_id=target.id, start=s, end=e, source="probe")
                    for s, e in spans)  # fmt: skip


def down(session: Session, target: Target, start: datetime, end: datetime | None) -> Outage:
    row = Outage(target_id=target.id, series="reachable", start=start, end=end, source="probe")
    session.add(row)
    session.flush()
    return row


# gpu-a, born Oct 31 00:00 under "minutes" (99.9 %, whole minutes per downtime period), watched
# Oct 31 – Nov 10 and Nov 12 – Dec 3 (two unknown days):
#   Oct: observed 1 d = 86,400 s, no downtime
#   Nov: observed 28 d = 2,419,200 s; downtime
#     Nov 11 00:00–01:00          unwatched: 0
#     Nov 20 10:10–10:50:30       40.5 min, 20 of them in the kernel window: 20.5 min -> 20 min
#     Nov 30 23:59–Dec 1 00:02:30 its November minute: 1 min
#     = 1,200 + 60 = 1,260 s
#   Dec (to Dec 3 00:00): observed 2 d = 172,800 s; the boundary outage's 2.5 min -> 2 min = 120 s
#   all history: observed 2,678,400 s, downtime 1,380 s
HAND = Totals(86_400 + 2_419_200 + 172_800, 1_260 + 120)


def gpu_a(session: Session) -> Target:
    gpu = add(session, "gpu-a", "minutes", OCT31)
    watched(session, gpu, (OCT31, NOV + 9 * DAY), (NOV + 11 * DAY, DEC + 2 * DAY))
    down(session, gpu, NOV + 10 * DAY, NOV + 10 * DAY + 60 * MINUTE)
    down(session, gpu, at("2026-11-20T10:10:00"), at("2026-11-20T10:50:30"))
    down(session, gpu, at("2026-11-30T23:59:00"), at("2026-12-01T00:02:30"))
    return gpu


def test_all_history_is_the_sum_of_the_monthly_reports_as_worked_by_hand(session: Session) -> None:
    config = parse_config(CONFIG)
    gpu_a(session)
    now = DEC + 2 * DAY
    running = build_monthly(session, "2026-12", now, config)
    found = totals(session, config, now, running)
    assert found["gpu-a"] == HAND
    reports = [build_monthly(session, m, now, config) for m in ("2026-10", "2026-11", "2026-12")]
    rows = [next(t for t in r.targets if t.name == "gpu-a") for r in reports]
    assert Totals(sum(r.observed_s for r in rows), sum(r.sla_downtime_s for r in rows)) == HAND
    # the report's own uptime for November is the counters' ratio over November
    november = rows[1]
    assert november.uptime_pct == pytest.approx(100 * (1 - 1_260 / 2_419_200))


def test_a_confirmed_recovery_never_lowers_the_downtime_a_scrape_showed(session: Session) -> None:
    """The outage is open at t1 (counted up to now by the report); recovery confirmed 5 s
    later ends it 10 s back, where the first good probe was. The report's downtime falls by
    10 s; the total, which counted the open outage only up to t1 minus its settle, rises."""
    config = parse_config(CONFIG)
    gpu = add(session, "gpu-b", "exact", DEC)
    watched(session, gpu, (DEC, DEC + 2 * DAY + MINUTE))
    t1 = DEC + 2 * DAY
    outage = down(session, gpu, t1 - 10 * MINUTE, None)
    settle = settle_of(gpu, config.probes.retry_interval, config.schedule.heartbeats)
    assert settle == timedelta(seconds=30 + 2 * (5 + 5) + 5)  # interval, 2 × (judge + timeout)
    first = build_monthly(session, "2026-12", t1, config)
    before = totals(session, config, t1, first)["gpu-b"]
    assert before.downtime_s == (10 * MINUTE - settle).total_seconds()
    outage.end = t1 - timedelta(seconds=10)
    session.flush()
    t2 = t1 + timedelta(seconds=5)
    second = build_monthly(session, "2026-12", t2, config)
    after = totals(session, config, t2, second)["gpu-b"]
    report_downtime = [next(t for t in r.targets if t.name == "gpu-b").sla_downtime_s
                       for r in (first, second)]  # fmt: skip
    assert report_downtime == [600.0, 590.0]  # the report alone would have gone down
    assert after.downtime_s == 590.0 >= before.downtime_s
    assert after.observed_s >= before.observed_s


def test_only_the_targets_a_cut_changes_are_judged_again_with_their_region(
    session: Session,
) -> None:
    """r-a's outage is open, r-b's ended 10 s ago, both under aws-ec2-region (down while both
    zones are): the cut of r-a's outage cuts the region's downtime, so r-b is judged again
    with it (425 s, not the running report's 470 s); gpu-x, alone under its own policy, keeps
    the running report's figures. The same as cutting and assembling every target."""
    config = parse_config(CONFIG)
    now = DEC + 2 * DAY
    for name, zone, ended in (
        ("r-a", "us-east-1a", None),
        ("r-b", "us-east-1b", now - 10 * SECOND),
    ):
        row = add(session, name, "aws-ec2-region", DEC)
        row.region, row.zone = "us-east-1", zone
        watched(session, row, (DEC, now + MINUTE))
        down(session, row, now - (10 if name == "r-a" else 8) * MINUTE, ended)
    watched(session, add(session, "gpu-x", "exact", DEC), (DEC, now + MINUTE))
    settles = {name: timedelta(seconds=55) for name in ("r-a", "r-b", "gpu-x")}
    running = build_monthly(session, "2026-12", now, config)
    lean = settled_month(session, config, "2026-12", now, settles, running)
    assert lean == settled_month(session, config, "2026-12", now, settles)
    down_s = {name: lean[name].downtime_s for name in ("r-a", "r-b", "gpu-x")}
    assert down_s == {"r-a": 425.0, "r-b": 425.0, "gpu-x": 0.0}
    assert {t.name: t.sla_downtime_s for t in running.targets}["r-b"] == 470.0


def test_a_month_is_not_final_until_every_open_outage_in_it_has_settled(session: Session) -> None:
    """Twenty minutes into December an outage open since November 23:50 is not yet final:
    November is judged with it (cut at now minus its settle), not kept as closed."""
    config = parse_config(CONFIG)
    gpu = add(session, "gpu-c", "exact", NOV)
    watched(session, gpu, (NOV, DEC + 21 * MINUTE))
    down(session, gpu, DEC - 10 * MINUTE, None)
    now = DEC + 20 * MINUTE
    settle = settle_of(gpu, config.probes.retry_interval, config.schedule.heartbeats)
    found = totals(session, config, now, build_monthly(session, "2026-12", now, config))
    assert found["gpu-c"] == Totals(
        (30 * DAY + 20 * MINUTE).total_seconds(), (30 * MINUTE - settle).total_seconds()
    )


def test_closed_months_are_kept_and_rebuilt_one_at_a_time_once_aged(session: Session) -> None:
    config: Config = parse_config(CONFIG)
    gpu = gpu_a(session)
    closed = ClosedMonths(max_age=timedelta(hours=1))
    now = DEC + 2 * DAY
    months = ["2026-10", "2026-11"]
    first = closed.totals(session, config, months, now)
    assert (closed.builds, [f["gpu-a"].downtime_s for f in first]) == (2, [0.0, 1_260.0])
    assert closed.totals(session, config, months, now + timedelta(minutes=59)) == first
    assert closed.builds == 2
    # history imported for October after the fact: it shows once October's entry has aged
    down(session, gpu, OCT31 + 60 * MINUTE, OCT31 + 70 * MINUTE)
    later = now + timedelta(hours=2)
    closed.totals(session, config, months, later)
    assert closed.builds == 3  # one aged month rebuilt per call, the oldest first
    again = closed.totals(session, config, months, later)
    assert closed.builds == 4
    assert [f["gpu-a"].downtime_s for f in again] == [600.0, 1_260.0]
    # a reloaded config is judged afresh, and the old one's months are not kept beside it
    reloaded = parse_config(CONFIG)
    closed.totals(session, reloaded, months, later)
    closed.totals(session, config, months, later)
    assert closed.builds == 8


@pytest.mark.parametrize(
    ("first", "last", "months"),
    [
        pytest.param(OCT31, DEC, ["2026-10", "2026-11", "2026-12"], id="three"),
        pytest.param(DEC, DEC + DAY, ["2026-12"], id="one"),
        pytest.param(at("2026-12-31T23:00:00"), at("2027-01-01T00:00:00"), ["2026-12", "2027-01"],
                     id="over-new-year"),
        pytest.param(DEC, NOV, [], id="backwards"),
    ],
)  # fmt: skip
def test_the_months_between_two_instants(
    first: datetime, last: datetime, months: list[str]
) -> None:
    assert months_between(first, last) == months


def life(*outages: tuple[str, Span, bool]) -> TargetInput:
    return TargetInput(
        name="t", provider="aws", region=None, zone=None, pool=None, sla=None, gpus=0,
        hourly_price=0.0, lifetime=Span(DEC, DEC + DAY), observed=(Span(DEC, DEC + DAY),),
        outages=outages, maintenance=(), causes=tuple(f"c{k}" for k in range(len(outages))),
    )  # fmt: skip


CUT = DEC + 12 * timedelta(hours=1)


@pytest.mark.parametrize(
    ("outage", "kept"),
    [
        pytest.param(("reachable", Span(DEC, CUT + MINUTE), True),
                     ("reachable", Span(DEC, CUT), True), id="open-cut"),
        pytest.param(("reachable", Span(DEC, CUT + MINUTE), False), None, id="closed-kept"),
        pytest.param(("usable", Span(DEC, CUT + MINUTE), True), None, id="usable-kept"),
        pytest.param(("reachable", Span(DEC, CUT - MINUTE), True), None, id="before-the-cut"),
        pytest.param(("reachable", Span(CUT, CUT + MINUTE), True), "gone", id="begun-at-the-cut"),
    ],
)  # fmt: skip
def test_an_open_reachable_outage_is_cut_and_the_rest_kept(
    outage: tuple[str, Span, bool], kept: tuple[str, Span, bool] | str | None
) -> None:
    closed = ("reachable", Span(DEC, DEC + MINUTE), False)
    cut = cut_open_outages(life(closed, outage), CUT)
    if kept == "gone":
        assert (cut.outages, cut.causes) == ((closed,), ("c0",))
    else:
        assert (cut.outages, cut.causes) == ((closed, kept or outage), ("c0", "c1"))
