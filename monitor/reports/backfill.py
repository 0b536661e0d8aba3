"""Backfilling outage history from a CSV (another monitor, a spreadsheet), so a team's first
report can cover months before slamon ran. All rows are checked first; nothing is written
unless every row is valid; importing the same file twice changes nothing."""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import select
from sqlalchemy.orm import Session

from monitor.db.dialect import insert_ignoring_conflicts
from monitor.db.models import ObservedWindow, Outage, Target
from monitor.errors import ConfigError
from monitor.sla.times import parse_aware

REQUIRED = ("target", "start", "end")
CAUSES = {
    "provider_wide",
    "regional",
    "single_instance",
    "gpu_hardware",
    "stalled_step",
    "vantage",
    "unknown",
}


@dataclass(frozen=True, slots=True)
class ImportRow:
    line: int
    target: str
    start: datetime
    end: datetime
    cause: str | None


@dataclass(frozen=True, slots=True)
class ImportResult:
    rows: int
    outages_added: int
    windows_added: int


def read_rows(text: str, observed_from: datetime, observed_to: datetime) -> list[ImportRow]:
    """Validated rows; ``ConfigError`` listing every bad row (``line 4: end is before start``)."""
    reader = csv.DictReader(io.StringIO(text))
    missing = [c for c in REQUIRED if c not in (reader.fieldnames or [])]
    if missing:
        raise ConfigError(
            f"the CSV needs the columns target,start,end[,cause]; missing: {', '.join(missing)}"
        )
    rows, problems = [], []
    for number, record in enumerate(reader, start=2):
        try:
            rows.append(_row(number, record, observed_from, observed_to))
        except ValueError as exc:
            problems.append(f"line {number}: {exc}")
    if problems:
        raise ConfigError(problems)
    return rows


def _row(number: int, record: dict[str, str | None], lo: datetime, hi: datetime) -> ImportRow:
    target = (record.get("target") or "").strip()
    if not target:
        raise ValueError("target is empty")
    start, end = _time(record.get("start"), "start"), _time(record.get("end"), "end")
    if end <= start:
        raise ValueError("end is not after start")
    if start < lo or end > hi:
        raise ValueError("the outage lies outside --observed-from/--observed-to")
    cause = (record.get("cause") or "").strip() or None
    if cause is not None and cause not in CAUSES:
        raise ValueError(f"cause {cause!r} is not one of {', '.join(sorted(CAUSES))}")
    return ImportRow(number, target, start, end, cause)


def _time(value: str | None, name: str) -> datetime:
    return parse_aware((value or "").strip(), name)


def import_outages(
    session: Session,
    rows: list[ImportRow],
    observed_from: datetime,
    observed_to: datetime,
    also_observed: list[str] | None = None,
) -> ImportResult:
    """Write the outages and an observed window for every named target (idempotent)."""
    names = {r.target for r in rows} | set(also_observed or ())
    ids = dict(session.execute(select(Target.name, Target.id).where(Target.name.in_(names))).all())
    unknown = sorted(names - set(ids))
    if unknown:
        raise ConfigError(
            [f"no target named {n!r} (register it in the config or the API first)" for n in unknown]
        )
    outages = [
        {
            "target_id": ids[r.target],
            "series": "reachable",
            "start": r.start,
            "end": r.end,
            "confirmed_at": r.start,
            "cause": r.cause,
            "source": "import",
            "detail": {"line": r.line},
        }
        for r in rows
    ]
    windows = [
        {"target_id": ids[n], "start": observed_from, "end": observed_to, "source": "import"}
        for n in sorted(names)
    ]
    added = insert_ignoring_conflicts(session, Outage, outages, ["target_id", "series", "start"])
    opened = insert_ignoring_conflicts(
        session, ObservedWindow, windows, ["target_id", "start", "end"]
    )
    return ImportResult(len(rows), added, opened)
