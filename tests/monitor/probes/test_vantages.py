"""Vantages told apart: one that disagrees with the quorum on (nearly) every target for long
enough is blind; the evaluator stores the verdict and fires ``vantage_blind`` once."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import select
from sqlalchemy.orm import Session

from monitor.alerts.service import evaluate
from monitor.config import parse_config
from monitor.db.models import Alert, Delivery, Target, TargetState
from monitor.probes.vantages import (
    BlindRule,
    Opinion,
    VantageHealth,
    judge,
    refresh,
    vantage_health,
)
from monitor.targets import sync_config_targets

NOW = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)
RULE = BlindRule(share=0.9, after=timedelta(minutes=3))


def opinions(vantage: str, states: str, quorum: str) -> list[Opinion]:
    """``states``/``quorum``: one letter per target, u(p) d(own) ?(unknown)."""
    word = {"u": "up", "d": "down", "?": "unknown"}
    return [
        Opinion(vantage, i, word[mine], word[theirs], NOW)
        for i, (mine, theirs) in enumerate(zip(states, quorum, strict=True))
    ]


@pytest.mark.parametrize(
    ("states", "quorum", "since", "blind_since", "disagreeing"),
    [
        pytest.param("uuuu", "uuuu", None, None, 0, id="agreeing on every target"),
        pytest.param("dddd", "uuuu", None, None, 4, id="disagreeing on all, just started"),
        pytest.param("dddd", "uuuu", 4, NOW - timedelta(minutes=4), 4, id="all, for 4 minutes"),
        pytest.param("dddu", "uuuu", 4, None, 3, id="3 of 4 is below the share"),
        pytest.param(
            "?????????d",
            "uuuuuuuuuu",
            4,
            NOW - timedelta(minutes=4),
            10,
            id="unknown where the quorum knows is disagreeing",
        ),
        pytest.param("dddd", "????", 4, None, 0, id="nothing to compare with"),
    ],
)
def test_a_vantage_is_blind_when_it_disagrees_on_nearly_everything_for_long_enough(
    states: str, quorum: str, since: int | None, blind_since: datetime | None, disagreeing: int
) -> None:
    started = {"b": NOW - timedelta(minutes=since)} if since else {}
    health, _ = judge(opinions("b", states, quorum), {}, started, NOW, RULE)
    assert (health["b"].blind_since, health["b"].disagreeing) == (blind_since, disagreeing)


def test_agreement_time_is_kept_while_it_disagrees_and_silence_is_not_blindness() -> None:
    first, since = judge(opinions("b", "uu", "uu"), {}, {}, NOW, RULE)
    assert first["b"].last_agreed_at == NOW
    later = NOW + timedelta(minutes=5)
    second, since = judge(opinions("b", "dd", "uu"), first, since, later, RULE)
    assert (second["b"].last_agreed_at, second["b"].blind_since) == (NOW, None)
    third, since = judge(
        opinions("b", "dd", "uu"), second, since, later + timedelta(minutes=3), RULE
    )
    assert third["b"].blind_since == later
    silent, _ = judge([], third, since, later + timedelta(minutes=9), RULE)
    assert silent["b"] == VantageHealth("b", NOW, 0, 0, NOW, None)


CONFIG = """
channels: [{name: ops, kind: webhook, url: 'http://127.0.0.1:9/hook', secret: s}]
alerts: {vantage_blind_after: 60s}
targets:
  - {name: a, kind: http, url: 'http://127.0.0.1:9/a', interval: 5}
  - {name: b, kind: http, url: 'http://127.0.0.1:9/b', interval: 5}
"""


def states(session: Session, vantage: str, state: str, at: datetime) -> None:
    for target_id in session.scalars(select(Target.id)):
        session.merge(
            TargetState(
                target_id=target_id,
                vantage=vantage,
                series="reachable",
                state=state,
                since=at,
                last_probe_at=at,
            )
        )
    session.flush()


def test_a_blind_vantage_fires_once_and_resolves_when_it_sees_again(session: Session) -> None:
    config = parse_config(CONFIG)
    sync_config_targets(session, config, NOW)
    for second in range(0, 121, 5):  # east and the quorum see up; west sees every target down
        at = NOW + timedelta(seconds=second)
        states(session, "*", "up", at)
        states(session, "east", "up", at)
        states(session, "west", "down", at)
        refresh(session, at, config.alerts.blind_rule)  # the vantage task, then the alert sweep
        evaluate(session, config, at)
    views = {v.vantage: v for v in vantage_health(session)}
    assert views["east"].blind_since is None
    assert views["west"].blind_since == NOW
    assert (views["west"].disagreeing, views["west"].targets) == (2, 2)
    assert views["west"].last_agreed_at is None

    back = NOW + timedelta(seconds=125)
    states(session, "*", "up", back)
    states(session, "east", "up", back)
    states(session, "west", "up", back)
    refresh(session, back, config.alerts.blind_rule)
    evaluate(session, config, back)
    [alert] = session.scalars(select(Alert).where(Alert.rule == "vantage_blind"))
    sent = list(session.scalars(select(Delivery.event).where(Delivery.alert_id == alert.id)))
    assert (alert.labels, alert.state, sent) == (
        {"vantage": "west"},
        "resolved",
        ["firing", "resolved"],
    )
    assert {v.vantage: v.last_agreed_at for v in vantage_health(session)}["west"] == back
