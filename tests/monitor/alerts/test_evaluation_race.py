"""The periodic evaluation and a push that fires an alert at the same moment, on PostgreSQL
(READ COMMITTED: each of the sweep's statements sees what was committed before it began); and
two evaluations that fire one new alert at once; and a recovery a round records while the
sweep reads a held-down target.

A push stores an account event and fires its alert in one transaction. A sweep that read the
account events just before that commit, and the firing alerts just after it, sees an alert no
signal of its own speaks for: it must leave it alone, not resolve it before it began (CI's
production scenario caught a ``provider_event`` resolved 0.1 s before it started).
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from sqlalchemy import Engine, event, func, select
from sqlalchemy.orm import sessionmaker

from monitor.account.model import AccountEvent
from monitor.alerts.engine import Applied, apply
from monitor.alerts.rules import Signal, TargetFacts, fingerprint, from_transition
from monitor.alerts.service import evaluate, on_account_events
from monitor.config import parse_config
from monitor.db.engine import make_engine
from monitor.db.migrate import upgrade
from monitor.db.models import Alert, Delivery, Target, TargetState
from monitor.fleet.account_store import record
from monitor.history.spans import REACHABLE
from monitor.targets import sync_config_targets
from tests.support import PG_TEST_DB, recreate_pg_database

pytestmark = pytest.mark.postgres

NOW = datetime(2026, 12, 6, 10, 0, tzinfo=UTC)
CONFIG = parse_config(
    """
targets:
  - {name: trainer-3, kind: http, url: 'http://127.0.0.1:9/', interval: 5, provider: aws,
     region: us-east-1, instance_id: i-0abc}
channels:
  - {name: chat, kind: webhook, url: 'http://127.0.0.1:9/chat'}
