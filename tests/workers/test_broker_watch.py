"""The broker watch (workers/broker_watch.py): when it gives up, and the check it relies on
returning within its timeout from a broker that takes connections and never answers. The
processes exiting 75 are in tests/faults/test_broker_loss.py."""

from __future__ import annotations

import socket
import time
from collections.abc import Iterator

import pytest

from monitor.broker import check_broker
from monitor.errors import ServiceUnavailable
from monitor.events.words import broker_given_up_text
from monitor.settings import Settings
from workers.broker_watch import BrokerWatch, _why


class Broker:
    """What the watch's check sees: answers or not, as the test says."""

    def __init__(self) -> None:
        self.answers = True

    def check(self) -> None:
        if not self.answers:
            raise ServiceUnavailable("broker redis://cache:6379/0 unreachable: Connection refused")


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def watch(broker: Broker, clock: Clock, calls: list[tuple[float, str]]) -> BrokerWatch:
    return BrokerWatch(broker.check, 60.0, lambda s, why: calls.append((s, why)), clock)


def test_it_gives_up_once_when_nothing_answered_for_the_bound_and_not_before() -> None:
    broker, clock, calls = Broker(), Clock(), []
    watching = watch(broker, clock, calls)
    broker.answers = False
    clock.now += 59.0
    assert watching.look() is False
    assert calls == []
    clock.now += 1.0
    assert watching.look() is True
    assert calls == [(60.0, "Connection refused")]
    clock.now += 5.0
    assert watching.look() is False  # told once
    assert calls == [(60.0, "Connection refused")]


def test_an_answer_starts_the_count_again() -> None:
    broker, clock, calls = Broker(), Clock(), []
    watching = watch(broker, clock, calls)
    broker.answers = False
    clock.now += 50.0
    watching.look()
    broker.answers = True
    watching.look()  # a flapping broker that answers now and then is not given up
    broker.answers = False
    clock.now += 50.0
    assert watching.look() is False
    clock.now += 10.0
    assert watching.look() is True
    assert calls == [(60.0, "Connection refused")]


def test_a_short_bound_is_looked_at_more_often() -> None:
    broker, clock = Broker(), Clock()
    assert BrokerWatch(broker.check, 180.0, lambda s, w: None, clock).every == 5.0
    assert BrokerWatch(broker.check, 4.0, lambda s, w: None, clock).every == pytest.approx(0.8)


@pytest.mark.parametrize(
    ("error", "reason"),
    [
        (ServiceUnavailable("broker redis://h/0 unreachable: Timeout reading from h:6379"),
         "Timeout reading from h:6379"),
        (OSError("Connection reset by peer"), "Connection reset by peer"),
        (TimeoutError(), "TimeoutError"),
    ],
    ids=["check_broker", "transport", "no-words"],
)  # fmt: skip
def test_the_reason_is_the_transports_own_words(error: Exception, reason: str) -> None:
    assert _why(error) == reason


@pytest.mark.parametrize(
    ("where", "expected"),
    [
        (None, "redis://:***@cache:6379/0 has not answered for 3m 00s (Connection refused): "
               "exiting with code 75 to be started again"),
        ("probes-1", "probes-1: redis://:***@cache:6379/0 has not answered for 3m 00s "
                     "(Connection refused): exiting with code 75 to be started again"),
    ],
    ids=["alone", "a-child-of-slamon-run"],
)  # fmt: skip
def test_the_line_names_the_broker_how_long_and_why(where: str | None, expected: str) -> None:
    text = broker_given_up_text(
        "redis://:***@cache:6379/0", 180.4, "Connection refused\nmore", 75, where
    )
    assert text == expected


@pytest.fixture
def silent_broker() -> Iterator[int]:
    """A port that takes connections (the kernel's backlog) and never answers: a frozen Redis,
    as the watch's check sees it."""
    with socket.socket() as listening:
        listening.bind(("127.0.0.1", 0))
        listening.listen(16)
        yield int(listening.getsockname()[1])


def test_the_check_returns_within_its_timeout_from_a_broker_that_never_answers(
    silent_broker: int,
) -> None:
    settings = Settings(broker_url=f"redis://127.0.0.1:{silent_broker}/0")
    began = time.monotonic()
    with pytest.raises(ServiceUnavailable, match=r"unreachable: Timeout reading"):
        check_broker(settings, timeout=0.5)
    assert time.monotonic() - began < 10  # without socket timeouts it waited for ever
