"""What `slamon run` prints: one line per event that matters, and none of Celery's chatter.

The first tests drive Celery's side of the console (workers/console.py) with log records and
exceptions like the ones Celery produces; the last run a real `slamon run` against a local
target that fails and comes back, and against a throwaway PostgreSQL that goes away.
"""

from __future__ import annotations

import logging
import os
import re
import signal
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from celery.utils.serialization import UnpickleableExceptionWrapper
from celery.worker.consumer.consumer import CONNECTION_ERROR, CONNECTION_RETRY
from kombu.exceptions import OperationalError as BrokerError
from sqlalchemy.exc import OperationalError

from monitor.events import emitting, words
from tests.support import FeedServer, slamon_command, wait_for
from workers import console
from workers.console import BROKER, DATABASE, ConsoleFilter, Episodes, trouble

STAMP = r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\dZ  "
DB_DOWN = OperationalError("SELECT 1", {}, Exception('connection to server at "db" failed\nIs…'))
LOCKED = OperationalError("UPDATE t", {}, Exception("database is locked"))


def chained(outer: BaseException, inner: BaseException) -> BaseException:
    """``outer`` as Python leaves it when raised while handling ``inner``."""
    try:
        try:
            raise inner
        except BaseException:
            raise outer  # noqa: B904 - the implicit context is what is being tested
    except BaseException as exc:
        return exc


@pytest.mark.parametrize(
    ("exc", "expected"),
    [
        (DB_DOWN, DATABASE),
        (LOCKED, None),
        (BrokerError("Error 111 connecting to 127.0.0.1:6379. Connection refused."), BROKER),
        (chained(RuntimeError("Couldn't apply scheduled task tick"), BrokerError("111")), BROKER),
        (UnpickleableExceptionWrapper("sqlalchemy.exc", "OperationalError", ("x",)), DATABASE),
        (ValueError("a bug"), None),
        (None, None),
    ],
    ids=["database", "lock-wait", "broker", "beat-wrapped", "unpicklable", "bug", "none"],
)
def test_trouble_tells_an_unreachable_database_or_broker_from_a_bug(
    exc: BaseException | None, expected: str | None
) -> None:
    found = trouble(exc)
    assert (found[0] if found else None) == expected


@pytest.fixture
def event_log(caplog: pytest.LogCaptureFixture) -> pytest.LogCaptureFixture:
    caplog.set_level(logging.INFO, logger=emitting.LOGGER_NAME)
    return caplog


def lines(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.name == emitting.LOGGER_NAME]


def log_record(
    name: str, level: int, msg: str, args: tuple[object, ...] = (), exc: BaseException | None = None
) -> logging.LogRecord:
    exc_info = (type(exc), exc, exc.__traceback__) if exc is not None else None
    return logging.LogRecord(name, level, __file__, 1, msg, args, exc_info)


def test_a_failing_task_every_second_prints_database_lost_once_and_no_traceback(
    event_log: pytest.LogCaptureFixture,
) -> None:
    seen = Episodes("probes-1")
    route = ConsoleFilter(quiet=True, seen=seen)
    failures = [
        log_record("celery.app.trace", logging.ERROR, "Task x raised unexpected", exc=DB_DOWN)
        for _ in range(5)
    ]
    assert [route.filter(r) for r in failures] == [False] * 5
    assert lines(event_log) == [
        words.line(
            "database lost", 'probes-1: (builtins.Exception) connection to server at "db" failed'
        )
    ]
    seen.recovered(DATABASE)
    seen.recovered(DATABASE)
    assert len(lines(event_log)) == 2
    assert re.fullmatch(r"database back +probes-1: after \d+s", lines(event_log)[1])


def test_a_one_off_report_of_the_outage_keeps_its_line_but_not_its_traceback() -> None:
    route = ConsoleFilter(quiet=True, seen=Episodes())
    crash = log_record("celery.worker", logging.CRITICAL, "Unrecoverable error: %r", exc=DB_DOWN)
    crash.args = (DB_DOWN,)
    assert route.filter(crash)
    assert crash.exc_info is None


def test_an_error_the_outage_led_to_keeps_its_traceback() -> None:
    route = ConsoleFilter(quiet=True, seen=Episodes())
    led_to = chained(AttributeError("'NoneType' object has no attribute 'hostname'"), DB_DOWN)
    crash = log_record("celery.worker", logging.CRITICAL, "Unrecoverable error", exc=led_to)
    assert route.filter(crash)
    assert crash.exc_info is not None


