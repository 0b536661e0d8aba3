"""The console (monitor/events/console.py): its format and handler."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from datetime import UTC, datetime

import pytest

from monitor.events import emitting, words
from monitor.events.console import ConsoleFormatter, configure_console, level_number

NOON = datetime(2026, 12, 1, 12, 0, 0, tzinfo=UTC)


def record(name: str, level: int, message: str, **extra: object) -> logging.LogRecord:
    made = logging.LogRecord(name, level, __file__, 1, message, None, None)
    made.created = NOON.timestamp()
    made.__dict__.update(extra)
    return made


@pytest.mark.parametrize(
    ("made", "expected"),
    [
        (record(emitting.LOGGER_NAME, logging.INFO, words.line("outage opened", "gpu-0")),
         "2026-12-01 12:00:00Z  outage opened     gpu-0"),
        (record("celery.apps.worker", logging.INFO, "w@h ready."),
         "2026-12-01 12:00:00Z  celery            w@h ready."),
        (record("celery.worker.consumer", logging.WARNING, "lost"),
         "2026-12-01 12:00:00Z  celery warning    lost"),
    ],
    ids=["event", "info", "warning"],
)  # fmt: skip
def test_the_formatter_puts_time_then_the_event_or_source_column(
    made: logging.LogRecord, expected: str
) -> None:
    assert ConsoleFormatter().format(made) == expected


@pytest.fixture
def console(capsys: pytest.CaptureFixture[str]) -> Iterator[None]:
    """configure_console's handler on the root logger for the test, then the old state back."""
    root = logging.getLogger()
    level, handlers = root.level, list(root.handlers)
    yield
    root.handlers[:] = handlers
    root.setLevel(level)


def test_the_console_prints_events_at_any_level_and_other_lines_from_the_level_up(
    console: None, capsys: pytest.CaptureFixture[str]
) -> None:
    configure_console("warning")
    configure_console("WARNING")  # again: still one handler, no line printed twice
    emitting.emit(words.DATABASE_LOST, "refused")
    logging.getLogger("celery.app.trace").info("Task x succeeded")
    logging.getLogger("celery.app.trace").warning("Task x is slow")
    logging.getLogger("celery.apps.worker").setLevel(logging.INFO)
    logging.getLogger("celery.apps.worker").info("w@h ready.", extra={"console": True})
    logging.getLogger("celery.apps.worker").setLevel(logging.NOTSET)
    err = capsys.readouterr().err.splitlines()
    assert [line[22:] for line in err] == [
        "database lost     refused",
        "celery warning    Task x is slow",
        "celery            w@h ready.",
    ]
    assert all(line[19:22] == "Z  " for line in err)


def test_level_names_and_numbers_both_work() -> None:
    assert level_number("info") == logging.INFO
    assert level_number("WARNING") == logging.WARNING
    assert level_number(10) == logging.DEBUG
    assert level_number("nonsense") == logging.WARNING
