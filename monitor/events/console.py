"""A slamon process's console on stderr: ``<UTC time>  <event word> <facts>`` for events,
printed whatever the level, and every other record from the chosen level up, in the same
columns."""

from __future__ import annotations

import logging
import sys
import time
from collections.abc import Callable, Sequence

from monitor.events.emitting import LOGGER_NAME, log
from monitor.events.words import line


class ConsoleFormatter(logging.Formatter):
    """``<UTC time>  <event word> <facts>`` for events; other records put their source (and
    level, from WARNING up) in the event column, so every line reads the same way."""

    def format(self, record: logging.LogRecord) -> str:
        stamp = time.strftime("%Y-%m-%d %H:%M:%SZ", time.gmtime(record.created))
        if record.name == LOGGER_NAME:
            return f"{stamp}  {record.getMessage()}"
        source = record.name.split(".", 1)[0]
        if record.levelno >= logging.WARNING:
            source = f"{source} {record.levelname.lower()}"
        text = f"{stamp}  {line(source, record.getMessage())}"
        if record.exc_info and not record.exc_text:
            record.exc_text = self.formatException(record.exc_info)
        return f"{text}\n{record.exc_text}" if record.exc_text else text


def level_number(level: str | int) -> int:
    """``"warning"``, ``"INFO"``, ``20`` → the logging level; unknown names are WARNING."""
    if isinstance(level, int):
        return level
    number = logging.getLevelName(level.upper())
    return number if isinstance(number, int) else logging.WARNING


def configure_console(
    level: str | int,
    filters: Sequence[logging.Filter | Callable[[logging.LogRecord], bool]] = (),
) -> logging.Handler:
    """Print this process's log on stderr the console's way: events always (INFO), other
    records from ``level`` up. ``filters`` see every record first (they may drop it, or let a
    quieter one through by setting ``record.console = True``). Calling it again replaces the
    handler it installed before, so a process never prints a line twice."""
    threshold = level_number(level)
    root = logging.getLogger()
    for old in [h for h in root.handlers if getattr(h, "slamon_console", False)]:
        root.removeHandler(old)
    handler = logging.StreamHandler(sys.stderr)
    handler.slamon_console = True  # type: ignore[attr-defined]
    handler.setFormatter(ConsoleFormatter())
    for check in filters:
        handler.addFilter(check)
    handler.addFilter(lambda record: _loud_enough(record, threshold))
    root.addHandler(handler)
    root.setLevel(threshold)
    log.setLevel(logging.INFO)
    return handler


def _loud_enough(record: logging.LogRecord, threshold: int) -> bool:
    return (
        record.levelno >= threshold
        or record.name == LOGGER_NAME
        or bool(getattr(record, "console", False))
    )
