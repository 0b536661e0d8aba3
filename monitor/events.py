"""What a slamon console prints: one line per event that matters, with a UTC time, a fixed
event word and the facts::

    2026-12-01 12:00:03Z  outage opened     trainer-0 (reachable) at 12:00:01Z: connect refused

The words are fixed so that a person can scan the column and a script can grep it. The text of
each event is built by a pure ``*_text`` function (tested as tables); the emitters below log it
to the ``slamon.events`` logger, which every long-running slamon process prints at INFO whatever
``--log-level`` says (`configure_console`). Nothing here touches the database.

Events found inside a transaction (an outage, an incident, an alert) are printed only when that
transaction commits (`after_commit`): a probe round that is rolled back and retried must not
print its outage twice, and one that is rolled back for good must not print it at all.
"""

from __future__ import annotations

import logging
import sys
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from sqlalchemy.orm import Session

LOGGER_NAME = "slamon.events"
log = logging.getLogger(LOGGER_NAME)

OUTAGE_OPENED = "outage opened"
OUTAGE_CLOSED = "outage closed"
INCIDENT_OPENED = "incident opened"
INCIDENT_RESOLVED = "incident resolved"
ALERT_FIRING = "alert firing"
ALERT_RESOLVED = "alert resolved"
ALERT_DELIVERED = "alert delivered"
DELIVERY_GIVEN_UP = "delivery given up"
CHANNEL_DISABLED = "channel disabled"
CHANNEL_ENABLED = "channel enabled"
FEED_FAILING = "feed failing"
FEED_BACK = "feed back"
DATABASE_LOST = "database lost"
DATABASE_BACK = "database back"
BROKER_LOST = "broker lost"
BROKER_BACK = "broker back"
PROCESS_EXITED = "process exited"
WORDS = (
    OUTAGE_OPENED,
    OUTAGE_CLOSED,
    INCIDENT_OPENED,
    INCIDENT_RESOLVED,
    ALERT_FIRING,
    ALERT_RESOLVED,
    ALERT_DELIVERED,
    DELIVERY_GIVEN_UP,
    CHANNEL_DISABLED,
    CHANNEL_ENABLED,
    FEED_FAILING,
    FEED_BACK,
    DATABASE_LOST,
    DATABASE_BACK,
    BROKER_LOST,
    BROKER_BACK,
    PROCESS_EXITED,
)
WIDTH = max(len(word) for word in WORDS)  # the facts start in one column
MAX_FACT_CHARS = 240  # an error message is a clue, not a document
_PENDING = "slamon.events.pending"  # session.info key: events waiting for the commit


# ---- pure formatting ------------------------------------------------------------------------


def line(word: str, facts: str) -> str:
    """``word`` padded to the events column, then ``facts`` (the time is the formatter's)."""
    return f"{word:<{WIDTH}} {facts}".rstrip()


def one_line(text: object, limit: int = MAX_FACT_CHARS) -> str:
    """The first non-blank line of ``text``, whitespace collapsed, cut at ``limit`` with "…":
    database drivers and HTTP errors write paragraphs, a console line holds one clue."""
    first = next((part for part in str(text).splitlines() if part.strip()), "")
    collapsed = " ".join(first.split())
    return collapsed if len(collapsed) <= limit else collapsed[: limit - 1].rstrip() + "…"


def clock(at: datetime, now: datetime) -> str:
    """``12:00:01Z``; with the date when ``at`` is not on ``now``'s (UTC) day."""
    if at.date() == now.date():
        return at.strftime("%H:%M:%SZ")
    return at.strftime("%Y-%m-%d %H:%M:%SZ")


def duration(seconds: float) -> str:
    """``42s``, ``3m 05s``, ``2h 03m``, ``3d 04h``: two units at most, rounded down."""
    total = max(0, int(seconds))
    days, rest = divmod(total, 86400)
    hours, rest = divmod(rest, 3600)
    minutes, secs = divmod(rest, 60)
    if days:
        return f"{days}d {hours:02d}h"
    if hours:
        return f"{hours}h {minutes:02d}m"
    if minutes:
        return f"{minutes}m {secs:02d}s"
    return f"{secs}s"


def exit_status(returncode: int) -> str:
    """How a child ended, as people say it: ``signal 9`` or ``code 1``."""
    return f"signal {-returncode}" if returncode < 0 else f"code {returncode}"


