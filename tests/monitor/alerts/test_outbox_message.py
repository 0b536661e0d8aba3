"""The outbox keeps the whole message (``AlertMessage.to_json`` / ``from_json``): its link and
every detail, numbers included, through the database's JSON column on SQLite and PostgreSQL;
rows an older slamon queued before an upgrade still load and are sent; a row that is not a
message fails alone, with a clear error."""

from __future__ import annotations

import json
import math
from datetime import UTC, datetime, timedelta, timezone
from typing import Any

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy import select
from sqlalchemy.orm import Session, sessionmaker

from monitor.alerts.channels.model import AlertMessage
from monitor.alerts.delivery import deliver_due, message_of
from monitor.alerts.engine import apply
from monitor.alerts.rules import Signal, fingerprint
from monitor.config import parse_config
from monitor.db.models import Alert, Channel, Delivery
from tests.support import WebhookReceiver

NOW = datetime(2026, 12, 4, 3, 0, tzinfo=UTC)
PUBLIC = "https://slamon.example.com/ops"

# Text a database's JSON column can hold: PostgreSQL's jsonb refuses NUL (so do its text
# columns, where the same alert's summary is kept).
TEXT = st.text(st.characters(exclude_characters="\x00"), max_size=40)
ZONES = st.sampled_from(
    [UTC, timezone(timedelta(hours=5, minutes=30)), timezone(-timedelta(hours=8))]
)
MOMENTS = st.builds(
    lambda at, zone: at.replace(tzinfo=UTC).astimezone(zone),
    st.datetimes(datetime(2000, 1, 1), datetime(2100, 1, 1)),
    ZONES,
)
SCALARS = st.one_of(
    TEXT,
    st.integers(-(2**53), 2**53),
    st.floats(allow_nan=False),  # NaN is never equal to itself: it has a test of its own
    st.booleans(),
    st.none(),
)


@st.composite
def messages(draw: st.DrawFn) -> AlertMessage:
    started = draw(MOMENTS)
    resolved = draw(st.one_of(st.none(), MOMENTS))
    return AlertMessage(
        fingerprint=draw(TEXT.filter(bool)),
        rule=draw(TEXT),
        severity=draw(st.sampled_from(["critical", "warning", "info"])),
        labels=draw(st.dictionaries(TEXT, TEXT, max_size=5)),
        summary=draw(TEXT),
        started_at=started,
        resolved_at=resolved,
        event="firing" if resolved is None else "resolved",
        url=draw(st.one_of(st.none(), TEXT)),
        extra=draw(st.dictionaries(TEXT, SCALARS, max_size=6)),
    )


@given(messages())
def test_a_message_survives_to_json_and_back(message: AlertMessage) -> None:
    document = message.to_json()
    stored = json.loads(json.dumps(document, allow_nan=False))  # strict JSON, as a column keeps

    assert AlertMessage.from_json(stored) == message