def test_a_bug_keeps_its_traceback() -> None:
    route = ConsoleFilter(quiet=True, seen=Episodes())
    bug = log_record("celery.app.trace", logging.ERROR, "Task x raised", exc=ValueError("bug"))
    assert route.filter(bug)
    assert bug.exc_info is not None


def test_the_consumer_losing_the_broker_and_reconnecting_is_one_lost_and_one_back(
    event_log: pytest.LogCaptureFixture,
) -> None:
    seen = Episodes()
    route = ConsoleFilter(quiet=True, seen=seen)
    refused = BrokerError("Error 111 connecting to 127.0.0.1:6379. Connection refused.")
    consumer = "celery.worker.consumer.consumer"
    retry = log_record(consumer, logging.WARNING, "%s (%r)", (CONNECTION_RETRY, refused))
    cannot = log_record(consumer, logging.ERROR, CONNECTION_ERROR, ("redis://", refused, "Again"))
    connected = log_record(console.CONNECTED_LOGGER, logging.INFO, "Connected to %s", ("r://",))
    assert [route.filter(r) for r in (retry, cannot, cannot)] == [False, False, False]
    assert route.filter(connected)  # printed only from --log-level info up
    assert [line.split("  ")[0].strip() for line in lines(event_log)] == [
        "broker lost",
        "broker back",
    ]
    assert "Error 111 connecting to 127.0.0.1:6379" in lines(event_log)[0]


@pytest.mark.parametrize(
    ("made", "quiet", "printed"),
    [
        (log_record("kombu.connection", logging.WARNING, "No hostname was supplied. X"), True,
         False),
        (log_record("kombu.connection", logging.WARNING, "No hostname was supplied. X"), False,
         True),
        (log_record("py.warnings", logging.WARNING, "%s", ("x.py:1: CPendingDeprecationWarning",)),
         True, False),
        (log_record("py.warnings", logging.WARNING, "%s", ("x.py:1: UserWarning: hm",)), True,
         True),
        (log_record("celery.worker", logging.WARNING, "something odd"), True, True),
    ],
    ids=["kombu-no-hostname", "kombu-no-hostname-info", "deprecation", "user-warning", "other"],
)  # fmt: skip
def test_known_noise_is_dropped_below_info_only(
    made: logging.LogRecord, quiet: bool, printed: bool
) -> None:
    assert ConsoleFilter(quiet=quiet, seen=Episodes()).filter(made) is printed


def test_celerys_start_up_lines_are_let_through_below_the_level() -> None:
    route = ConsoleFilter(quiet=True, seen=Episodes())
    ready = log_record("celery.apps.worker", logging.INFO, "%s ready.", ("w@h",))
    due = log_record("celery.beat", logging.INFO, "Scheduler: Sending due task %s (%s)", ("a", "b"))
    assert route.filter(ready)
    assert getattr(ready, "console", False)
    assert route.filter(due)
    assert not getattr(due, "console", False)


def test_a_worker_of_slamon_run_says_which_one_is_ready() -> None:
    route = ConsoleFilter(quiet=True, seen=Episodes("probes-1"))
    ready = log_record("celery.apps.worker", logging.INFO, "%s ready.", ("w@h",))
    assert route.filter(ready)
    assert ready.getMessage() == "probes-1: w@h ready."