def subject(labels: Mapping[str, str]) -> str:
    """What an alert is about, in a word or two: the target, the vantage, else the provider
    and what of it."""
    if labels.get("target"):
        return labels["target"]
    if labels.get("vantage"):
        return f"vantage {labels['vantage']}"
    what = labels.get("incident") or labels.get("feed") or labels.get("region") or ""
    return " ".join(part for part in (labels.get("provider", ""), what) if part) or "-"


def _with_reason(facts: str, reason: str | None) -> str:
    return f"{facts}: {one_line(reason)}" if reason else facts


def _by(where: str | None, facts: str) -> str:
    """Facts seen by one of several processes are prefixed with its name (``probes-1: …``)."""
    return f"{where}: {facts}" if where else facts


@dataclass(frozen=True, slots=True)
class OutageChange:
    """An outage a probe round opened (``opened``; ``at`` is its start) or closed (``at`` is
    its end, ``lasted_s`` its length)."""

    target: str
    series: str
    opened: bool
    at: datetime
    error: str | None = None
    lasted_s: float | None = None


def outage_lines(changes: Iterable[OutageChange], now: datetime) -> list[tuple[str, str]]:
    """One (word, facts) per target and kind of change: a host that stops answering opens its
    reachable and usable outages in the same round, and that is one event, not two."""
    grouped: dict[tuple[str, bool, int | None], list[OutageChange]] = {}
    for change in changes:
        lasted = None if change.opened else int(change.lasted_s or 0)
        grouped.setdefault((change.target, change.opened, lasted), []).append(change)
    lines = []
    for (target, opened, lasted), group in grouped.items():
        series = ", ".join(sorted({c.series for c in group}, key=("reachable", "usable").index))
        if opened:
            first = min(group, key=lambda c: c.at)
            error = next((c.error for c in group if c.error), None)
            facts = _with_reason(f"{target} ({series}) at {clock(first.at, now)}", error)
            lines.append((OUTAGE_OPENED, facts))
        else:
            lines.append((OUTAGE_CLOSED, f"{target} ({series}) after {duration(lasted or 0)}"))
    return lines


def incident_opened_text(
    provider: str, title: str, *, maintenance: bool = False, relevant: bool = True
) -> str:
    facts = f"{provider}: {one_line(title)}"
    if maintenance:
        facts += " [maintenance]"
    return facts if relevant else f"{facts} (outside your regions)"


def incident_resolved_text(provider: str, title: str, lasted_s: float | None) -> str:
    facts = f"{provider}: {one_line(title)}"
    return facts if lasted_s is None else f"{facts} after {duration(lasted_s)}"


def alert_firing_text(rule: str, labels: Mapping[str, str], *, muted: bool = False) -> str:
    facts = f"{rule} {subject(labels)}"
    return f"{facts} (muted or grouped: not sent)" if muted else facts


def alert_resolved_text(rule: str, labels: Mapping[str, str]) -> str:
    return f"{rule} {subject(labels)}"


def alert_delivered_text(rule: str, labels: Mapping[str, str], channel: str, event: str) -> str:
    return f"{rule} {subject(labels)} → {channel} ({event})"


def delivery_given_up_text(
    rule: str, labels: Mapping[str, str], channel: str, attempts: int, error: str | None
) -> str:
    tries = "attempt" if attempts == 1 else "attempts"
    facts = f"{rule} {subject(labels)} → {channel} after {attempts} {tries}"
    return _with_reason(facts, error)


def channel_disabled_text(channel: str, kind: str, error: str | None) -> str:
    facts = _with_reason(f"{channel} ({kind})", error)
    return f"{facts}; deliveries held until `slamon alerts enable {channel}` or a config change"


def channel_enabled_text(channel: str, why: str, held: int) -> str:
    deliveries = "delivery" if held == 1 else "deliveries"
    return f"{channel} ({why}); {held} held {deliveries} due now"


def feed_failing_text(provider: str, url: str, error: str) -> str:
    # fetch errors start with the URL already
    return _with_reason(f"{provider} {url}", error.removeprefix(f"{url}: "))


def feed_back_text(provider: str, url: str, failures: int, down_s: float | None) -> str:
    polls = "poll" if failures == 1 else "polls"
    after = f" after {duration(down_s)}" if down_s is not None else ""
    return f"{provider} {url}{after} ({failures} failed {polls})"


def lost_text(reason: str, where: str | None = None) -> str:
    """``database lost`` / ``broker lost``: why, as the driver said it, on one line."""
    return _by(where, one_line(reason) or "no reason given")


