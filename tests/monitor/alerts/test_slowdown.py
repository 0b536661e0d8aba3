"""``training_slowdown``: throughput below 70 % of its own trailing median for 5 minutes, with a
minimum-sample guard; fired and resolved through the periodic evaluation."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from sqlalchemy import select
from sqlalchemy.orm import Session

from monitor.alerts.service import evaluate
from monitor.config import parse_config
from monitor.config.models import TargetConfig
from monitor.db.models import Alert, Delivery, Heartbeat
from monitor.sla.slowdown import SlowdownRule, judge_slowdown
from monitor.targets import upsert_target

T0 = datetime(2026, 12, 3, 8, 0, tzinfo=UTC)
RULE = SlowdownRule(share=0.7, after=timedelta(minutes=5), trailing=timedelta(hours=1))


def at(minutes: float) -> datetime:
    return T0 + timedelta(minutes=minutes)


def series(rates: list[float], every_min: float = 1.0) -> list[tuple[datetime, float]]:
    return [(at(i * every_min), rate) for i, rate in enumerate(rates)]


def test_a_drop_held_for_five_minutes_is_slow_from_its_first_slow_sample() -> None:
    samples = series([1000.0] * 30 + [500.0] * 6)  # minutes 0-29 normal, 30-35 at half speed
    verdict = judge_slowdown(samples, at(35), RULE)
    assert (verdict.slow, verdict.since, verdict.baseline, verdict.latest) == (
        True,
        at(30),
        1000.0,
        500.0,
    )


def test_a_drop_shorter_than_five_minutes_is_not_yet_slow() -> None:
    samples = series([1000.0] * 30 + [500.0] * 5)  # slow from 30 to 34: four minutes
    assert judge_slowdown(samples, at(34), RULE).slow is False


def test_a_dip_to_just_above_the_line_is_not_slow() -> None:
    samples = series([1000.0] * 30 + [701.0] * 10)
    verdict = judge_slowdown(samples, at(39), RULE)
    assert (verdict.slow, verdict.judged) == (False, True)


def test_one_sample_back_above_the_line_ends_it() -> None:
    samples = series([1000.0] * 30 + [400.0] * 8 + [950.0])  # slow 30-37, back at 38
    assert judge_slowdown(samples, at(37), RULE).slow is True
    assert judge_slowdown(samples, at(37.5), RULE).since == at(30)  # the recovery not yet in
    assert judge_slowdown(samples, at(38), RULE).slow is False


def test_too_few_samples_say_nothing_either_way() -> None:
    samples = series([1000.0] * 5 + [100.0] * 10)
    verdict = judge_slowdown(samples, at(10), RULE)  # six samples up to the cut; ten needed
    assert (verdict.slow, verdict.judged) == (False, False)
    assert judge_slowdown([], at(0), RULE).judged is False


def test_a_noisy_but_steady_job_is_judged_by_its_median_not_its_mean() -> None:
    noisy = [1000.0, 1100.0, 900.0, 50.0, 1050.0] * 6  # occasional near-zero samples (eval)
    samples = series([*noisy, *[760.0] * 10])
    assert judge_slowdown(samples, at(39), RULE).slow is False  # 76 % of the median 1,000


def test_the_evaluation_fires_and_resolves_training_slowdown(session: Session) -> None:
    config = parse_config(
        "channels: [{name: ops, kind: webhook, url: 'http://127.0.0.1:9/hook', secret: s}]\n"
    )
    row = upsert_target(
        session, TargetConfig(name="llm-run-7", kind="heartbeat", interval=60), "api"
    )
    session.flush()
    rates = [1000.0] * 30 + [400.0] * 8 + [990.0] * 3
    for i, rate in enumerate(rates):
        session.add(
            Heartbeat(
                target_id=row.id, at=at(i), step=i, throughput=rate, payload={"unit": "tokens"}
            )
        )
    session.flush()
    evaluate(session, config, at(37))
    [alert] = session.scalars(select(Alert).where(Alert.rule == "training_slowdown"))
    assert (alert.state, alert.started_at) == ("firing", at(30))
    assert "40 % of its usual throughput (400.0 tokens/s against a median of 1,000.0" in (
        alert.summary
    )
    evaluate(session, config, at(39))
    session.refresh(alert)
    events = session.scalars(select(Delivery.event).where(Delivery.alert_id == alert.id))
    assert (alert.state, sorted(events)) == ("resolved", ["firing", "resolved"])
