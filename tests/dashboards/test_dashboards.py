"""The Grafana dashboards in dashboards/: their JSON follows Grafana's dashboard model, and every
panel's and variable's SQL runs on a real, migrated PostgreSQL holding seeded rows, with
Grafana's macros and template variables expanded here the way Grafana expands them."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa
from sqlalchemy import Connection, Engine
from sqlalchemy.orm import Session

from dashboards.grafana_vars import ALL, Selection, TimeRange, expand
from monitor.db import models as m

DASHBOARDS = Path(__file__).resolve().parents[2] / "dashboards"
DATASOURCE = {"type": "grafana-postgresql-datasource", "uid": "slamon-postgres"}
FILES = ["alerts.json", "gpu-fleet.json", "provider-health.json", "sla-compliance.json"]
TO = datetime.now(UTC).replace(microsecond=0)
FROM = TO - timedelta(days=7)
TIME = TimeRange(FROM, TO, "1h", 3_600_000)
VARIABLES = ["provider", "region", "pool"]
ALL_VALUE = "'__all__'"
GRAFANA_ROLE = "slamon_grafana"
NO_SUCH_PROVIDER = "no-such-provider"
# Panels that do not narrow by a variable, and why: (dashboard uid, panel id) -> variables.
UNFILTERED: dict[tuple[str, int], set[str]] = {
    ("slamon-alerts", 7): {"provider", "region", "pool"},  # slamon's own Celery tasks
    # an incident names regions, never a pool
    **{("slamon-provider-health", panel): {"pool"} for panel in range(1, 7)},
    ("slamon-provider-health", 8): {"region", "pool"},  # a status feed covers a whole provider
    ("slamon-provider-health", 9): {"region", "pool"},  # so does the status page's verdict
}

# Columns each table/stat panel must return, by (dashboard uid, panel id).
TABLE_COLUMNS: dict[tuple[str, int], list[str]] = {
    ("slamon-provider-health", 1): ["open_incidents"],
    ("slamon-provider-health", 2): [
        "provider", "title", "impact", "status", "started_at", "open_minutes", "url",
    ],
    ("slamon-provider-health", 4): [
        "time", "provider", "title", "impact", "status", "acknowledged_at", "resolved_at",
        "duration_minutes", "maintenance",
    ],
    ("slamon-provider-health", 5): [
        "provider", "incidents", "tta_minutes", "ttr_minutes", "ttr_max_minutes",
    ],
    ("slamon-provider-health", 7): [
        "time", "provider", "title", "lag_minutes", "seen_after_minutes",
    ],
    ("slamon-provider-health", 8): [
        "provider", "kind", "feed_state", "url", "last_success_at", "seconds_since_success",
        "consecutive_failures", "last_error",
    ],
    ("slamon-provider-health", 9): [
        "provider", "state", "feed_state", "last_success_at", "open_incidents",
        "open_maintenance",
    ],
    ("slamon-provider-health", 10): [
        "provider", "targets", "reachable_pct", "usable_pct", "unknown_pct", "down_minutes",
        "unusable_minutes", "unknown_minutes",
    ],
    ("slamon-gpu-fleet", 1): [
        "reachable_up", "reachable_down", "reachable_unknown", "usable_up", "usable_down",
        "usable_unknown",
    ],
    ("slamon-gpu-fleet", 2): [
        "target", "provider", "region", "pool", "instance_type", "gpus", "reachable", "usable",
        "since",
    ],
    ("slamon-gpu-fleet", 8): [
        "time", "target", "provider", "pool", "series", "cause", "end", "duration_minutes",
    ],
    ("slamon-sla-compliance", 1): [
        "target", "provider", "pool", "uptime_pct", "target_pct", "downtime_minutes",
        "budget_used_pct", "meets_target",
    ],
    ("slamon-sla-compliance", 2): ["metric", "uptime_pct"],
    ("slamon-sla-compliance", 3): [
        "provider", "pool", "targets", "uptime_pct", "target_pct", "budget_used_pct",
    ],
    ("slamon-sla-compliance", 6): [
        "provider", "month", "scope", "credit_pct", "deadline", "claimed",
    ],
    ("slamon-sla-compliance", 7): [
        "provider", "instance_type", "unit", "targets", "work_millions",
        "list_price_per_million", "effective_price_per_million",
    ],
    ("slamon-sla-compliance", 8): [
        "provider", "instance_type", "capacity", "instances", "instance_hours", "preemptions",
        "provider_ends", "interruptions_per_1000h",
    ],
    ("slamon-alerts", 1): ["firing", "silenced"],
    ("slamon-alerts", 2): [
        "time", "severity", "rule", "summary", "provider", "target", "last_notified_at",
        "suppressed",
    ],
    ("slamon-alerts", 5): ["metric", "deliveries"],
    ("slamon-alerts", 6): [
        "time", "channel", "kind", "event", "status", "attempts", "last_status_code",
        "last_error", "rule", "summary",
    ],
    ("slamon-alerts", 7): [
        "task", "runs", "failures", "mean_seconds", "last_seconds", "last_finished_at",
        "seconds_since_last",
    ],
}  # fmt: skip


def load(name: str) -> dict[str, Any]:
    return json.loads((DASHBOARDS / name).read_text(encoding="utf-8"))  # type: ignore[no-any-return]


def panels() -> Iterator[tuple[str, dict[str, Any], dict[str, Any]]]:
    for name in FILES:
        dashboard = load(name)
        for panel in dashboard["panels"]:
            yield name, dashboard, panel


PANELS = [pytest.param(n, p, id=f"{d['uid']}-{p['id']}-{p['type']}") for n, d, p in panels()]


# --------------------------------------------------------------------------- structure


@pytest.mark.parametrize("name", FILES)
def test_dashboard_follows_grafanas_model(name: str) -> None:
    dashboard = load(name)
    assert re.fullmatch(r"[a-zA-Z0-9_-]{1,40}", dashboard["uid"])
    assert dashboard["title"].startswith("slamon")
    assert 36 <= dashboard["schemaVersion"] <= 41
    assert set(dashboard["time"]) == {"from", "to"}
    ids = [panel["id"] for panel in dashboard["panels"]]
    assert len(ids) == len(set(ids)), "panel ids must be unique"
    for panel in dashboard["panels"]:
        assert isinstance(panel["id"], int)
        assert panel["type"] in {
            "stat", "table", "timeseries", "state-timeline", "bargauge", "piechart",
        }  # fmt: skip
        assert panel["title"]
        assert panel["datasource"] == DATASOURCE
        grid = panel["gridPos"]
        assert set(grid) == {"h", "w", "x", "y"}
        assert grid["x"] + grid["w"] <= 24
        assert panel["targets"]
        for target in panel["targets"]:
            assert target["refId"]
            assert target["rawSql"].strip().upper().startswith(("SELECT", "WITH"))
            assert target["format"] in {"table", "time_series"}
            assert target["datasource"] == DATASOURCE
    for variable in dashboard["templating"]["list"]:
        assert variable["name"] in {"provider", "region", "pool"}
        assert variable["type"] == "query"
        assert variable["includeAll"] is True
        assert variable["multi"] is True
        assert variable["datasource"] == DATASOURCE
        assert variable["query"]


@pytest.mark.parametrize("name", FILES)
def test_every_variable_a_panel_uses_is_defined(name: str) -> None:
    dashboard = load(name)
    defined = {v["name"] for v in dashboard["templating"]["list"]}
    for panel in dashboard["panels"]:
        for target in panel["targets"]:
            used = set(re.findall(r"\$(?!__)(\w+)", target["rawSql"]))
            assert used <= defined, (panel["title"], used - defined)


def test_the_dashboard_uids_are_stable_and_distinct() -> None:
    uids = [load(name)["uid"] for name in FILES]
    assert uids == [
        "slamon-alerts", "slamon-gpu-fleet", "slamon-provider-health", "slamon-sla-compliance",
    ]  # fmt: skip


def test_every_table_panel_has_its_columns_listed_here() -> None:
    tables = {(d["uid"], p["id"]) for _, d, p in panels() if p["targets"][0]["format"] == "table"}
    assert tables == set(TABLE_COLUMNS)


@pytest.mark.parametrize("name", FILES)
def test_every_dashboard_has_provider_region_and_pool_variables(name: str) -> None:
    assert [v["name"] for v in load(name)["templating"]["list"]] == VARIABLES


@pytest.mark.parametrize("name", FILES)
def test_every_variable_defaults_to_all_with_a_custom_all_value(name: str) -> None:
    # Without a custom allValue, "All" over an empty option list is `IN ()`: a syntax error.
    for variable in load(name)["templating"]["list"]:
        assert variable["includeAll"] is True, variable["name"]
        assert variable["allValue"] == ALL_VALUE, variable["name"]
        assert variable["current"]["value"] == [ALL], variable["name"]
        assert variable["definition"] == variable["query"]


@pytest.mark.parametrize("name", FILES)
def test_region_and_pool_narrow_to_the_variables_before_them(name: str) -> None:
    queries = {v["name"]: v["query"] for v in load(name)["templating"]["list"]}
    assert "$provider" in queries["region"]
    assert {"$provider", "$region"} <= set(re.findall(r"\$\w+", queries["pool"]))


@pytest.mark.parametrize(("name", "panel"), PANELS)
def test_every_panel_narrows_by_each_variable_unless_listed_here(
    name: str, panel: dict[str, Any]
) -> None:
    uid = load(name)["uid"]
    sql = " ".join(target["rawSql"] for target in panel["targets"])
    used = {v for v in VARIABLES if re.search(rf"\${v}\b", sql)}
    assert set(VARIABLES) - used == UNFILTERED.get((uid, panel["id"]), set()), panel["title"]


@pytest.mark.parametrize("name", FILES)
def test_panel_titles_are_unique_and_the_dashboard_is_not_editable(name: str) -> None:
    # Provisioned dashboards cannot be saved from the UI: editable would only invite lost edits.
    dashboard = load(name)
    titles = [panel["title"] for panel in dashboard["panels"]]
    assert len(titles) == len(set(titles)), titles
    assert dashboard["editable"] is False


@pytest.mark.parametrize(
    ("uid", "panel_id"),
    [("slamon-sla-compliance", 2), ("slamon-alerts", 5)],
)
def test_a_panel_with_one_value_per_row_shows_every_row(uid: str, panel_id: int) -> None:
    # Grafana's default reduces each column to its last value: one bar or slice, not one per row.
    (panel,) = [p for _, d, p in panels() if d["uid"] == uid and p["id"] == panel_id]
    assert panel["type"] in {"bargauge", "piechart"}
    assert panel["options"]["reduceOptions"] == {"values": True, "calcs": [], "fields": ""}


# --------------------------------------------------------------------------- SQL on PostgreSQL


def seed(session: Session) -> None:
    now = TO
    month0 = now.replace(day=1, hour=0, minute=0, second=0)
    # Outages must fall inside both the 7-day range and the month for every panel to see one.
    recent = max(now - timedelta(hours=3), month0 + timedelta(minutes=1))
    lambda_ = m.Provider(slug="lambda", name="Lambda", regions=["us-east-1"], sla_policy="gold")
    runpod = m.Provider(slug="runpod", name="RunPod", regions=["eu-1"])
    session.add_all([lambda_, runpod])
    session.add(m.SlaPolicy(name="gold", definition={"target_pct": 99.5}, definition_hash="h" * 64))
    session.flush()
    feed = m.Feed(
        provider_id=lambda_.id, kind="statuspage", url="https://status.lambda.test",
        last_polled_at=now - timedelta(minutes=1), last_success_at=now - timedelta(minutes=2),
        consecutive_failures=1, last_error="timeout",
    )  # fmt: skip
    session.add(feed)
    targets = [
        m.Target(name="gpu-a", kind="http", provider="lambda", region="us-east-1", pool="h100",
                 gpus=8, instance_type="8xH100", sla_policy="gold", hourly_price=24.0,
                 created_at=now - timedelta(hours=48)),
        m.Target(name="gpu-b", kind="http", provider="lambda", region="us-east-1", pool="h100",
                 gpus=8),
        m.Target(name="gpu-c", kind="http", provider="runpod", region=None, pool=None, gpus=1,
                 created_at=now - timedelta(hours=24)),  # but observed only for 2 h
    ]  # fmt: skip
    session.add_all(targets)
    session.flush()
    for target in targets:
        # observed for the last two days (what the probe rounds record), but gpu-c since 2 h:
        # before that its time is unknown
        observed_from = now - timedelta(hours=2 if target.name == "gpu-c" else 48)
        session.add(
            m.ObservedWindow(target_id=target.id, start=observed_from, end=now, source="probe")
        )
        for series in ("reachable", "usable"):
            state = "down" if target.name == "gpu-b" and series == "reachable" else "up"
            session.add(
                m.TargetState(
                    target_id=target.id, vantage="*", series=series, state=state,
                    since=now - timedelta(hours=3),
                )
            )  # fmt: skip
        for hours in range(0, 48):
            at = now.replace(minute=0, second=0) - timedelta(hours=hours)
            session.add(
                m.ProbeRollup(
                    target_id=target.id, resolution="hour", bucket_start=at, count=120,
                    failures=10 if hours < 3 else 0, unknown=0, latency_p50_ms=20.0,
                    latency_p95_ms=80.0 + hours, latency_max_ms=200.0,
                )
            )  # fmt: skip
            session.add(
                m.ProbeResult(
                    target_id=target.id, vantage="v1", at=at, ok=hours >= 3,
                    usable=not (target.name == "gpu-a" and hours == 1), latency_ms=25.0,
                )
            )  # fmt: skip
        for minutes in range(0, 120, 5):
            session.add(
                m.ProbeRollup(
                    target_id=target.id, resolution="minute",
                    bucket_start=now.replace(second=0) - timedelta(minutes=minutes),
                    count=2, failures=0, unknown=0, latency_p50_ms=20.0, latency_p95_ms=40.0,
                    latency_max_ms=90.0,
                )
            )  # fmt: skip
    session.add_all(
        [
            m.Outage(target_id=targets[1].id, series="reachable", start=recent, end=None,
                     confirmed_at=recent, cause="timeout"),
            m.Outage(target_id=targets[0].id, series="reachable", start=recent,
                     end=recent + timedelta(minutes=30), cause="connect"),
            m.Outage(target_id=targets[0].id, series="usable", start=recent,
                     end=recent + timedelta(minutes=10), cause="gpu"),
        ]
    )  # fmt: skip
    started = recent + timedelta(minutes=20)
    session.add_all(
        [
            m.Incident(provider_id=lambda_.id, feed_id=feed.id, source_id="inc-1",
                       title="H100 instances unreachable", status="investigating",
                       impact="major", started_at=started, first_seen_at=started
                       + timedelta(minutes=3), content_hash="a" * 64, regions=["us-east-1"],
                       relevant=True),  # it names the region gpu-a and gpu-b are in
            m.Incident(provider_id=lambda_.id, source_id="inc-2", title="API errors",
                       status="resolved", impact="minor", started_at=now - timedelta(days=2),
                       acknowledged_at=now - timedelta(days=2) + timedelta(minutes=7),
                       resolved_at=now - timedelta(days=2) + timedelta(minutes=50),
                       content_hash="b" * 64),
        ]
    )  # fmt: skip
    session.add(
        m.CreditClaim(provider="lambda", month=now.strftime("%Y-%m"), scope="pool:h100",
                      credit_pct=10.0, deadline=now + timedelta(days=30))
    )  # fmt: skip
    channel = m.Channel(name="ops-webhook", kind="webhook")
    firing = m.Alert(fingerprint="f1", rule="target_down", severity="critical",
                     labels={"provider": "lambda", "target": "gpu-b"}, summary="gpu-b is down",
                     state="firing", started_at=recent)  # fmt: skip
    silenced = m.Alert(fingerprint="f2", rule="feed_failing", severity="warning", labels={},
                       summary="feed failing", state="firing", started_at=recent,
                       suppressed=True)  # fmt: skip
    session.add_all([channel, firing, silenced])
    session.flush()
    for key, status, error in (("k1", "delivered", None), ("k2", "failed", "HTTP 500")):
        session.add(
            m.Delivery(alert_id=firing.id, channel_id=channel.id, event="firing",
                       idempotency_key=key, payload={}, status=status, attempts=3,
                       last_status_code=500 if error else 200, last_error=error,
                       created_at=recent)
        )  # fmt: skip
    session.add(
        m.TaskStat(task="slamon.probes.run_shard", runs=10, failures=1, seconds_total=4.0,
                   last_seconds=0.5, last_finished_at=now - timedelta(seconds=20))
    )  # fmt: skip
    # gpu-a (a Lambda 8xH100) runs a training job reporting 1,000 tokens/s every minute for the
    # last two hours (within the month), silent for ten minutes in the middle
    job = targets[0]
    first = max(now - timedelta(hours=2), month0 + timedelta(minutes=1))
    minute = 0
    while first + timedelta(minutes=minute) <= now:
        if not 50 <= minute < 60:
            session.add(
                m.Heartbeat(target_id=job.id, at=first + timedelta(minutes=minute), step=minute,
                            throughput=1000.0, payload={"unit": "tokens"})
            )  # fmt: skip
        minute += 1
    session.flush()


@pytest.fixture(scope="module")
def seeded(postgresql_engine: Engine) -> Iterator[Connection]:
    """A connection to the real PostgreSQL inside a transaction holding the seed rows; rolled
    back at the end, so the database is left as found."""
    connection = postgresql_engine.connect()
    outer = connection.begin()
    session = Session(bind=connection, join_transaction_mode="create_savepoint")
    try:
        seed(session)
        yield connection
    finally:
        session.close()
        outer.rollback()
        connection.close()


@pytest.fixture(scope="module")
def empty(postgresql_engine: Engine) -> Iterator[Connection]:
    """A connection to the freshly migrated PostgreSQL, as `slamon migrate` leaves it: no rows
    (the seeded fixture's rows are in a transaction it never commits)."""
    connection = postgresql_engine.connect()
    outer = connection.begin()
    try:
        for table in ("providers", "targets", "alerts", "incidents", "credit_claims"):
            assert connection.execute(sa.text(f"SELECT count(*) FROM {table}")).scalar_one() == 0
        yield connection
    finally:
        outer.rollback()
        connection.close()


@contextmanager
def as_grafana(connection: Connection) -> Iterator[Connection]:
    """Run as the SELECT-only role Grafana's datasource uses; the savepoint is rolled back, which
    undoes the SET LOCAL ROLE too."""
    savepoint = connection.begin_nested()
    try:
        connection.execute(sa.text(f"SET LOCAL ROLE {GRAFANA_ROLE}"))
        yield connection
    finally:
        savepoint.rollback()


def resolve(
    connection: Connection, dashboard: dict[str, Any], picks: dict[str, list[str]] | None = None
) -> dict[str, Selection]:
    """Run each variable's query in order, as Grafana does on load (later ones see earlier
    ones' selections), and select ``picks`` or, by default, All."""
    selections: dict[str, Selection] = {}
    for variable in dashboard["templating"]["list"]:
        with as_grafana(connection):
            sql = expand(variable["query"], selections, TIME)
            options = [str(row[0]) for row in connection.execute(sa.text(sql)).all()]
        selected = (picks or {}).get(variable["name"], [ALL])
        selections[variable["name"]] = Selection(variable, options, selected)
    return selections


def run_panel(
    connection: Connection,
    dashboard: dict[str, Any],
    panel: dict[str, Any],
    picks: dict[str, list[str]] | None = None,
) -> list[tuple[list[str], list[sa.Row[Any]]]]:
    """Every target of the panel run as Grafana's role: (columns, rows) for each."""
    selections = resolve(connection, dashboard, picks)
    results = []
    for target in panel["targets"]:
        with as_grafana(connection):
            result = connection.execute(sa.text(expand(target["rawSql"], selections, TIME)))
            results.append((list(result.keys()), result.all()))
    return results


@pytest.mark.postgres
def test_the_grafana_role_exists_and_cannot_write(postgresql_engine: Engine) -> None:
    with (
        postgresql_engine.connect() as connection,
        as_grafana(connection),
        pytest.raises(sa.exc.ProgrammingError, match="permission denied"),
    ):
        connection.execute(sa.text("DELETE FROM task_stats"))


@pytest.mark.postgres
@pytest.mark.parametrize("name", FILES)
def test_every_variable_query_returns_values(seeded: Connection, name: str) -> None:
    selections = resolve(seeded, load(name))
    for variable, selection in selections.items():
        assert selection.options, f"{variable} has no options"
    assert "lambda" in selections["provider"].options
    assert set(selections["pool"].options) == {"h100", "none"}


@pytest.mark.postgres
@pytest.mark.parametrize(("name", "panel"), PANELS)
def test_every_panel_query_runs_and_returns_the_expected_shape(
    seeded: Connection, name: str, panel: dict[str, Any]
) -> None:
    dashboard = load(name)
    for columns, rows in run_panel(seeded, dashboard, panel):
        assert rows, f"{panel['title']!r} returned no rows"
        if panel["targets"][0]["format"] == "time_series":
            assert columns[0] == "time"
            assert all(isinstance(row[0], datetime) for row in rows)
            times = [row[0] for row in rows]
            assert times == sorted(times), "Grafana wants time series sorted by time"
            values = [c for c in columns if c not in ("time", "metric")]
            assert len(values) == 1, columns
            assert any(row[-1] is not None for row in rows)
        else:
            assert columns == TABLE_COLUMNS[(dashboard["uid"], panel["id"])]


@pytest.mark.postgres
@pytest.mark.parametrize(("name", "panel"), PANELS)
def test_every_panel_query_runs_on_a_freshly_migrated_empty_database(
    empty: Connection, name: str, panel: dict[str, Any]
) -> None:
    for columns, _ in run_panel(empty, load(name), panel):
        assert columns


@pytest.mark.postgres
@pytest.mark.parametrize(("name", "panel"), PANELS)
def test_every_panel_query_runs_when_the_selected_provider_has_no_rows(
    seeded: Connection, name: str, panel: dict[str, Any]
) -> None:
    for columns, _ in run_panel(seeded, load(name), panel, {"provider": [NO_SUCH_PROVIDER]}):
        assert columns


@pytest.mark.postgres
@pytest.mark.parametrize(("name", "panel"), PANELS)
def test_every_panel_query_runs_with_one_value_picked_in_each_variable(
    seeded: Connection, name: str, panel: dict[str, Any]
) -> None:
    picks = {"provider": ["lambda"], "region": ["us-east-1"], "pool": ["h100"]}
    for columns, _ in run_panel(seeded, load(name), panel, picks):
        assert columns


@pytest.mark.postgres
@pytest.mark.parametrize(
    ("uid", "panel_id", "picks", "count"),
    [
        pytest.param("slamon-gpu-fleet", 2, {"pool": ["none"]}, 1, id="fleet-pool-none"),
        pytest.param("slamon-gpu-fleet", 2, {"region": ["us-east-1"]}, 2, id="fleet-region"),
        pytest.param("slamon-sla-compliance", 6, {"pool": ["h100"]}, 1, id="credit-its-pool"),
        pytest.param("slamon-sla-compliance", 6, {"pool": ["none"]}, 0, id="credit-other-pool"),
        pytest.param("slamon-sla-compliance", 6, {"region": ["none"]}, 1, id="credit-no-region"),
        pytest.param("slamon-provider-health", 2, {"region": ["us-east-1"]}, 1, id="incident-in"),
        pytest.param("slamon-provider-health", 2, {"region": ["none"]}, 0, id="incident-out"),
        pytest.param("slamon-provider-health", 4, {"region": ["none"]}, 1, id="regionless-inc"),
        pytest.param("slamon-alerts", 2, {"pool": ["none"]}, 2, id="alerts-without-pool-label"),
    ],
)
def test_region_and_pool_narrow_the_panels_they_apply_to(
    seeded: Connection, uid: str, panel_id: int, picks: dict[str, list[str]], count: int
) -> None:
    (dashboard,) = [load(n) for n in FILES if load(n)["uid"] == uid]
    (panel,) = [p for p in dashboard["panels"] if p["id"] == panel_id]
    ((_, rows),) = run_panel(seeded, dashboard, panel, picks)
    assert len(rows) == count
