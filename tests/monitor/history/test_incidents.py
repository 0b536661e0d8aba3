"""monitor/history/incidents.py: provider incidents in a period, open now, and those an alert
speaks for, on SQLite and PostgreSQL."""

from __future__ import annotations

from datetime import timedelta

from sqlalchemy.orm import Session

from monitor.history.incidents import (
    open_by_provider,
    open_counts,
    open_of,
    relevant_in,
    started_in,
    to_alert_on,
)
from monitor.sla.intervals import Span
from tests.monitor.history.conftest import DEC, NOV, incident, provider

MONTH = Span(NOV, DEC)
MID = NOV + timedelta(days=15)


def _seed(session: Session) -> None:
    aws, gcp = provider(session, "aws"), provider(session, "gcp")
    provider(session, "quiet")
    incident(session, aws, "before", NOV - timedelta(days=2), NOV - timedelta(days=1))
    incident(session, aws, "across", NOV - timedelta(hours=1), NOV + timedelta(hours=1))
    incident(session, aws, "open", MID, None, regions=["us-east-1"])
    incident(session, aws, "irrelevant", MID, None, relevant=False)
    incident(session, aws, "planned", MID, None, is_maintenance=True)
    incident(session, gcp, "closed", MID, MID + timedelta(hours=2))
    incident(session, gcp, "undated", None, None)


def test_relevant_in_a_period_overlap_it_and_leave_out_maintenance(session: Session) -> None:
    _seed(session)
    assert [i.source_id for i in relevant_in(session, MONTH)] == ["across", "open", "closed"]


def test_started_in_counts_irrelevant_ones_for_response_statistics(session: Session) -> None:
    _seed(session)
    found = {(i.provider, i.source_id) for i in started_in(session, MONTH)}
    assert found == {("aws", "open"), ("aws", "irrelevant"), ("gcp", "closed")}


def test_open_ones_per_provider_count_zero_for_a_quiet_provider(session: Session) -> None:
    _seed(session)
    assert open_counts(session) == {"aws": 1, "gcp": 1, "quiet": 0}  # gcp: the undated one
    by_provider = open_by_provider(session)
    assert sorted(i.source_id for i in by_provider["aws"]) == ["open", "planned"]
    assert by_provider["quiet"] == []
    assert [i.regions for i in open_of(session, "aws")] == [("us-east-1",)]


def test_alerts_see_open_recent_and_still_firing_incidents(session: Session) -> None:
    _seed(session)
    now = MID + timedelta(hours=3)
    recent = {i.source_id for i in to_alert_on(session, now, timedelta(days=1), set())}
    assert recent == {"open", "closed", "undated"}
    firing = {i.source_id for i in to_alert_on(session, now, timedelta(days=1), {"before"})}
    assert firing == recent | {"before"}
