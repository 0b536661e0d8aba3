"""The quorum (monitor/probes/quorum.py): one vantage alone opens no outage; vantages that
agree do, and the outage names them."""

from __future__ import annotations

from datetime import timedelta

from sqlalchemy.orm import Session, sessionmaker

from monitor.db.base import utcnow
from monitor.db.models import TargetState
from monitor.probes.model import ProbeResult as Result
from monitor.probes.record import record_round
from monitor.probes.round import Prober
from tests.monitor.probes.test_round import FAST, add_target, outages
from tests.support import FeedServer


def test_a_single_failing_vantage_opens_no_outage_but_a_quorum_does(
    sessions: sessionmaker[Session], server: FeedServer
) -> None:
    tid = add_target(sessions, name="q", kind="http", url=f"{server.url}/healthz")
    for vantage in ("eu", "us", "ap"):
        Prober(sessions, vantage, FAST).round([tid])
    # vantage "ap" loses its network path: its probes fail while the others see the target up
    now = utcnow()
    with sessions() as session, session.begin():
        for i in range(3):
            failed = Result(tid, "q", now + timedelta(seconds=i), False, error_kind="connect")
            record_round(session, "ap", [failed], now=now + timedelta(seconds=i))
    assert outages(sessions, tid) == []
    with sessions() as session:
        ap = session.get_one(TargetState, (tid, "ap", "reachable"))
        overall = session.get_one(TargetState, (tid, "*", "reachable"))
    assert (ap.state, overall.state) == ("down", "up")

    server.routes["/healthz"] = (503, b"")
    Prober(sessions, "eu", FAST).round([tid])
    [outage] = outages(sessions, tid)
    assert outage.detail["vantages"] == ["ap", "eu"]
