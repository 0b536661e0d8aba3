"""The judgement with the database and the broker: what /healthz answers and what the
watchdog pings by."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from sqlalchemy import Engine
from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.orm import Session, sessionmaker

from monitor.broker import check_broker
from monitor.config.models import Config
from monitor.db.engine import reading
from monitor.errors import ServiceUnavailable
from monitor.health.judge import judge
from monitor.health.model import Bounds, Judgement, Reason, Snapshot
from monitor.health.read import read_snapshot
from monitor.settings import Settings

Status = Literal["ok", "degraded", "unavailable"]
BROKER_TIMEOUT_S = 3.0


@dataclass(frozen=True, slots=True)
class Assessment:
    """Why the database and the broker cannot be reached (None: they answer), the snapshot
    read and its judgement (None when the database could not be read)."""

    database_error: str | None
    broker_error: str | None
    snapshot: Snapshot | None
    judgement: Judgement | None

    @property
    def status(self) -> Status:
        """``unavailable`` without the database or the broker; ``degraded`` while a check
        fails; else ``ok``."""
        if self.database_error or self.broker_error:
            return "unavailable"
        return "ok" if self.judgement is None or self.judgement.ok else "degraded"

    @property
    def reasons(self) -> tuple[Reason, ...]:
        """The database's and the broker's, then the judgement's."""
        reached = (
            Reason("database", self.database_error) if self.database_error else None,
            Reason("broker", self.broker_error) if self.broker_error else None,
        )
        found = self.judgement.reasons if self.judgement is not None else ()
        return tuple(r for r in reached if r is not None) + found

    @property
    def ok(self) -> bool:
        return self.status == "ok"


def assess(
    sessions: sessionmaker[Session],
    settings: Settings,
    config: Config,
    *,
    broker_timeout_s: float = BROKER_TIMEOUT_S,
) -> Assessment:
    """Read the snapshot (the read is the database's check), judge it by ``config``'s bounds,
    and ask the broker. Blocks for as long as the two answer (the broker at most
    ``broker_timeout_s``): call it from a thread of its own."""
    database_error, snapshot = _read(sessions)
    try:
        check_broker(settings, timeout=broker_timeout_s)
        broker_error = None
    except ServiceUnavailable as exc:
        broker_error = str(exc)
    judgement = judge(snapshot, Bounds.of(config)) if snapshot is not None else None
    return Assessment(database_error, broker_error, snapshot, judgement)


def _read(sessions: sessionmaker[Session]) -> tuple[str | None, Snapshot | None]:
    with sessions() as session:
        where = _where(session)
    try:
        with reading(sessions) as session:
            return None, read_snapshot(session)
    except SQLAlchemyError as exc:  # the words of monitor.db.engine.check_database
        lines = str(getattr(exc, "orig", None) or exc).strip().splitlines()
        return f"database {where} unreachable: {lines[0] if lines else type(exc).__name__}", None


def _where(session: Session) -> str:
    bind = session.get_bind()
    engine = bind if isinstance(bind, Engine) else bind.engine
    return engine.url.render_as_string(hide_password=True)
