"""Failed authentication limited per address and token prefix (monitor/api/throttle.py): the
pure window, then through the real app: a stale heartbeat token is refused with 429 and
Retry-After, while valid tokens from the same address keep working."""

from __future__ import annotations

from typing import Any

import pytest
from sqlalchemy import select
from sqlalchemy.orm import Session, sessionmaker

from monitor import tokens
from monitor.api.throttle import AuthThrottle, keys_for
from monitor.db.models import Heartbeat, Target
from tests.support import ApiClient


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_a_key_is_refused_after_limit_failures_until_the_oldest_leaves_the_window() -> None:
    clock = Clock()
    throttle = AuthThrottle(limit=3, window_s=60.0, clock=clock)
    keys = keys_for("10.0.0.1", "slm_guess-1")
    for _ in range(2):
        throttle.failed(keys)
        clock.now += 10
    assert throttle.retry_after(keys) is None  # two failures: still allowed
    throttle.failed(keys)  # the third, at t = 1020
    assert throttle.retry_after(keys) == 40  # the first (t = 1000) leaves at 1060
    clock.now = 1059.5
    assert throttle.retry_after(keys) == 1
    clock.now = 1060.0
    assert throttle.retry_after(keys) is None
    assert throttle.retry_after(keys_for("10.0.0.2", "slm_other")) is None  # others unaffected


def test_the_token_prefix_is_one_key_whatever_the_address() -> None:
    throttle = AuthThrottle(limit=2, clock=Clock())
    throttle.failed(keys_for("10.0.0.1", "slmhb_stale-token-abc"))
    throttle.failed(keys_for("10.0.0.2", "slmhb_stale-token-xyz"))  # same first 12 characters
    assert throttle.retry_after(["token:slmhb_stale-"]) is not None
    assert throttle.retry_after(keys_for("10.0.0.3", None)) is None


def test_memory_stays_bounded_under_a_spray_of_addresses(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("monitor.api.throttle.MAX_KEYS", 100)
    throttle = AuthThrottle(clock=Clock())
    for n in range(1000):
        throttle.failed(keys_for(f"10.0.{n // 250}.{n % 250}", None))
    assert len(throttle.failures) == 100


@pytest.fixture
def app_api(
    api: ApiClient, admin: dict[str, str], sessions: sessionmaker[Session]
) -> tuple[ApiClient, dict[str, str]]:
    """The real app (conftest's), a heartbeat target ``job`` and tokens: its own, an admin one."""
    with sessions() as session:
        job = Target(name="job", kind="heartbeat")
        session.add(job)
        session.flush()
        heartbeat = tokens.create_heartbeat_token(session, job)
        session.commit()
    return api, {"job": heartbeat, "admin": admin["Authorization"].removeprefix("Bearer ")}


def push(api: ApiClient, token: str) -> Any:
    return api.post("/api/v1/heartbeats/job", headers={"Authorization": f"Bearer {token}"})


def test_a_stale_token_is_refused_with_429_but_valid_heartbeats_keep_landing(
    app_api: tuple[ApiClient, dict[str, str]], sessions: sessionmaker[Session]
) -> None:
    api, valid = app_api
    stale = "slmhb_" + "x" * 43  # a job still sending last week's token, in a crash loop
    answers = [push(api, stale).status_code for _ in range(25)]
    assert answers[:20] == [401] * 20
    assert set(answers[20:]) == {429}
    refused = push(api, stale)
    assert 1 <= int(refused.headers["Retry-After"]) <= 60
    assert "too many failed authentications" in refused.json()["error"]["message"]
    # the same address, the right token: never slowed
    assert [push(api, valid["job"]).status_code for _ in range(30)] == [202] * 30
    assert (
        api.get(
            "/api/v1/targets", headers={"Authorization": f"Bearer {valid['admin']}"}
        ).status_code
        == 200
    )
    with sessions() as session:
        beats = session.scalars(select(Heartbeat).join(Target).where(Target.name == "job"))
        assert len(list(beats)) == 30


def test_an_address_spraying_guesses_gets_429_on_the_read_api(
    app_api: tuple[ApiClient, dict[str, str]],
) -> None:
    api, valid = app_api
    codes = [
        api.get(
            "/api/v1/targets", headers={"Authorization": f"Bearer slm_guess{n:04d}"}
        ).status_code
        for n in range(22)
    ]
    assert codes[:20] == [401] * 20  # every guess a new prefix: the address key counts them
    assert codes[20:] == [429, 429]
    ok = api.get("/api/v1/targets", headers={"Authorization": f"Bearer {valid['admin']}"})
    assert ok.status_code == 200
