"""The watchdog against a real receiver on loopback, a real database and a real Redis behind a
port the test can close: it pings while slamon is healthy, stops while the schedule lags, the
deliveries back up or the broker is gone, and pings again once they recover."""

from __future__ import annotations

import logging
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from sqlalchemy import Engine, update
from sqlalchemy.orm import Session, sessionmaker

from monitor.config.models import Config
from monitor.db.engine import make_sessionmaker
from monitor.db.models import Delivery
from monitor.events import emitting, words
from monitor.health.read import read_snapshot
from monitor.settings import Settings
from tests.monitor.health.rows import forget, put_delivery, put_lease, put_slot
from tests.support import FeedServer
from workers.watchdog import Watchdog

PING = "/ping/5f1c"


class Forwarder:
    """A loopback port that forwards to Redis while open: ``close()`` refuses connections (the
    broker is lost) and ``open()`` takes them again on the same port."""

    def __init__(self, target: tuple[str, int]) -> None:
        self.target = target
        self.port = 0
        self._server: socket.socket | None = None
        self._open: list[socket.socket] = []
        self.open()

    def open(self) -> None:
        server = socket.socket()
        server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        server.bind(("127.0.0.1", self.port))
        server.listen()
        self.port = server.getsockname()[1]
        self._server = server
        threading.Thread(target=self._accept, args=(server,), daemon=True).start()

    def close(self) -> None:
        if self._server is not None:
            self._server.shutdown(socket.SHUT_RDWR)
            self._server.close()
            self._server = None
        for sock in self._open:
            sock.close()
        self._open.clear()

    def _accept(self, server: socket.socket) -> None:
        while True:
            try:
                client, _ = server.accept()
            except OSError:
                return
            upstream = socket.create_connection(self.target)
            self._open += [client, upstream]
            for source, sink in ((client, upstream), (upstream, client)):
                threading.Thread(target=_pipe, args=(source, sink), daemon=True).start()


def _pipe(source: socket.socket, sink: socket.socket) -> None:
    try:
        while data := source.recv(65536):
            sink.sendall(data)
    except OSError:
        pass


@pytest.fixture
def db(engine: Engine) -> Iterator[sessionmaker[Session]]:
    """Sessions that really commit (the watchdog reads from a thread of its own); what the
    health checks read is forgotten before and after."""
    sessions = make_sessionmaker(engine)
    with sessions() as session, session.begin():
        forget(session)
    yield sessions
    with sessions() as session, session.begin():
        forget(session)


@pytest.fixture
def receiver() -> Iterator[FeedServer]:
    server = FeedServer()
    server.routes[PING] = (200, b"OK")
    yield server
    server.close()


@pytest.fixture
def events(caplog: pytest.LogCaptureFixture) -> pytest.LogCaptureFixture:
    caplog.set_level(logging.INFO, logger=emitting.LOGGER_NAME)
    return caplog


def lines(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.name == emitting.LOGGER_NAME]


def config_for(receiver: FeedServer, **watchdog: object) -> Config:
    section = {"url": f"{receiver.url}{PING}", "every": 60, "timeout": 2, **watchdog}
    return Config.model_validate({"watchdog": section})


def settings_for(tmp_path: Path, broker_url: str = "filesystem://") -> Settings:
    return Settings(  # type: ignore[call-arg]
        database_url="sqlite://", broker_url=broker_url, state_dir=tmp_path / "state"
    )


def healthy(sessions: sessionmaker[Session]) -> None:
    """A leader for an hour whose dispatch is on time; nothing pending; no feeds."""
    with sessions() as session, session.begin():
        put_lease(session, "web-1:4242", 7)
        put_slot(session, "probes-dispatch", 1.0, done_ago_s=0.1)
        put_slot(session, "alerts-deliver", 5.0, done_ago_s=1)


def host(receiver: FeedServer) -> str:
    return str(urlsplit(receiver.url).netloc)


