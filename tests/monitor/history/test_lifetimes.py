"""monitor/history/lifetimes.py: when targets existed (registration, imported history,
retirement), on SQLite and PostgreSQL."""

from __future__ import annotations

from datetime import timedelta

from sqlalchemy.orm import Session

from monitor.history.lifetimes import alive_in, starts
from monitor.sla.intervals import Span
from tests.monitor.history.conftest import DEC, NOV, observed, target

MONTH = Span(NOV, DEC)
MID = NOV + timedelta(days=15)


def test_lifetime_starts_are_registration_or_the_earliest_observed_window(
    session: Session,
) -> None:
    imported = target(session, "imported", created=DEC)
    observed(session, imported, NOV - timedelta(days=3), NOV)
    observed(session, imported, NOV, DEC)
    probed = target(session, "probed", created=NOV)
    observed(session, probed, NOV + timedelta(days=1), DEC)
    bare = target(session, "bare", created=NOV + timedelta(days=2))
    assert starts(session, [imported.id, probed.id, bare.id]) == {
        imported.id: NOV - timedelta(days=3),
        probed.id: NOV,
        bare.id: NOV + timedelta(days=2),
    }


def test_born_and_retired_mid_month_live_only_their_part(session: Session) -> None:
    born = target(session, "born", created=MID)
    retired = target(session, "retired", retired=MID)
    whole = target(session, "whole")
    found = {a.target.id: a.lifetime for a in alive_in(session, MONTH)}
    assert found == {born.id: Span(MID, DEC), retired.id: Span(NOV, MID), whole.id: MONTH}


def test_alive_in_leaves_out_those_retired_before_or_born_after(session: Session) -> None:
    target(session, "gone", retired=NOV - timedelta(days=1))
    target(session, "later", created=DEC + timedelta(days=1))
    kept = target(session, "kept", retired=NOV + timedelta(days=1))
    imported = target(session, "imported", created=DEC + timedelta(days=2))
    observed(session, imported, MID, DEC)  # history imported for the month counts as its life
    found = {a.target.name: a.lifetime for a in alive_in(session, MONTH)}
    assert found == {"imported": Span(MID, DEC), "kept": Span(NOV, NOV + timedelta(days=1))}
    assert kept.name in found
