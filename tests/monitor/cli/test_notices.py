"""`slamon notices post | list | end` as an operator runs them, on a SQLite file and on
PostgreSQL: posted ahead a notice is upcoming, ended it is past, bad input is one line and exit
1 with nothing stored."""

from __future__ import annotations

import json
import os
import subprocess
from datetime import datetime, timedelta
from pathlib import Path

import pytest
import sqlalchemy as sa

from monitor.db.base import utcnow
from tests.support import PG_TEST_DB, recreate_pg_database, slamon_command, unavailable


@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)])
def database(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A fresh database's URL, migrated by `slamon migrate`."""
    if request.param == "sqlite":
        url = f"sqlite:///{tmp_path / 'slamon.db'}"
    else:
        try:
            url = recreate_pg_database(f"{PG_TEST_DB}_notices_cli")
        except sa.exc.OperationalError as exc:
            unavailable("PostgreSQL", exc.orig)
    migrated = slamon("migrate", database=url, cwd=tmp_path)
    assert migrated.returncode == 0, migrated.stderr
    return url


def slamon(*args: str, database: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "SLAMON_DATABASE_URL": database, "SLAMON_CONFIG": str(cwd / "none.yaml")}
    return subprocess.run(
        [*slamon_command(), *args], cwd=cwd, env=env, capture_output=True, text=True,
        timeout=120, check=False,
    )  # fmt: skip


def records(result: subprocess.CompletedProcess[str]) -> list[dict[str, object]]:
    assert result.returncode == 0, result.stderr
    return [json.loads(line) for line in result.stdout.splitlines()]


def iso(moment: datetime) -> str:
    return moment.isoformat()


def test_post_list_and_end_as_an_operator(database: str, tmp_path: Path) -> None:
    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return slamon("notices", *args, database=database, cwd=tmp_path)

    starts = utcnow() + timedelta(days=1)
    [ahead] = records(
        run("post", "--title", "Fabric swap", "--kind", "maintenance", "--starts", iso(starts),
            "--for", "2h", "--pool", "a100", "--body", "Jobs pause.", "--json")
    )  # fmt: skip
    assert ahead["phase"] == "upcoming"
    assert ahead["ends_at"] == iso(starts + timedelta(hours=2))
    assert ahead["scope"] == {"provider": None, "region": None, "pool": "a100", "targets": []}
    assert ahead["in_sla"] is True
    assert str(ahead["created_by"]).startswith("cli")
    now = run("post", "--title", "Quota raised", "--target", "gpu-1", "--target", "gpu-2")
    assert now.returncode == 0, now.stderr
    assert "current" in now.stdout
    assert "[gpu-1, gpu-2]" in now.stdout

    listed = records(run("list", "--json"))
    assert [(r["title"], r["phase"]) for r in listed] == [
        ("Quota raised", "current"),
        ("Fabric swap", "upcoming"),
    ]
    current_id = listed[0]["id"]
    ended = run("end", str(current_id))
    assert ended.returncode == 0, ended.stderr
    assert f"{current_id} past" in ended.stdout
    assert [r["title"] for r in records(run("list", "--json"))] == ["Fabric swap"]
    every = records(run("list", "--all", "--json"))
    assert [(r["title"], r["phase"], r["ended_by"] is not None) for r in every] == [
        ("Fabric swap", "upcoming", False),
        ("Quota raised", "past", True),
    ]
    again = run("end", str(current_id))
    assert (again.returncode, again.stdout.strip()) == (
        0,
        f"notice {current_id} was already over; left as it was",
    )


BAD = {
    "error: --ends: must be after the start": (
        "--starts", "2031-01-02T00:00:00Z", "--ends", "2031-01-01T00:00:00Z",
    ),
    "error: --ends: maintenance needs an end (when the work is done)": ("--kind", "maintenance"),
    "error: --ends '2031-01-01T00:00:00' has no UTC offset (write e.g. 2026-10-01T12:00:00Z)": (
        "--ends", "2031-01-01T00:00:00",
    ),
    "error: --starts 'tomorrow' is not an ISO 8601 time": ("--starts", "tomorrow"),
    "error: --for: must be longer than nothing": ("--for", "0s"),
    "error: give --ends or --for, not both": ("--for", "1h", "--ends", "2031-01-01T00:00:00Z"),
    "error: --ends: is already past: there is nothing left to announce": (
        "--ends", "2020-01-01T00:00:00Z", "--starts", "2019-01-01T00:00:00Z",
    ),
    "error: --title: must not be empty": ("--title", " "),
}  # fmt: skip


def test_bad_input_is_one_line_and_stores_nothing(database: str, tmp_path: Path) -> None:
    for said, args in BAD.items():
        bad = slamon("notices", "post", "--title", "x", *args, database=database, cwd=tmp_path)
        assert (bad.returncode, bad.stderr.strip().splitlines()) == (1, [said])
    listed = slamon("notices", "list", "--all", "--json", database=database, cwd=tmp_path)
    assert records(listed) == []


def test_ending_a_notice_that_is_not_there_says_so(database: str, tmp_path: Path) -> None:
    missing = slamon("notices", "end", "42", database=database, cwd=tmp_path)
    assert (missing.returncode, missing.stderr.strip()) == (1, "error: no notice 42")
