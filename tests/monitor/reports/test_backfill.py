from __future__ import annotations

from datetime import UTC, datetime

import pytest
from sqlalchemy import func, select
from sqlalchemy.orm import Session

from monitor.config.models import TargetConfig
from monitor.db.models import ObservedWindow, Outage
from monitor.errors import ConfigError
from monitor.reports.backfill import import_outages, read_rows
from monitor.targets import upsert_target

LO = datetime(2026, 8, 1, tzinfo=UTC)
HI = datetime(2026, 11, 1, tzinfo=UTC)
GOOD = """target,start,end,cause
gpu-0,2026-09-03T10:00:00Z,2026-09-03T10:42:00Z,regional
gpu-0,2026-10-31T23:50:00+00:00,2026-11-01T00:00:00+00:00,
gpu-1,2026-09-03T11:00:00-04:00,2026-09-03T11:30:00-04:00,single_instance
"""


def test_good_rows_read_as_utc() -> None:
    rows = read_rows(GOOD, LO, HI)
    assert [r.line for r in rows] == [2, 3, 4]
    assert rows[2].start == datetime(2026, 9, 3, 15, 0, tzinfo=UTC)
    assert (rows[0].cause, rows[1].cause) == ("regional", None)


def test_every_bad_row_is_reported_with_its_line() -> None:
    text = """target,start,end,cause
gpu-0,2026-09-03T10:00:00,2026-09-03T10:42:00Z,
,2026-09-03T10:00:00Z,2026-09-03T10:42:00Z,
gpu-0,2026-09-03T10:00:00Z,2026-09-03T09:00:00Z,
gpu-0,2026-12-03T10:00:00Z,2026-12-03T11:00:00Z,
gpu-0,yesterday,2026-09-03T11:00:00Z,
gpu-0,2026-09-03T10:00:00Z,2026-09-03T11:00:00Z,gremlins
"""
    with pytest.raises(ConfigError) as caught:
        read_rows(text, LO, HI)
    assert caught.value.problems == [
        "line 2: start '2026-09-03T10:00:00' has no UTC offset (write e.g. 2026-10-01T12:00:00Z)",
        "line 3: target is empty",
        "line 4: end is not after start",
        "line 5: the outage lies outside --observed-from/--observed-to",
        "line 6: start 'yesterday' is not an ISO 8601 time",
        "line 7: cause 'gremlins' is not one of gpu_hardware, provider_wide, regional, "
        "single_instance, stalled_step, unknown, vantage",
    ]


def test_missing_columns_are_named() -> None:
    with pytest.raises(ConfigError, match="missing: end"):
        read_rows("target,start\nx,2026-09-03T10:00:00Z\n", LO, HI)


def register(session: Session, *names: str) -> None:
    for name in names:
        upsert_target(session, TargetConfig(name=name, kind="tcp", url="tcp://h:22"), "config")
    session.flush()


def test_importing_twice_adds_nothing_the_second_time(session: Session) -> None:
    register(session, "gpu-0", "gpu-1", "spare")
    rows = read_rows(GOOD, LO, HI)
    first = import_outages(session, rows, LO, HI, ["spare"])
    second = import_outages(session, rows, LO, HI, ["spare"])
    assert (first.outages_added, first.windows_added) == (3, 3)
    assert (second.outages_added, second.windows_added) == (0, 0)
    assert session.scalar(select(func.count()).select_from(Outage)) == 3
    sources = set(session.scalars(select(ObservedWindow.source)))
    assert sources == {"import"}


def test_an_unknown_target_imports_nothing(session: Session) -> None:
    register(session, "gpu-0")
    with pytest.raises(ConfigError, match="no target named 'gpu-1'"):
        import_outages(session, read_rows(GOOD, LO, HI), LO, HI)
    assert session.scalar(select(func.count()).select_from(Outage)) == 0