"""
)
ISSUE = AccountEvent(
    provider="aws",
    source="aws_health",
    key="arn:aws:health:us-east-1::event/EC2/AWS_EC2_OPERATIONAL_ISSUE/race",
    kind="issue",
    status="open",
    starts_at=NOW - timedelta(hours=1),
    updated_at=NOW,
    region="us-east-1",
    service="EC2",
    title="AWS_EC2_OPERATIONAL_ISSUE",
    entities=("i-0abc",),
)


@pytest.fixture
def engine() -> Iterator[Engine]:
    """A database of its own: the push and the sweep commit for real, on two connections."""
    engine = make_engine(recreate_pg_database(f"{PG_TEST_DB}_race"))
    upgrade(engine)
    yield engine
    engine.dispose()


@contextmanager
def hooked(engine: Engine, after_each_statement: Any) -> Iterator[None]:
    """``after_each_statement`` runs after each of the engine's statements, inside the block:
    what another transaction commits at that moment of the sweep."""
    event.listen(engine, "after_cursor_execute", after_each_statement)
    try:
        yield
    finally:
        event.remove(engine, "after_cursor_execute", after_each_statement)


def test_an_alert_a_push_fires_while_the_sweep_reads_is_left_firing(engine: Engine) -> None:
    sessions = sessionmaker(bind=engine, expire_on_commit=False)
    with sessions.begin() as session:
        sync_config_targets(session, CONFIG, NOW - timedelta(days=1))
    pushed: list[datetime] = []

    def push_after_the_events_are_read(
        connection: Any, cursor: Any, statement: str, *args: Any
    ) -> None:
        if pushed or "FROM account_events" not in statement:
            return
        at = NOW + timedelta(seconds=2)  # the push lands after the sweep's clock was read
        pushed.append(at)  # first: the push's own reads come through here too
        with sessions.begin() as other:
            record(other, [ISSUE], at, "push")
            on_account_events(other, CONFIG, at)

    with hooked(engine, push_after_the_events_are_read), sessions.begin() as sweep:
        evaluate(sweep, CONFIG, NOW + timedelta(seconds=1))
    assert pushed, "the sweep never read the account events"
    with sessions() as session:
        [alert] = session.scalars(select(Alert).where(Alert.rule == "provider_event"))
        assert (alert.state, alert.resolved_at) == ("firing", None)
        # the next sweep reads the event and keeps it firing; its close resolves it
        evaluate(session, CONFIG, NOW + timedelta(minutes=1))
        assert alert.state == "firing"
        closed = replace(ISSUE, status="closed", updated_at=NOW + timedelta(minutes=2))
        record(session, [closed], NOW + timedelta(minutes=2), "push")
        evaluate(session, CONFIG, NOW + timedelta(minutes=2))
        assert alert.state == "resolved"
        assert alert.resolved_at is not None
        assert alert.resolved_at >= alert.started_at


def test_two_transactions_firing_one_alert_at_once_store_it_once_and_tell_it_once(
    engine: Engine,
) -> None:
    # Two evaluations (the schedule's and one an account poll asked for) both read no alert
    # for a fingerprint; the second's insert waits for the first's commit, then collides on
    # the fingerprint. It takes the stored alert instead of failing its whole evaluation.
    sessions = sessionmaker(bind=engine, expire_on_commit=False)
    labels = {"target": "trainer-3", "month": "2026-12"}
    breach = Signal(
        "sla_breach", fingerprint("sla_breach", labels), "critical", labels, "breached", True, NOW
    )
    second: dict[str, Any] = {}

    def evaluate_beside() -> None:
        try:
            with sessions.begin() as other:
                second["applied"] = apply(other, [breach], CONFIG, NOW + timedelta(seconds=1))
        except Exception as error:  # the assertion below shows it
            second["error"] = error

    with sessions.begin() as first:
        assert apply(first, [breach], CONFIG, NOW) == Applied(1, 1)
        beside = threading.Thread(target=evaluate_beside)
        beside.start()
        beside.join(1.0)  # it reads no alert, then its insert waits on this uncommitted one
        assert beside.is_alive()
    beside.join(10.0)
    assert "error" not in second, second.get("error")
    assert second["applied"] == Applied(0, 0)  # the stored alert was just told
    with sessions() as session:
        [alert] = session.scalars(select(Alert).where(Alert.rule == "sla_breach"))
        assert alert.state == "firing"
        assert session.scalar(select(func.count()).select_from(Delivery)) == 1


def test_a_recovery_recorded_while_the_sweep_reads_a_held_down_target_is_not_paged_again(
    engine: Engine,
) -> None:
    # A discovered target down while its cloud lists it running: the sweep's held-down rule
    # keeps its target_down firing. A round records its recovery (and resolves the alert)
    # just after the sweep read it down: the sweep must not fire the alert again.
    sessions = sessionmaker(bind=engine, expire_on_commit=False)
    since = NOW - timedelta(minutes=5)
    with sessions.begin() as session:
        box = Target(name="disc-down", kind="http", url="http://127.0.0.1:9/", interval_s=5,
                     timeout_s=5, source="discovery", discovered_by="aws-fleet",
                     last_seen_at=NOW - timedelta(minutes=1), created_at=since)  # fmt: skip
        session.add(box)
        session.flush()
        session.add(TargetState(target_id=box.id, vantage="*", series=REACHABLE, state="down",
                                since=since))  # fmt: skip
        facts = TargetFacts(box.name, "http", None, None, None, None)
        apply(session, from_transition(facts, REACHABLE, "down", "up", since), CONFIG, since)
    recovered: list[datetime] = []

    def recover_after_the_states_are_read(
        connection: Any, cursor: Any, statement: str, *args: Any
    ) -> None:
        if recovered or "JOIN target_states" not in statement:
            return
        at = NOW + timedelta(seconds=1)
        recovered.append(at)
        with sessions.begin() as other:  # what the recovering round commits
            state = other.get(TargetState, (box.id, "*", REACHABLE))
            assert state is not None
            state.state, state.since = "up", at
            apply(other, from_transition(facts, REACHABLE, "up", "down", at), CONFIG, at)

    with hooked(engine, recover_after_the_states_are_read), sessions.begin() as sweep:
        evaluate(sweep, CONFIG, NOW + timedelta(seconds=2))
    assert recovered, "the sweep never read the held-down targets"
    with sessions() as session:
        [alert] = session.scalars(select(Alert).where(Alert.rule == "target_down"))
        assert (alert.state, alert.resolved_at) == ("resolved", NOW + timedelta(seconds=1))
        events = session.scalars(select(Delivery.event).order_by(Delivery.id)).all()
        assert events == ["firing", "resolved"]