def test_it_pings_while_healthy_tells_the_first_ping_and_records_it(
    db: sessionmaker[Session],
    receiver: FeedServer,
    tmp_path: Path,
    events: pytest.LogCaptureFixture,
) -> None:
    healthy(db)
    watchdog = Watchdog(config_for(receiver), settings_for(tmp_path), db, holder="web-1:4242")
    assert watchdog.check()
    assert watchdog.check()
    assert receiver.hits == [PING, PING]
    assert lines(events) == [words.line(words.WATCHDOG_PINGING, f"{host(receiver)} every 1m 00s")]
    with db() as session:
        ping = read_snapshot(session).ping
    assert ping is not None
    assert (ping.holder, ping.error) == ("web-1:4242", None)
    assert ping.pinged_at == ping.attempted_at
    watchdog.close()


def test_it_stops_while_dispatch_lags_past_max_lag_and_resumes_once_on_time(
    db: sessionmaker[Session],
    receiver: FeedServer,
    tmp_path: Path,
    events: pytest.LogCaptureFixture,
) -> None:
    healthy(db)
    watchdog = Watchdog(config_for(receiver, max_lag=30), settings_for(tmp_path), db)
    assert watchdog.check()
    with db() as session, session.begin():
        put_slot(session, "probes-dispatch", 1.0, done_ago_s=45)  # the workers stopped
    assert not watchdog.check()
    with db() as session, session.begin():
        put_slot(session, "probes-dispatch", 1.0, done_ago_s=60)  # later: later still
    assert not watchdog.check()
    assert receiver.hits == [PING]
    with db() as session, session.begin():
        put_slot(session, "probes-dispatch", 1.0, done_ago_s=0.1)
    assert watchdog.check()
    assert receiver.hits == [PING, PING]
    said = lines(events)
    assert len(said) == 3  # the first ping, one silence however late it grows, the resumption
    assert said[1] == words.line(
        words.WATCHDOG_SILENT, "not pinging: dispatch 44s late (probes-dispatch; max_lag 30s)"
    )
    assert said[2].startswith(words.line(words.WATCHDOG_PINGING, f"{host(receiver)} again after"))
    watchdog.close()


def test_it_stops_while_a_delivery_waits_past_max_backlog_and_resumes_once_drained(
    db: sessionmaker[Session],
    receiver: FeedServer,
    tmp_path: Path,
    events: pytest.LogCaptureFixture,
) -> None:
    healthy(db)
    watchdog = Watchdog(config_for(receiver, max_backlog=600), settings_for(tmp_path), db)
    with db() as session, session.begin():
        stuck = put_delivery(session, 601).id
    assert not watchdog.check()
    assert receiver.hits == []
    assert lines(events) == [
        words.line(
            words.WATCHDOG_SILENT,
            "not pinging: oldest pending delivery is 10m 01s old (max_backlog 10m 00s)",
        )
    ]
    with db() as session, session.begin():
        session.execute(update(Delivery).where(Delivery.id == stuck).values(status="delivered"))
    assert watchdog.check()
    assert receiver.hits == [PING]
    watchdog.close()


def test_it_stops_while_the_broker_is_unreachable_and_resumes_when_it_is_back(
    db: sessionmaker[Session],
    receiver: FeedServer,
    redis_url: str,
    tmp_path: Path,
    events: pytest.LogCaptureFixture,
) -> None:
    healthy(db)
    parts = urlsplit(redis_url)
    broker = Forwarder((parts.hostname or "127.0.0.1", parts.port or 6379))
    try:
        settings = settings_for(tmp_path, f"redis://127.0.0.1:{broker.port}{parts.path}")
        watchdog = Watchdog(config_for(receiver), settings, db)
        assert watchdog.check()
        broker.close()
        assert not watchdog.check()
        assert not watchdog.check()
        assert receiver.hits == [PING]
        broker.open()
        assert watchdog.check()
        assert receiver.hits == [PING, PING]
    finally:
        broker.close()
    said = lines(events)
    assert len(said) == 3
    assert said[1].startswith(
        words.line(words.WATCHDOG_SILENT, f"not pinging: broker redis://127.0.0.1:{broker.port}")
    )
    assert "unreachable" in said[1]
    watchdog.close()