@settings(max_examples=40, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(message=messages())
def test_a_message_survives_the_outbox_row(session: Session, message: AlertMessage) -> None:
    alert_id, channel_id = _alert_and_channel(session)
    row = Delivery(
        alert_id=alert_id,
        channel_id=channel_id,
        event=message.event,
        payload=message.to_json(),
        idempotency_key=f"k-{id(message)}-{len(session.new)}",
        next_attempt_at=NOW,
        created_at=NOW,
    )
    session.add(row)
    session.flush()
    session.expire(row)  # read the payload back from the database, not from memory

    assert message_of(dict(row.payload)) == message
    session.delete(row)
    session.flush()


@pytest.mark.parametrize(
    ("value", "stored"),
    [
        pytest.param(math.inf, {"non_finite": "inf"}, id="inf"),
        pytest.param(-math.inf, {"non_finite": "-inf"}, id="minus-inf"),
        pytest.param(math.nan, {"non_finite": "nan"}, id="nan"),
    ],
)
def test_a_non_finite_burn_rate_is_stored_as_strict_json_and_read_back(
    value: float, stored: dict[str, str]
) -> None:
    message = AlertMessage("fp", "sla_burn", "critical", {}, "burning", NOW, extra={"1h": value})

    document = message.to_json()
    json.dumps(document, allow_nan=False)  # raises if anything non-finite were left
    back = AlertMessage.from_json(document).extra["1h"]

    assert document["extra"]["1h"] == stored
    assert isinstance(back, float)
    assert (math.isnan(back) and math.isnan(value)) or back == value


# What slamon before the outbox kept the whole message wrote: no url, string extras only.
OLD_ROW: dict[str, Any] = {
    "fingerprint": "c0ffee" * 5,
    "rule": "target_down",
    "severity": "critical",
    "labels": {"target": "gpu-0", "provider": "aws"},
    "summary": "gpu-0 is down",
    "started_at": "2026-12-04T02:55:00+00:00",
    "resolved_at": None,
    "event": "firing",
    "extra": {"incident": "abc"},
}


def test_a_row_queued_by_an_older_slamon_loads_with_no_link() -> None:
    message = AlertMessage.from_json(OLD_ROW)

    assert message.url is None
    assert message.extra == {"incident": "abc"}
    assert message.started_at == datetime(2026, 12, 4, 2, 55, tzinfo=UTC)
    assert message.labels == {"target": "gpu-0", "provider": "aws"}


def test_a_row_without_extra_at_all_loads_too() -> None:
    row = {k: v for k, v in OLD_ROW.items() if k != "extra"}

    assert AlertMessage.from_json(row).extra == {}


@pytest.mark.parametrize(
    ("changes", "problem"),
    [
        pytest.param(
            {"started_at": "yesterday"}, "started_at .yesterday. is not an ISO 8601", id="bad-time"
        ),
        pytest.param(
            {"started_at": "2026-12-01T10:00:00"}, "has no UTC offset", id="time-without-offset"
        ),
        pytest.param({"started_at": None}, "started_at must be an ISO 8601", id="no-start"),
        pytest.param({"labels": ["gpu-0"]}, "labels must be an object", id="labels-list"),
        pytest.param({"fingerprint": 7}, "fingerprint must be a string", id="number-key"),
        pytest.param({"url": 3}, "url must be a string or null", id="number-url"),
        pytest.param({"extra": {"x": [1]}}, "extra 'x' is not a JSON scalar", id="list-extra"),
        pytest.param({"severity": "page"}, "severity must be one of", id="unknown-severity"),
    ],
)
def test_a_malformed_row_is_refused_naming_what_is_wrong(
    changes: dict[str, Any], problem: str
) -> None:
    with pytest.raises(ValueError, match=problem):
        AlertMessage.from_json({**OLD_ROW, **changes})


def _alert_and_channel(session: Session) -> tuple[int, int]:
    alert = session.scalars(select(Alert).where(Alert.fingerprint == "outbox")).one_or_none()
    channel = session.scalars(select(Channel).where(Channel.name == "ops")).one_or_none()
    if alert is None:
        alert = Alert(
            fingerprint="outbox",
            rule="target_down",
            severity="critical",
            labels={},
            summary="",
            state="firing",
            started_at=NOW,
        )
        session.add(alert)
    if channel is None:
        channel = Channel(name="ops", kind="webhook", enabled=True)
        session.add(channel)
    session.flush()
    return alert.id, channel.id


# --------------------------------------------------------------------------- queued and sent


def _config(receiver: WebhookReceiver) -> Any:
    return parse_config(
        f"channels: [{{name: ops, kind: webhook, url: '{receiver.url}'}}]\n"
        "routes: [{match: {}, channels: [ops]}]\n"
    )


def _burn(at: datetime) -> Signal:
    labels = {"target": "gpu 0/a", "provider": "aws", "sla": "p"}
    extra: dict[str, object] = {"1h": 15.25, "5m": math.inf, "samples": 12, "note": "x"}
    fp = fingerprint("sla_burn", {"target": "gpu 0/a"})
    return Signal("sla_burn", fp, "critical", labels, "burning", True, at, extra)


def _sent(receiver: WebhookReceiver) -> list[dict[str, Any]]:
    return [json.loads(body) for _, body in receiver.requests]


def test_a_queued_alert_reaches_the_webhook_with_its_link_and_numeric_details(
    sessions: sessionmaker[Session],
) -> None:
    receiver = WebhookReceiver()
    config = _config(receiver)
    try:
        with sessions() as session, session.begin():
            apply(session, [_burn(NOW)], config, NOW, public_url=PUBLIC)
        with httpx.Client(timeout=5) as client:
            run = deliver_due(sessions, client, config, "test", clock=lambda: NOW)
    finally:
        receiver.close()

    assert run.delivered == 1
    [body] = _sent(receiver)
    assert body["alert"]["url"] == "https://slamon.example.com/ops/targets/gpu%200%2Fa"
    assert body["alert"]["extra"] == {"1h": 15.25, "5m": "inf", "samples": 12, "note": "x"}


def test_without_the_public_url_the_webhook_says_url_null(sessions: sessionmaker[Session]) -> None:
    receiver = WebhookReceiver()
    config = _config(receiver)
    try:
        with sessions() as session, session.begin():
            apply(session, [_burn(NOW)], config, NOW)
        with httpx.Client(timeout=5) as client:
            deliver_due(sessions, client, config, "test", clock=lambda: NOW)
    finally:
        receiver.close()

    [body] = _sent(receiver)
    assert body["alert"]["url"] is None
    assert body["alert"]["extra"]["1h"] == 15.25


def test_rows_queued_before_an_upgrade_are_still_sent_and_a_foreign_row_fails_alone(
    sessions: sessionmaker[Session],
) -> None:
    receiver = WebhookReceiver()
    config = _config(receiver)
    with sessions() as session, session.begin():
        alert_id, channel_id = _alert_and_channel(session)
        for key, payload in (("old", OLD_ROW), ("foreign", {"hello": "world"})):
            session.add(
                Delivery(
                    alert_id=alert_id,
                    channel_id=channel_id,
                    event="firing",
                    payload=payload,
                    idempotency_key=key,
                    next_attempt_at=NOW,
                    created_at=NOW,
                )
            )
    try:
        with httpx.Client(timeout=5) as client:
            run = deliver_due(sessions, client, config, "test", clock=lambda: NOW)
    finally:
        receiver.close()

    with sessions() as session:
        rows = {d.idempotency_key: d for d in session.scalars(select(Delivery))}
    assert (run.delivered, run.failed) == (1, 1)
    [body] = _sent(receiver)
    assert body["alert"]["fingerprint"] == OLD_ROW["fingerprint"]
    assert body["alert"]["url"] is None
    assert rows["old"].status == "delivered"
    assert rows["foreign"].status == "failed"
    assert "not an alert message" in (rows["foreign"].last_error or "")
    assert "fingerprint must be a string" in (rows["foreign"].last_error or "")
