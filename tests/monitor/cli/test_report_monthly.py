"""`slamon import outages` then `slamon report monthly`, as an operator runs them, on SQLite and
PostgreSQL: history imported for a month before slamon knew the targets, and a fleet whose
targets name no provider (their SLA policies do)."""

from __future__ import annotations

import csv
import io
import json
import os
import re
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa

from tests.monitor.reports.test_assemble import FLEET
from tests.support import PG_TEST_DB, recreate_pg_database, slamon_command, unavailable

MONTH = "2025-03"  # long before the targets are registered (when the test runs)
HOURS = 31 * 24
DAY = 86400


@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)])
def database(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """A fresh database's URL, of each kind."""
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'slamon.db'}"
        return
    try:
        url = recreate_pg_database(f"{PG_TEST_DB}_cli_report")
    except sa.exc.OperationalError as exc:
        unavailable("PostgreSQL", exc.orig)
    yield url


def run(folder: Path, *args: str, database: str | None = None) -> subprocess.CompletedProcess[str]:
    """`slamon ARGS…` in ``folder`` (its config: ``slamon.yaml`` there)."""
    env = {**os.environ, "SLAMON_CONFIG": "slamon.yaml"}
    if database is not None:
        env["SLAMON_DATABASE_URL"] = database
    return subprocess.run(
        [*slamon_command(), *args],
        cwd=folder,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


@pytest.fixture
def slamon(database: str, tmp_path: Path):  # type: ignore[no-untyped-def]
    """Runs `slamon ARGS…` in ``tmp_path`` against ``database``."""
    return lambda *args: run(tmp_path, *args, database=database)


def ok(result: subprocess.CompletedProcess[str]) -> str:
    assert result.returncode == 0, result.stderr
    return result.stdout


def json_report(slamon: Any) -> dict[str, Any]:
    document: dict[str, Any] = json.loads(
        ok(slamon("report", "monthly", "--month", MONTH, "--format", "json", "--out", "-"))
    )
    return document


# --------------------------------------------------------------------------- finding 4

HISTORY_CONFIG = """
targets:
  - {name: trainer-0, kind: tcp, url: 'tcp://10.0.0.5:22', provider: aws, sla: aws-ec2-instance,
     gpus: 8, hourly_price: 98.32}
  - {name: trainer-1, kind: tcp, url: 'tcp://10.0.0.6:22', provider: aws, sla: aws-ec2-instance,
     gpus: 8, hourly_price: 98.32}
"""
HISTORY_CSV = """target,start,end,cause
trainer-0,2025-03-03T10:00:00Z,2025-03-03T12:00:00Z,regional
trainer-0,2025-03-12T00:00:00Z,2025-03-12T01:00:00Z,
"""


def test_history_imported_for_a_month_before_registration_is_reported(
    slamon: Any, tmp_path: Path
) -> None:
    (tmp_path / "slamon.yaml").write_text(HISTORY_CONFIG)
    (tmp_path / "history.csv").write_text(HISTORY_CSV)
    ok(slamon("migrate"))
    imported = slamon(
        "import",
        "outages",
        "history.csv",
        "--observed-from",
        "2025-03-01T00:00:00Z",
        "--observed-to",
        "2025-03-21T00:00:00Z",
        "--also-observed",
        "trainer-1",
    )
    assert "2 rows, 2 new outages, 2 new observed windows" in ok(imported)
    document = json_report(slamon)
    targets = {t["name"]: t for t in document["targets"]}
    assert sorted(targets) == ["trainer-0", "trainer-1"]
    t0, t1 = targets["trainer-0"], targets["trainer-1"]
    assert [(o["start"], o["end"]) for o in t0["outages"]] == [
        ("2025-03-03T10:00:00Z", "2025-03-03T12:00:00Z"),
        ("2025-03-12T00:00:00Z", "2025-03-12T01:00:00Z"),
    ]
    assert (t0["downtime_s"], t0["observed_s"], t0["unknown_s"]) == (3 * 3600, 20 * DAY, 11 * DAY)
    assert t0["uptime_pct"] == pytest.approx(100 * (1 - 3 / (20 * 24)))  # 99.375: below 99.5
    assert (t0["credit_pct"], t0["gpu_hours_lost"]) == (10.0, 24.0)
    assert (t1["uptime_pct"], t1["unknown_s"], t1["outages"]) == (100.0, 11 * DAY, [])
    [aws] = document["providers"]
    assert aws["slug"] == "aws"
    assert aws["credit_amount"] == pytest.approx(0.10 * 98.32 * HOURS)


# --------------------------------------------------------------------------- finding 7

# the fleet of tests/monitor/reports/test_assemble.py: name -> (policy, hourly price, hours
# down, credit % owed)
CREDIT = sum(credit / 100 * price * HOURS for _, price, _, credit in FLEET.values())
GPU_HOURS_LOST = sum(8 * down for _, _, down, _ in FLEET.values())


def fleet_files(folder: Path) -> None:
    """The fleet's config (no ``provider:`` anywhere) and its March outages as a CSV."""
    targets = "".join(
        f"  - {{name: {n}, kind: tcp, url: 'tcp://10.0.1.{i}:22', sla: {sla}, gpus: 8, "
        f"hourly_price: {price}}}\n"
        for i, (n, (sla, price, _, _)) in enumerate(FLEET.items())
    )
    (folder / "slamon.yaml").write_text("targets:\n" + targets)
    rows = "".join(
        f"{n},2025-03-05T00:00:00Z,{_hours_after('2025-03-05T00:00:00', down)}\n"
        for n, (_, _, down, _) in FLEET.items()
        if down
    )
    (folder / "outages.csv").write_text("target,start,end\n" + rows)


def _hours_after(start: str, hours: int) -> str:
    from datetime import datetime, timedelta

    return f"{datetime.fromisoformat(start) + timedelta(hours=hours):%Y-%m-%dT%H:%M:%S}Z"


def test_a_fleet_without_provider_fields_is_owed_its_credits_in_every_format(
    slamon: Any, tmp_path: Path
) -> None:
    fleet_files(tmp_path)
    assert "ok (0 providers, 10 targets" in ok(slamon("config", "check"))
    ok(slamon("migrate"))
    quiet = [a for n, f in FLEET.items() if not f[2] for a in ("--also-observed", n)]
    window = ("--observed-from", "2025-03-01T00:00:00Z", "--observed-to", "2025-04-01T00:00:00Z")
    ok(slamon("import", "outages", "outages.csv", *window, *quiet))

    document = json_report(slamon)
    targets = {t["name"]: t for t in document["targets"]}
    assert {n: t["credit_pct"] for n, t in targets.items()} == {n: f[3] for n, f in FLEET.items()}
    assert {n: t["provider"] for n, t in targets.items()} == {n: n.split("-")[0] for n in FLEET}
    assert sum(t["credit_amount"] for t in targets.values()) == pytest.approx(CREDIT)
    assert sorted(p["slug"] for p in document["providers"]) == ["aws", "azure", "gcp"]
    assert sum(p["credit_amount"] for p in document["providers"]) == pytest.approx(CREDIT)
    assert sum(p["gpu_hours_lost"] for p in document["providers"]) == GPU_HOURS_LOST

    owed, lost = f"{CREDIT:,.2f}", f"{GPU_HOURS_LOST:,.2f}"
    page = report_file(slamon, tmp_path, "html").decode()
    assert re.search(r'>Credit owed</span><span class="value">([^<]*)<', page)[1] == owed  # type: ignore[index]
    for key in ("scorecard", "sla", "impact"):
        shown = page[page.index(f'<section id="{key}">') :]
        shown = shown[: shown.index("</section>")]
        assert "None." not in shown, key
        assert all(f"<td>{slug}</td>" in shown for slug in ("aws", "gcp", "azure")), key
    assert f'<span class="value">{lost}</span>' in page

    rows = list(csv.reader(io.StringIO(report_file(slamon, tmp_path, "csv").decode("utf-8-sig"))))
    header = next(r for r in rows if r[:3] == ["section", "name", "provider"])
    credits = [float(r[header.index("credit_amount")]) for r in rows if r[:1] == ["target"]]
    assert sum(credits) == pytest.approx(CREDIT)

    if shutil.which("pdftotext"):
        pdf = tmp_path / "report.pdf"
        pdf.write_bytes(report_file(slamon, tmp_path, "pdf"))
        text = subprocess.run(
            ["pdftotext", str(pdf), "-"], check=True, capture_output=True, text=True
        ).stdout
        assert owed in text
        assert lost in text


def report_file(slamon: Any, folder: Path, fmt: str) -> bytes:
    out = folder / f"report.{fmt}"
    ok(slamon("report", "monthly", "--month", MONTH, "--format", fmt, "--out", str(out)))
    return out.read_bytes()


def test_config_check_refuses_a_provider_that_is_not_its_policys(tmp_path: Path) -> None:
    (tmp_path / "slamon.yaml").write_text(
        "targets:\n"
        "  - {name: gpu-0, kind: tcp, url: 'tcp://h:22', sla: aws-ec2-instance, provider: aws}\n"
        "  - {name: gpu-1, kind: tcp, url: 'tcp://h:22', sla: gcp-compute-single-vm,"
        " provider: aws}\n"
    )
    result = run(tmp_path, "config", "check")
    assert result.returncode == 1
    assert result.stderr.splitlines() == [
        "error: targets[1].provider (line 3): target 'gpu-1' names provider 'aws', but its SLA "
        "policy 'gcp-compute-single-vm' belongs to provider 'gcp' (leave provider out, or "
        "choose a policy of 'aws')"
    ]
