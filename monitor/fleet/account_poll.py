"""Polling one account event source: read what the provider tells the account, store it, and
advance the source's checkpoint only after a clean poll.

The provider is read outside any transaction (an API may take seconds). A poll that fails is
recorded on the source (told once per episode on the console) and stores nothing, so its
checkpoint stays where the last clean poll left it and the next poll asks again from there.
A clean poll's events are stored in one transaction with the source's new checkpoint: the
latest provider update time among them (never earlier than the one before).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime

from sqlalchemy import select
from sqlalchemy.orm import Session, sessionmaker

from monitor.account.kind import EventPollContext
from monitor.account.kinds import KINDS
from monitor.account.model import AccountEvent
from monitor.config.models import AccountSourceConfig, Config
from monitor.db.base import utcnow
from monitor.db.models import AccountSource
from monitor.errors import EventPollFailed
from monitor.events import emitting, words
from monitor.fleet.account_store import Recorded, record
from monitor.history import account_events


@dataclass(frozen=True, slots=True)
class PollOutcome:
    """What one poll did: each event's outcome (empty when it failed), or why it failed."""

    source: str
    error: str | None = None
    recorded: Sequence[Recorded] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.error is None

    def counts(self) -> dict[str, int]:
        found: dict[str, int] = {}
        for item in self.recorded:
            found[item.outcome] = found.get(item.outcome, 0) + 1
        return found


def poll(
    sessions: sessionmaker[Session], source: AccountSourceConfig, now: datetime | None = None
) -> PollOutcome:
    """Poll ``source`` now, from its checkpoint, and store what it lists."""
    now = now or utcnow()
    with sessions() as session:
        state = session.get(AccountSource, source.name)
        since = state.checkpoint if state is not None else None
    try:
        events = list_source(source, now, since)
    except EventPollFailed as exc:
        with sessions() as session, session.begin():
            _failed(session, source, now, str(exc))
        return PollOutcome(source.name, error=str(exc))
    with sessions() as session, session.begin():
        recorded = record(session, events, now, "poll")
        _succeeded(session, source, now, events, recorded)
    return PollOutcome(source.name, recorded=recorded)


def list_source(
    source: AccountSourceConfig, now: datetime, since: datetime | None
) -> list[AccountEvent]:
    """The source's events, or ``EventPollFailed`` with one line. A kind's unexpected exception
    is a failed poll too (named, so it can be reported), never a crashed worker."""
    kind = KINDS[source.kind]
    context = EventPollContext(source.name, now, source.timeout, since)
    try:
        return list(kind.list_events(source.options, context))
    except EventPollFailed:
        raise
    except Exception as exc:  # a kind's bug, or an SDK error it did not expect
        first = words.one_line(exc) or type(exc).__name__
        raise EventPollFailed(f"{source.kind}: {type(exc).__name__}: {first}") from exc


def due_sources(session: Session, config: Config, now: datetime) -> list[AccountSourceConfig]:
    """The sources whose ``every`` has passed since their last poll (never polled: due)."""
    last = dict(session.execute(select(AccountSource.name, AccountSource.last_polled_at)).all())
    due = []
    for source in config.account_events:
        polled = last.get(source.name)
        if polled is None or (now - polled).total_seconds() >= source.every - 0.5:
            due.append(source)
    return due


def announce(session: Session, recorded: Sequence[Recorded], now: datetime) -> None:
    """One console line per event slamon had not seen, naming the targets it is about, once
    its transaction commits (a poll's, a push's, an agent's notice's)."""
    fresh = [r.id for r in recorded if r.outcome == "new"]
    if not fresh:
        return
    for view in reversed(account_events.events(session, ids=fresh)):  # oldest start first
        named = view.targets or view.entities
        text = words.account_event_text(
            view.provider, view.kind, view.title, view.starts_at, named, now=now
        )
        emitting.after_commit(session, words.ACCOUNT_EVENT, text)


def _failed(session: Session, source: AccountSourceConfig, now: datetime, error: str) -> None:
    state = _state(session, source)
    if state.consecutive_failures == 0:
        emitting.after_commit(session, words.EVENTS_FAILING, f"{source.name}: {error}")
    state.last_polled_at = now
    state.consecutive_failures += 1
    state.last_error = error


def _succeeded(
    session: Session,
    source: AccountSourceConfig,
    now: datetime,
    events: Sequence[AccountEvent],
    recorded: Sequence[Recorded],
) -> None:
    state = _state(session, source)
    if state.consecutive_failures:
        text = words.polls_back_text(source.name, state.consecutive_failures)
        emitting.after_commit(session, words.EVENTS_BACK, text)
    announce(session, recorded, now)
    updates = [e.updated_at for e in events if e.updated_at is not None]
    if state.checkpoint is not None:
        updates.append(state.checkpoint)
    state.checkpoint = max(updates) if updates else None
    state.last_polled_at = now
    state.last_success_at = now
    state.consecutive_failures = 0
    state.last_error = None
    state.events = len(events)


def _state(session: Session, source: AccountSourceConfig) -> AccountSource:
    state = session.get(AccountSource, source.name, with_for_update=True)
    if state is None:
        state = AccountSource(name=source.name, kind=source.kind, consecutive_failures=0, events=0)
        session.add(state)
        session.flush()
    return state
