"""The read routes: providers, incidents, outages, alerts and month-to-date SLA."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from sqlalchemy.orm import Session, sessionmaker

from monitor.config.models import TargetConfig
from monitor.db.base import utcnow
from monitor.db.models import Alert, Feed, Incident, Outage, Provider, Vantage
from monitor.targets import upsert_target
from tests.support import ApiClient

T0 = datetime(2026, 3, 1, tzinfo=UTC)
ROUTES = ["/api/v1/providers", "/api/v1/incidents", "/api/v1/outages", "/api/v1/alerts"]


def get(api: ApiClient, path: str, headers: dict[str, str], **params: Any) -> Any:
    return api.get(path, headers=headers, params=params)


def seed(sessions: sessionmaker[Session]) -> None:
    with sessions() as session:
        aws = Provider(slug="aws", name="AWS", regions=["us-east-1", "eu-west-1"], sla_policy="ec2")
        gcp = Provider(slug="gcp", name="Google Cloud", regions=["us-central1"])
        session.add_all([aws, gcp])
        session.flush()
        session.add(
            Feed(
                provider_id=aws.id,
                kind="statuspage",
                url="https://status.aws.test/feed",
                enabled=True,
                last_success_at=T0,
                consecutive_failures=2,
                last_error="timeout",
            )
        )
        session.add_all(
            [
                Incident(
                    provider_id=aws.id,
                    source_id="inc-1",
                    title="EC2 degraded",
                    status="investigating",
                    impact="major",
                    started_at=T0,
                    acknowledged_at=T0 + timedelta(minutes=5),
                    regions=["us-east-1"],
                    components=["EC2"],
                    relevant=True,
                    url="https://status.aws.test/inc-1",
                    content_hash="a",
                ),
                Incident(
                    provider_id=aws.id,
                    source_id="inc-2",
                    title="S3 errors",
                    status="resolved",
                    impact="minor",
                    started_at=T0 - timedelta(days=10),
                    resolved_at=T0 - timedelta(days=9),
                    regions=["eu-west-1"],
                    components=["S3"],
                    relevant=False,
                    content_hash="b",
                ),
                Incident(
                    provider_id=gcp.id,
                    source_id="inc-3",
                    title="GCE maintenance",
                    status="completed",
                    impact="maintenance",
                    is_maintenance=True,
                    started_at=T0 - timedelta(days=1),
                    resolved_at=T0 - timedelta(hours=20),
                    regions=["us-central1"],
                    content_hash="c",
                ),
            ]
        )
        gpu0 = upsert_target(
            session,
            TargetConfig(name="gpu-0", kind="tcp", url="tcp://h:22", provider="aws", pool="h100"),
            "config",
        )
        gpu1 = upsert_target(
            session,
            TargetConfig(name="gpu-1", kind="tcp", url="tcp://h:22", provider="gcp"),
            "config",
        )
        session.flush()
        session.add_all(
            [
                Outage(
                    target_id=gpu0.id,
                    series="reachable",
                    start=T0,
                    end=T0 + timedelta(minutes=10),
                    cause="single_instance",
                    source="probe",
                    detail={},
                ),
                Outage(
                    target_id=gpu0.id,
                    series="usable",
                    start=T0 + timedelta(days=1),
                    end=None,
                    cause="gpu_hardware",
                    source="probe",
                    detail={},
                ),
                Outage(
                    target_id=gpu1.id,
                    series="reachable",
                    start=T0 - timedelta(days=5),
                    end=T0 - timedelta(days=4),
                    source="import",
                    detail={},
                ),
            ]
        )
        session.add_all(
            [
                Alert(
                    fingerprint="f1",
                    rule="target_down",
                    severity="critical",
                    labels={"target": "gpu-0"},
                    summary="gpu-0 is down",
                    state="firing",
                    started_at=T0,
                ),
                Alert(
                    fingerprint="f2",
                    rule="feed_stale",
                    severity="warning",
                    labels={},
                    summary="stale",
                    state="resolved",
                    started_at=T0 - timedelta(days=1),
                    resolved_at=T0,
                    suppressed=True,
                ),
            ]
        )
        session.commit()


@pytest.mark.parametrize("path", [*ROUTES, "/api/v1/sla", "/api/v1/vantages"])
def test_every_read_route_needs_a_token(api: ApiClient, path: str) -> None:
    response = api.get(path)
    assert response.status_code == 401
    assert response.json()["error"]["code"] == "unauthorized"
    assert response.headers["WWW-Authenticate"] == "Bearer"


@pytest.mark.parametrize("path", ROUTES)
def test_empty_lists_page(api: ApiClient, reader: dict[str, str], path: str) -> None:
    response = get(api, path, reader)
    assert response.status_code == 200
    assert response.json() == {
        "items": [],
        "total": 0,
        "limit": 100,
        "offset": 0,
        "next_offset": None,
    }


def test_providers_show_feeds_and_open_incidents(
    api: ApiClient, reader: dict[str, str], sessions: sessionmaker[Session]
) -> None:
    seed(sessions)
    body = get(api, "/api/v1/providers", reader).json()
    assert body["total"] == 2
    aws, gcp = body["items"]
    assert aws == {
        "slug": "aws",
        "name": "AWS",
        "sla_policy": "ec2",
        "regions": ["us-east-1", "eu-west-1"],
        "feeds": [
            {
                "kind": "statuspage",
                "url": "https://status.aws.test/feed",
                "enabled": True,
                "last_success_at": "2026-03-01T00:00:00Z",
                "consecutive_failures": 2,
                "last_error": "timeout",
            }
        ],
        "open_incidents": 1,
    }
    assert gcp["slug"] == "gcp"
    assert gcp["feeds"] == []
    assert gcp["open_incidents"] == 0


def test_providers_paginate(
    api: ApiClient, reader: dict[str, str], sessions: sessionmaker[Session]
) -> None:
    seed(sessions)
    first = get(api, "/api/v1/providers", reader, limit=1).json()
    assert [p["slug"] for p in first["items"]] == ["aws"]
    assert (first["total"], first["limit"], first["offset"], first["next_offset"]) == (2, 1, 0, 1)
    second = get(api, "/api/v1/providers", reader, limit=1, offset=1).json()
    assert [p["slug"] for p in second["items"]] == ["gcp"]
    assert second["next_offset"] is None


def test_incidents_values_and_filters(
    api: ApiClient, reader: dict[str, str], sessions: sessionmaker[Session]
) -> None:
    seed(sessions)

    def ids(**params: Any) -> list[str]:
        response = get(api, "/api/v1/incidents", reader, **params)
        assert response.status_code == 200, response.text
        return [i["source_id"] for i in response.json()["items"]]

    assert ids() == ["inc-1", "inc-3", "inc-2"]  # newest first
    first = get(api, "/api/v1/incidents", reader, limit=1).json()["items"][0]
    assert first == {
        "provider": "aws",
        "source_id": "inc-1",
        "title": "EC2 degraded",
        "status": "investigating",
        "impact": "major",
        "is_maintenance": False,
        "started_at": "2026-03-01T00:00:00Z",
        "acknowledged_at": "2026-03-01T00:05:00Z",
        "resolved_at": None,
        "regions": ["us-east-1"],
        "components": ["EC2"],
        "relevant": True,
        "url": "https://status.aws.test/inc-1",
    }
    assert ids(provider="aws") == ["inc-1", "inc-2"]
    assert ids(provider="nope") == []
    assert ids(region="eu-west-1") == ["inc-2"]
    assert ids(region="us") == []
    assert ids(status="open") == ["inc-1"]
    assert ids(status="resolved") == ["inc-3", "inc-2"]
    assert ids(relevant="true") == ["inc-1"]
    assert ids(relevant="false") == ["inc-3", "inc-2"]
    assert ids(since="2026-02-28T02:00:00+00:00") == ["inc-1", "inc-3"]
    assert ids(until="2026-02-25T00:00:00Z") == ["inc-2"]
    # 2026-02-28T01:00+02:00 is 2026-02-27T23:00Z: only the S3 incident had started before it
    assert ids(until="2026-02-28T01:00:00+02:00") == ["inc-2"]
    assert ids(provider="aws", status="open", region="us-east-1") == ["inc-1"]


@pytest.mark.parametrize("value", ["yesterday", "2026-03-01T00:00:00", "2026-13-01T00:00:00Z"])
@pytest.mark.parametrize("name", ["since", "until"])
def test_a_bad_time_is_422_naming_the_parameter(
    api: ApiClient, reader: dict[str, str], name: str, value: str
) -> None:
    for path in ("/api/v1/incidents", "/api/v1/outages"):
        response = get(api, path, reader, **{name: value})
        assert response.status_code == 422
        error = response.json()["error"]
        assert error["code"] == "validation_error"
        assert [(d["location"], d["path"]) for d in error["details"]] == [("query", name)]
        assert value not in response.text  # the input is not echoed


@pytest.mark.parametrize(
    ("path", "params", "field"),
    [
        ("/api/v1/incidents", {"status": "closed"}, "status"),
        ("/api/v1/alerts", {"state": "open"}, "state"),
        ("/api/v1/outages", {"series": "down"}, "series"),
        ("/api/v1/providers", {"limit": "0"}, "limit"),
        ("/api/v1/alerts", {"offset": "-1"}, "offset"),
        ("/api/v1/sla", {"month": "2026-13"}, "month"),
    ],
)
def test_bad_parameters_are_422(
    api: ApiClient, reader: dict[str, str], path: str, params: dict[str, str], field: str
) -> None:
    response = get(api, path, reader, **params)
    assert response.status_code == 422
    assert [d["path"] for d in response.json()["error"]["details"]] == [field]


def test_outages_values_and_filters(
    api: ApiClient, reader: dict[str, str], sessions: sessionmaker[Session]
) -> None:
    seed(sessions)

    def rows(**params: Any) -> list[tuple[str, str]]:
        response = get(api, "/api/v1/outages", reader, **params)
        assert response.status_code == 200, response.text
        return [(o["target"], o["series"]) for o in response.json()["items"]]

    everything = get(api, "/api/v1/outages", reader).json()
    assert everything["total"] == 3
    assert everything["items"][1] == {
        "target": "gpu-0",
        "series": "reachable",
        "start": "2026-03-01T00:00:00Z",
        "end": "2026-03-01T00:10:00Z",
        "cause": "single_instance",
        "source": "probe",
    }
    assert rows() == [("gpu-0", "usable"), ("gpu-0", "reachable"), ("gpu-1", "reachable")]
    assert rows(target="gpu-1") == [("gpu-1", "reachable")]
    assert rows(provider="aws") == [("gpu-0", "usable"), ("gpu-0", "reachable")]
    assert rows(series="usable") == [("gpu-0", "usable")]
    assert rows(open="true") == [("gpu-0", "usable")]
    assert rows(open="false") == [("gpu-0", "reachable"), ("gpu-1", "reachable")]
    assert rows(since="2026-03-01T00:05:00Z") == [("gpu-0", "usable"), ("gpu-0", "reachable")]
    assert rows(since="2026-03-01T00:10:00Z") == [("gpu-0", "usable")]
    assert rows(until="2026-03-01T00:00:00Z") == [("gpu-1", "reachable")]
    page = get(api, "/api/v1/outages", reader, limit=2, offset=2).json()
    assert (len(page["items"]), page["total"], page["next_offset"]) == (1, 3, None)


def test_alerts_values_and_filters(
    api: ApiClient, reader: dict[str, str], sessions: sessionmaker[Session]
) -> None:
    seed(sessions)
    body = get(api, "/api/v1/alerts", reader).json()
    assert [a["fingerprint"] for a in body["items"]] == ["f1", "f2"]
    assert body["items"][1] == {
        "fingerprint": "f2",
        "rule": "feed_stale",
        "severity": "warning",
        "labels": {},
        "summary": "stale",
        "state": "resolved",
        "started_at": "2026-02-28T00:00:00Z",
        "resolved_at": "2026-03-01T00:00:00Z",
        "suppressed": True,
    }
    firing = get(api, "/api/v1/alerts", reader, state="firing").json()
    assert [a["fingerprint"] for a in firing["items"]] == ["f1"]
    assert firing["items"][0]["labels"] == {"target": "gpu-0"}
    by_rule = get(api, "/api/v1/alerts", reader, rule="feed_stale", state="any").json()
    assert [a["fingerprint"] for a in by_rule["items"]] == ["f2"]
    first = get(api, "/api/v1/alerts", reader, limit=1).json()
    assert first["next_offset"] == 1


def test_sla_month_to_date(
    api: ApiClient, reader: dict[str, str], sessions: sessionmaker[Session]
) -> None:
    now = utcnow()
    with sessions() as session:
        row = upsert_target(
            session,
            TargetConfig(name="gpu-0", kind="tcp", url="tcp://h:22", provider="aws", pool="h100"),
            "config",
        )
        row.created_at = now - timedelta(days=60)
        session.commit()
    response = get(api, "/api/v1/sla", reader)
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["month"] == f"{now.year:04d}-{now.month:02d}"
    (target,) = body["targets"]
    assert target["name"] == "gpu-0"
    assert target["provider"] == "aws"
    for key in ("uptime_pct", "target_pct", "credit_pct", "unknown_s", "downtime_s"):
        assert key in target
    assert target["downtime_s"] == 0
    assert [p["slug"] for p in body["providers"]] == ["aws"]
    assert {"uptime_pct", "credit_pct", "unknown_s"} <= set(body["providers"][0])

    past = get(api, "/api/v1/sla", reader, month="2020-01").json()
    assert past["month"] == "2020-01"
    assert past["targets"] == []  # gpu-0 did not exist then


def test_report_months_out_of_range_are_422_not_500(api: Any, reader: dict[str, str]) -> None:
    for path in ("/api/v1/reports/monthly?month=", "/api/v1/sla?month="):
        for month in ("0000-01", "2026-13", ""):
            response = api.get(f"{path}{month}", headers=reader)
            assert response.status_code == 422, (path, month)
            assert "error" in response.json()


def test_a_month_that_has_not_begun_has_no_report_yet(api: Any, reader: dict[str, str]) -> None:
    for path in ("/api/v1/reports/monthly?month=2999-01", "/api/v1/sla?month=2999-01"):
        response = api.get(path, headers=reader)
        assert response.status_code == 404, path  # schema-valid, so not a 422
        assert response.json()["error"]["message"] == "2999-01 has not started yet"


def test_405_names_every_method_the_path_answers(api: Any, admin: dict[str, str]) -> None:
    response = api.request("PATCH", "/api/v1/targets", headers=admin)
    assert response.status_code == 405
    assert response.headers["Allow"] == "GET, POST"  # two routes; Starlette named only one


@pytest.mark.parametrize("until", ["0.5", "1700000000", "yesterday"])
def test_times_are_iso_8601_only(api: Any, reader: dict[str, str], until: str) -> None:
    for path in ("/api/v1/incidents", "/api/v1/outages"):
        response = api.get(f"{path}?until={until}", headers=reader)
        assert response.status_code == 422, (path, until)


def test_vantages_say_which_one_is_blind_and_when_each_last_agreed(
    api: ApiClient, reader: dict[str, str], sessions: sessionmaker[Session]
) -> None:
    assert get(api, "/api/v1/vantages", reader).json() == []
    with sessions() as session, session.begin():
        session.add_all(
            [
                Vantage(name="east", targets=3, disagreeing=0, last_agreed_at=T0, updated_at=T0),
                Vantage(name="idle", targets=0, disagreeing=0, updated_at=T0),
                Vantage(name="north", targets=3, disagreeing=1, last_agreed_at=T0, updated_at=T0),
                Vantage(
                    name="west",
                    last_probe_at=T0,
                    targets=3,
                    disagreeing=3,
                    last_agreed_at=T0 - timedelta(minutes=9),
                    disagreeing_since=T0 - timedelta(minutes=8),
                    blind_since=T0 - timedelta(minutes=8),
                    updated_at=T0,
                ),
            ]
        )
    body = get(api, "/api/v1/vantages", reader).json()
    assert [(v["vantage"], v["state"]) for v in body] == [
        ("east", "agrees"),
        ("idle", "unknown"),
        ("north", "disagrees"),
        ("west", "blind"),
    ]
    west = body[3]
    assert (west["blind_since"], west["last_agreed_at"]) == (
        "2026-02-28T23:52:00Z",
        "2026-02-28T23:51:00Z",
    )
