"""Polling an account event source on the real databases, through the aws_health kind against a
local server of the Health API's JSON protocol: the checkpoint advances only after a clean poll,
a failed poll stores nothing and is recorded on the source, and a source is due on its own
``every``."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session, sessionmaker

from monitor.config import parse_config
from monitor.config.models import Config
from monitor.db.models import AccountEventRecord, AccountSource
from monitor.fleet.account_poll import due_sources, poll
from tests.monitor.account.fake_aws import aws_server, json_error
from tests.monitor.account.test_aws_health import HealthApi, epoch

T0 = datetime(2026, 12, 6, 12, tzinfo=UTC)


def config(url: str, every: str = "5m") -> Config:
    return parse_config(
        "account_events:\n"
        f"  - {{name: health, kind: aws_health, endpoint_url: '{url}', every: {every},"
        " timeout: 2s}\n"
    )


def source_state(sessions: sessionmaker[Session]) -> AccountSource:
    with sessions() as session:
        state = session.get(AccountSource, "health")
        assert state is not None
        return state


def stored_keys(sessions: sessionmaker[Session]) -> list[str]:
    with sessions() as session:
        return sorted(session.scalars(select(AccountEventRecord.key)))


class FailingOnce:
    """The Health API refusing once (a permission not yet granted), then answering as ``api``."""

    def __init__(self, api: HealthApi) -> None:
        self.api, self.failed = api, False

    def __call__(self, operation: str, params: dict[str, Any]) -> tuple[int, object]:
        if not self.failed:
            self.failed = True
            return 403, json_error("AccessDeniedException", "not authorized: health:DescribeEvents")
        return self.api(operation, params)


def test_a_clean_poll_stores_its_events_and_advances_the_checkpoint(
    sessions: sessionmaker[Session],
) -> None:
    api = HealthApi(3)
    with aws_server(api) as server:
        [source] = config(server.url).account_events
        outcome = poll(sessions, source, T0)
        assert outcome.ok
        assert outcome.counts() == {"new": 3}
        newest = T0 + timedelta(minutes=7)
        api.events[1]["lastUpdatedTime"] = epoch(newest)
        api.events[1]["statusCode"] = "open"
        second = poll(sessions, source, T0 + timedelta(minutes=10))
    assert second.counts() == {"unchanged": 2, "updated": 1}
    state = source_state(sessions)
    assert state.checkpoint == newest
    assert (state.events, state.consecutive_failures, state.last_error) == (3, 0, None)
    assert len(stored_keys(sessions)) == 3
    # the second poll asked from the first's checkpoint (the events' own update time)
    asked = [p["filter"] for op, p in server.calls if op == "DescribeEvents"]
    assert "lastUpdatedTimes" not in asked[0]
    assert asked[-1]["lastUpdatedTimes"] == [{"from": epoch(datetime(2026, 12, 4, 12, tzinfo=UTC))}]


def test_a_failed_poll_stores_nothing_keeps_the_checkpoint_and_says_why(
    sessions: sessionmaker[Session],
) -> None:
    with aws_server(FailingOnce(HealthApi(2))) as server:
        [source] = config(server.url).account_events
        failed = poll(sessions, source, T0)
        assert not failed.ok
        assert "AccessDeniedException" in (failed.error or "")
        state = source_state(sessions)
        assert (state.checkpoint, state.consecutive_failures) == (None, 1)
        assert "AccessDeniedException" in (state.last_error or "")
        assert stored_keys(sessions) == []
        recovered = poll(sessions, source, T0 + timedelta(minutes=5))
    assert recovered.ok
    assert recovered.counts() == {"new": 2}
    state = source_state(sessions)
    assert (state.consecutive_failures, state.last_error) == (0, None)
    assert state.last_success_at == T0 + timedelta(minutes=5)


def test_a_closed_port_is_a_failed_poll_not_a_crash(sessions: sessionmaker[Session]) -> None:
    with aws_server(HealthApi(1)) as server:
        url = server.url
    [source] = config(url).account_events  # the server is gone: its port refuses
    outcome = poll(sessions, source, T0)
    assert not outcome.ok
    assert outcome.recorded == []
    assert source_state(sessions).consecutive_failures == 1


def test_a_source_is_due_on_its_own_every(sessions: sessionmaker[Session]) -> None:
    with aws_server(HealthApi(0)) as server:
        settings = config(server.url, every="10m")
        with sessions() as session:
            assert [s.name for s in due_sources(session, settings, T0)] == ["health"]
        poll(sessions, settings.account_events[0], T0)
    with sessions() as session:
        assert due_sources(session, settings, T0 + timedelta(minutes=9)) == []
        later = due_sources(session, settings, T0 + timedelta(minutes=10))
    assert [s.name for s in later] == ["health"]