def back_text(lasted_s: float, where: str | None = None) -> str:
    return _by(where, f"after {duration(lasted_s)}")


def process_exited_text(name: str, returncode: int, restart_in_s: float) -> str:
    return f"{name} ({exit_status(returncode)}); restarting in {duration(restart_in_s)}"


# ---- episodes (pure) --------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Episode:
    """One kind of trouble as one process sees it (the database, the broker): ``since`` when
    it began, None while all is well. Lets a failure that repeats every second print once."""

    since: datetime | None = None

    @property
    def active(self) -> bool:
        return self.since is not None

    def fail(self, at: datetime) -> tuple[Episode, bool]:
        """This episode after a failure at ``at``; True when that failure began it."""
        if self.since is not None:
            return self, False
        return Episode(at), True

    def recover(self, at: datetime) -> tuple[Episode, float | None]:
        """This episode after a success at ``at``; how long it lasted when that ended it."""
        if self.since is None:
            return self, None
        return Episode(), max(0.0, (at - self.since).total_seconds())


# ---- emitting ---------------------------------------------------------------------------------


def emit(word: str, facts: str) -> None:
    """Print one event now (outside any transaction, or when it does not depend on one)."""
    log.info("%s", line(word, facts))


def after_commit(session: Session, word: str, facts: str) -> None:
    """Print one event when ``session``'s transaction commits; forget it on a rollback."""
    pending: list[tuple[str, str]] | None = session.info.get(_PENDING)
    if pending is None:
        from sqlalchemy import event as sa_event

        pending = session.info[_PENDING] = []
        sa_event.listen(session, "after_commit", _print_pending)
        sa_event.listen(session, "after_rollback", _drop_pending)
    pending.append((word, facts))


def _print_pending(session: Session) -> None:
    if session.in_nested_transaction():
        return  # a savepoint was released: the outer transaction may still roll back
    pending = session.info.get(_PENDING) or []
    for word, facts in pending:
        emit(word, facts)
    pending.clear()


def _drop_pending(session: Session) -> None:
    if not session.in_nested_transaction():
        (session.info.get(_PENDING) or []).clear()


def outages_changed(session: Session, changes: Sequence[OutageChange], now: datetime) -> None:
    for word, facts in outage_lines(changes, now):
        after_commit(session, word, facts)


def incident_opened(
    session: Session, provider: str, title: str, *, maintenance: bool, relevant: bool
) -> None:
    facts = incident_opened_text(provider, title, maintenance=maintenance, relevant=relevant)
    after_commit(session, INCIDENT_OPENED, facts)


def incident_resolved(session: Session, provider: str, title: str, lasted_s: float | None) -> None:
    after_commit(session, INCIDENT_RESOLVED, incident_resolved_text(provider, title, lasted_s))


def alert_firing(session: Session, rule: str, labels: Mapping[str, str], muted: bool) -> None:
    after_commit(session, ALERT_FIRING, alert_firing_text(rule, labels, muted=muted))


def alert_resolved(session: Session, rule: str, labels: Mapping[str, str]) -> None:
    after_commit(session, ALERT_RESOLVED, alert_resolved_text(rule, labels))


def alert_delivered(
    session: Session, rule: str, labels: Mapping[str, str], channel: str, event: str
) -> None:
    after_commit(session, ALERT_DELIVERED, alert_delivered_text(rule, labels, channel, event))


def delivery_given_up(
    session: Session,
    rule: str,
    labels: Mapping[str, str],
    channel: str,
    attempts: int,
    error: str | None,
) -> None:
    facts = delivery_given_up_text(rule, labels, channel, attempts, error)
    after_commit(session, DELIVERY_GIVEN_UP, facts)


def channel_disabled(session: Session, channel: str, kind: str, error: str | None) -> None:
    after_commit(session, CHANNEL_DISABLED, channel_disabled_text(channel, kind, error))


def channel_enabled(session: Session, channel: str, why: str, held: int) -> None:
    after_commit(session, CHANNEL_ENABLED, channel_enabled_text(channel, why, held))


def feed_failing(session: Session, provider: str, url: str, error: str) -> None:
    after_commit(session, FEED_FAILING, feed_failing_text(provider, url, error))


def feed_back(
    session: Session, provider: str, url: str, failures: int, down_s: float | None
) -> None:
    after_commit(session, FEED_BACK, feed_back_text(provider, url, failures, down_s))


# ---- the console ------------------------------------------------------------------------------


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