def test_a_process_that_lost_the_database_notices_its_return_by_itself(
    event_log: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(console, "DATABASE_CHECK_S", 0.05)
    answers = [False, False, True]

    def check() -> None:
        if not answers.pop(0):
            raise ConnectionRefusedError("still down")

    seen = Episodes("feeds", check)
    seen.failed(DATABASE, DB_DOWN)
    wait_for(lambda: not seen.active(DATABASE), timeout=5, every=0.05)
    assert [line.split("  ")[0].strip() for line in lines(event_log)] == [
        "database lost",
        "database back",
    ]


# ---- a real `slamon run` ----------------------------------------------------------------------


def write_config(folder: Path, target: FeedServer) -> None:
    """A 1 s target and no provider feeds (the test reaches loopback only)."""
    from tests.faults.servers import write_config as with_feeds_emptied

    with_feeds_emptied(
        folder / "slamon.yaml",
        "schedule: {tick: 1s}\nprobes: {retry_interval: 0.2}\n"
        f"targets: [{{name: trainer-0, kind: http, url: '{target.url}/healthz', interval: 1}}]\n",
    )


@pytest.fixture
def target() -> Iterator[FeedServer]:
    server = FeedServer()
    server.routes["/healthz"] = (200, b"ok")
    yield server
    server.close()


class Run:
    """`slamon run` in ``folder``, its console (stdout and stderr) in ``console.txt``."""

    def __init__(self, folder: Path, port: int, env: dict[str, str], *args: str) -> None:
        self.log = folder / "console.txt"
        with self.log.open("wb") as out:
            self.process = subprocess.Popen(
                [*slamon_command(), "run", f"--port={port}", *args],
                cwd=folder,
                env=env,
                stdout=out,
                stderr=subprocess.STDOUT,
            )

    def text(self) -> str:
        return self.log.read_text(errors="replace")

    def lines(self, word: str) -> list[str]:
        return [line for line in self.text().splitlines() if re.match(f"{STAMP}{word} ", line)]

    def ready(self) -> bool:
        """Every worker said so (at a light load, `slamon run` starts one: the main process)."""
        return sum(line.endswith(" ready.") for line in self.text().splitlines()) >= 1

    def stop(self) -> str:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGINT)
            self.process.wait(timeout=60)
        return self.text()


def embedded_env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if not k.startswith("SLAMON_")}


def assert_no_chatter(text: str) -> None:
    assert "-------------- " not in text
    assert "[tasks]" not in text
    assert "succeeded in" not in text
    assert " received" not in text
    assert "Sending due task" not in text  # a line per beat tick
    assert "Traceback" not in text
    assert "No hostname was supplied" not in text


@pytest.mark.slow
def test_slamon_run_prints_one_outage_opened_and_one_closed_and_no_chatter(
    tmp_path: Path, free_tcp_port: int, target: FeedServer
) -> None:
    write_config(tmp_path, target)
    run = Run(tmp_path, free_tcp_port, embedded_env())
    try:
        wait_for(run.ready, timeout=120)
        time.sleep(3)  # a few good probes first
        target.routes["/healthz"] = (503, b"")
        wait_for(lambda: run.lines("outage opened"), timeout=60)
        time.sleep(3)  # still failing: no second line
        target.routes["/healthz"] = (200, b"ok")
        wait_for(lambda: run.lines("outage closed"), timeout=60)
        time.sleep(2)
    finally:
        text = run.stop()
    assert run.process.returncode == 0, text
    [opened] = run.lines("outage opened")
    assert re.search(
        r"outage opened +trainer-0 \(reachable\) at \d\d:\d\d:\d\dZ: HTTP 503$", opened
    )
    [closed] = run.lines("outage closed")
    assert re.search(r"outage closed +trainer-0 \(reachable\) after \d+s$", closed)
    assert len(run.lines("alert firing")) == 1
    assert len(run.lines("alert resolved")) == 1
    assert text.splitlines()[0].startswith("slamon running: API on http://")
    assert "slamon stopped" in text
    assert_no_chatter(text)


@pytest.mark.slow
@pytest.mark.fault
def test_slamon_run_tells_a_database_outage_once_per_process_without_a_traceback(
    tmp_path: Path, free_tcp_port: int, target: FeedServer
) -> None:
    from tests.faults.servers import start_postgres

    server = start_postgres()
    try:
        write_config(tmp_path, target)
        env = {**embedded_env(), "SLAMON_DATABASE_URL": server.create_database("console")}
        run = Run(tmp_path, free_tcp_port, env)
        try:
            wait_for(run.ready, timeout=120)
            time.sleep(3)
            server.stop("fast")
            time.sleep(8)  # eight rounds of dispatch and probing fail meanwhile
            server.start()
            wait_for(lambda: len(run.lines("database back")) >= len(run.lines("database lost")))
            time.sleep(3)
        finally:
            text = run.stop()
    finally:
        server.destroy()
    lost = run.lines("database lost")
    assert lost, text
    processes = [re.sub(f"{STAMP}database lost +", "", line).split(":")[0] for line in lost]
    assert len(processes) == len(set(processes)), lost  # once per process, not per second
    # the driver's own words: OperationalError, or AdminShutdown when the server ended a query
    assert all(re.search(r": \(psycopg(\.errors)?\.\w+\) \S", line) for line in lost), lost
    assert len(run.lines("database back")) == len(lost), text
    assert_no_chatter(text)