def test_a_failing_receiver_is_told_once_per_error_and_never_raises(
    db: sessionmaker[Session],
    receiver: FeedServer,
    tmp_path: Path,
    events: pytest.LogCaptureFixture,
) -> None:
    healthy(db)
    watchdog = Watchdog(config_for(receiver), settings_for(tmp_path), db)
    receiver.routes[PING] = (503, b"")
    assert not watchdog.check()
    assert not watchdog.check()
    receiver.routes[PING] = (200, b"OK")
    assert watchdog.check()
    with db() as session:
        ping = read_snapshot(session).ping
    assert ping is not None
    assert ping.error is None
    receiver.routes[PING] = (500, b"")
    assert not watchdog.check()
    with db() as session:
        ping = read_snapshot(session).ping
    assert ping is not None
    assert ping.error == "HTTP 500"
    assert ping.pinged_at is not None
    assert ping.pinged_at < ping.attempted_at
    where = host(receiver)
    assert lines(events) == [
        words.line(words.WATCHDOG_FAILING, f"{where}: HTTP 503"),
        words.line(words.WATCHDOG_PINGING, f"{where} every 1m 00s"),
        words.line(words.WATCHDOG_FAILING, f"{where}: HTTP 500"),
    ]
    receiver.close()  # connections refused now
    assert not watchdog.check()
    assert lines(events)[-1].startswith(words.line(words.WATCHDOG_FAILING, f"{where}: "))
    assert PING.removeprefix("/") not in lines(events)[-1]  # the URL is a secret
    watchdog.close()


def test_beat_checks_when_due_in_a_thread_of_its_own_one_at_a_time(
    db: sessionmaker[Session], receiver: FeedServer, tmp_path: Path
) -> None:
    """``every`` 60 s on a clock the test moves; the receiver takes 1 s to answer."""
    healthy(db)
    now = [1000.0]
    watchdog = Watchdog(config_for(receiver), settings_for(tmp_path), db, clock=lambda: now[0])
    receiver.delays[PING] = 1.0
    slowest = 0.0
    for at in (1000.0, 1001.0, 1070.0):  # the second is not due; the third is, while in flight
        now[0] = at
        started = time.monotonic()
        watchdog.beat(True)
        slowest = max(slowest, time.monotonic() - started)
    assert slowest < 0.5  # the scheduler's tick never waits for a check
    assert watchdog.wait(10)
    assert receiver.hits == [PING]  # the one due while the first was in flight was skipped
    receiver.delays[PING] = 0
    now[0] = 1075.0
    watchdog.beat(True)
    assert watchdog.wait(10)
    assert receiver.hits == [PING, PING]
    now[0] = 1100.0
    watchdog.beat(True)
    assert watchdog.wait(10)
    assert receiver.hits == [PING, PING]  # next due at 1135
    watchdog.close()


def test_beat_does_nothing_unless_leading_with_a_url(
    db: sessionmaker[Session], receiver: FeedServer, tmp_path: Path
) -> None:
    healthy(db)
    now = [0.0]
    watchdog = Watchdog(config_for(receiver), settings_for(tmp_path), db, clock=lambda: now[0])
    watchdog.beat(False)
    assert watchdog.wait(10)
    unset = Watchdog(Config(), settings_for(tmp_path), db, clock=lambda: now[0])
    unset.beat(True)
    assert unset.wait(10)
    assert receiver.hits == []
    watchdog.beat(True)  # leading: at once
    assert watchdog.wait(10)
    assert receiver.hits == [PING]
    now[0] = 10.0
    watchdog.beat(False)  # the lease went: a new term checks at once
    watchdog.beat(True)
    assert watchdog.wait(10)
    assert receiver.hits == [PING, PING]
    watchdog.close()
