"""/api/v1/targets: register, read, list, page, filter and retire targets at run time."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest
from sqlalchemy import select
from sqlalchemy.orm import Session, sessionmaker

from monitor.config import parse_config
from monitor.config.models import TargetConfig
from monitor.db.models import Heartbeat, Target
from tests.support import ApiClient

TRAINER = {
    "name": "trainer-0",
    "kind": "http",
    "url": "http://10.0.0.5:8000/healthz",
    "provider": "aws",
    "region": "us-east-1",
    "zone": "us-east-1a",
    "pool": "h100-pool",
    "instance_type": "p5.48xlarge",
    "gpus": 8,
    "hourly_price": 98.32,
    "sla": "aws-ec2-instance",
    "interval": "15s",
    "timeout": "5s",
}


def register(api: ApiClient, admin: dict[str, str], body: dict[str, Any], **params: str) -> Any:
    return api.post("/api/v1/targets", headers=admin, json=body, params=params)


def names(response: Any) -> list[str]:
    assert response.status_code == 200, response.text
    return [item["name"] for item in response.json()["items"]]


def details(response: Any) -> list[tuple[str, str, str]]:
    assert response.status_code == 422, response.text
    error = response.json()["error"]
    assert error["code"] == "validation_error"
    return [(d["location"], d["path"], d["message"]) for d in error["details"]]


# --------------------------------------------------------------------------- register


def test_registering_a_new_target_answers_201_with_the_target(
    api: ApiClient, admin: dict[str, str]
) -> None:
    response = register(api, admin, TRAINER)
    assert response.status_code == 201, response.text
    body = response.json()
    assert body["name"] == "trainer-0"
    assert (body["interval"], body["timeout"], body["gpus"]) == (15.0, 5.0, 8)
    assert (body["sla"], body["pool"], body["source"]) == ("aws-ec2-instance", "h100-pool", "api")
    assert body["retired_at"] is None
    assert body["heartbeat_token"] is None
    assert body["has_heartbeat_token"] is False


def test_registering_an_existing_name_updates_it_and_answers_200(
    api: ApiClient, admin: dict[str, str], reader: dict[str, str]
) -> None:
    register(api, admin, TRAINER)
    response = register(api, admin, {**TRAINER, "gpus": 4, "pool": "a100-pool"})
    assert response.status_code == 200, response.text
    fetched: Any = api.get("/api/v1/targets/trainer-0", headers=reader)
    assert (fetched.json()["gpus"], fetched.json()["pool"]) == (4, "a100-pool")


def test_a_target_reads_back_with_every_config_field_name(
    api: ApiClient, admin: dict[str, str], reader: dict[str, str]
) -> None:
    extra = {"expect_status": [200, 204], "expect_body": "ok", "grace": "1m", "stall_after": "5m"}
    register(api, admin, {**TRAINER, **extra, "labels": {"team": "llm"}})
    fetched: Any = api.get("/api/v1/targets/trainer-0", headers=reader)
    body = fetched.json()
    assert set(TargetConfig.model_fields) <= set(body), "a config field the API does not show"
    assert {k: body[k] for k in extra} == {**extra, "grace": 60.0, "stall_after": 300.0}
    assert body["labels"] == {"team": "llm"}


def test_the_target_is_stored_with_source_api(
    api: ApiClient, admin: dict[str, str], sessions: sessionmaker[Session]
) -> None:
    register(api, admin, TRAINER)
    with sessions() as session:
        row = session.scalars(select(Target).where(Target.name == "trainer-0")).one()
    assert (row.source, row.kind, row.interval_s) == ("api", "http", 15.0)


def test_responses_carry_no_secrets(
    api: ApiClient, admin: dict[str, str], reader: dict[str, str]
) -> None:
    body = {**TRAINER, "url": "https://probe:hunter2@10.0.0.5/healthz"}
    created = register(api, admin, body, heartbeat_token="true")
    fetched: Any = api.get("/api/v1/targets/trainer-0", headers=reader)
    listed: Any = api.get("/api/v1/targets", headers=reader)
    for response in (created, fetched, listed):
        assert "hunter2" not in response.text
        assert "heartbeat_token_hash" not in response.text
    assert fetched.json()["url"] == "https://probe:***@10.0.0.5/healthz"


def test_a_heartbeat_token_is_shown_once_on_request(
    api: ApiClient, admin: dict[str, str], reader: dict[str, str]
) -> None:
    created = register(api, admin, {"name": "job", "kind": "heartbeat"}, heartbeat_token="true")
    assert created.status_code == 201, created.text
    assert created.json()["heartbeat_token"].startswith("slmhb_")
    fetched: Any = api.get("/api/v1/targets/job", headers=reader)
    assert "heartbeat_token" not in fetched.json()
    assert fetched.json()["has_heartbeat_token"] is True
    again = register(api, admin, {"name": "job", "kind": "heartbeat"})
    assert again.json()["heartbeat_token"] is None
    assert again.json()["has_heartbeat_token"] is True


# --------------------------------------------------------------------------- validation


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        pytest.param(
            {**TRAINER, "interval": -5},
            [("body", "interval", "must be ≥ 1 s")],
            id="negative-interval",
        ),
        pytest.param(
            {**TRAINER, "gpus": -1, "interval": "soon"},
            [
                ("body", "gpus", "Input should be greater than or equal to 0"),
                (
                    "body",
                    "interval",
                    "'soon' is not a duration (use e.g. 15s, 2m, 1h30m, 500ms)",
                ),
            ],
            id="two-bad-fields",
        ),
        pytest.param(
            {"kind": "http", "url": "http://h/"},
            [("body", "name", "Field required")],
            id="missing-name",
        ),
        pytest.param(
            {**TRAINER, "intervall": "15s"},
            [("body", "intervall", "unknown field (check the spelling)")],
            id="misspelt-field",
        ),
        pytest.param(
            {"name": "x", "kind": "tcp", "url": "tcp://h"},
            [("body", "url", "a tcp target needs tcp://host:port, e.g. tcp://10.0.0.5:22")],
            id="tcp-without-port",
        ),
        pytest.param(
            {**TRAINER, "sla": "best-effort"},
            [("body", "sla", "unknown SLA policy 'best-effort'")],
            id="unknown-sla-policy",
        ),
        pytest.param(
            {**TRAINER, "provider": "gcp"},
            [
                (
                    "body",
                    "provider",
                    "target 'trainer-0' names provider 'gcp', but its SLA policy "
                    "'aws-ec2-instance' belongs to provider 'aws' (leave provider out, or choose "
                    "a policy of 'gcp')",
                )
            ],
            id="provider-contradicts-policy",
        ),
        pytest.param(
            {"name": "x", "kind": "ftp"},
            [("body", "kind", "Input should be 'http', 'tcp', 'dcgm' or 'heartbeat'")],
            id="unknown-kind",
        ),
        pytest.param(
            {**TRAINER, "provider": "p" * 65, "gpus": 2**31, "hourly_price": 1e8},
            [
                ("body", "provider", "String should have at most 64 characters"),
                ("body", "gpus", "Input should be less than or equal to 1024"),
                ("body", "hourly_price", "Input should be less than or equal to 1000000"),
            ],
            id="too-big-for-the-database",
        ),
        pytest.param(
            {**TRAINER, "interval": "nan", "grace": "inf"},
            [
                ("body", "interval", "must be a finite duration"),
                ("body", "grace", "must be a finite duration"),
            ],
            id="not-finite",
        ),
        pytest.param(
            [TRAINER],
            [("body", "", "Input should be a valid dictionary or instance of TargetConfig")],
            id="a-list-not-an-object",
        ),
    ],
)
def test_an_invalid_target_is_422_naming_each_field(
    api: ApiClient, admin: dict[str, str], body: Any, expected: list[tuple[str, str, str]]
) -> None:
    response: Any = api.post("/api/v1/targets", headers=admin, json=body)
    assert details(response) == expected


def test_the_422_message_summarises_the_problems(api: ApiClient, admin: dict[str, str]) -> None:
    response = register(api, admin, {**TRAINER, "interval": -5})
    assert response.json()["error"]["message"] == "interval: must be ≥ 1 s"


@pytest.mark.parametrize(
    ("content", "message"),
    [
        pytest.param(b"", "not valid JSON: the body is empty; send a JSON object", id="empty"),
        pytest.param(b"{nope", "not valid JSON: Expecting property name", id="broken"),
        pytest.param(b'{"name": NaN}', "not valid JSON: NaN is not a JSON number", id="nan"),
        pytest.param(b"[" * 100_000, "the request body is larger than 64 KiB", id="too-large"),
        pytest.param(b"[" * 5000 + b"]" * 5000, "not valid JSON: nested too deeply", id="deep"),
        pytest.param(
            b'{"name": "a\\u0000b", "kind": "heartbeat"}',
            "not valid JSON: strings must not contain NUL (\\u0000) characters",
            id="nul-character",
        ),
    ],
)
def test_a_body_that_is_not_a_json_object_is_refused_without_a_500(
    api: ApiClient, admin: dict[str, str], content: bytes, message: str
) -> None:
    headers = {**admin, "Content-Type": "application/json"}
    response: Any = api.post("/api/v1/targets", headers=headers, content=content)
    assert response.status_code in (413, 422), response.text
    assert response.json()["error"]["message"].startswith(message)


@pytest.mark.parametrize(
    ("query", "path"),
    [
        pytest.param("limit=0", "limit", id="limit-too-small"),
        pytest.param("limit=501", "limit", id="limit-too-large"),
        pytest.param("offset=-1", "offset", id="negative-offset"),
        pytest.param("offset=99999999999999999999999", "offset", id="huge-offset"),
        pytest.param("kind=ftp", "kind", id="unknown-kind"),
        pytest.param("include_retired=perhaps", "include_retired", id="not-a-boolean"),
        pytest.param("provider=a%00b", "provider", id="nul-in-filter"),
    ],
)
def test_bad_query_parameters_are_422_naming_the_parameter(
    api: ApiClient, reader: dict[str, str], query: str, path: str
) -> None:
    response: Any = api.get(f"/api/v1/targets?{query}", headers=reader)
    assert [(location, p) for location, p, _ in details(response)] == [("query", path)]


def test_an_unknown_target_is_404(api: ApiClient, reader: dict[str, str]) -> None:
    for path in ("/api/v1/targets/ghost", "/api/v1/targets/gh%00ost"):
        response: Any = api.get(path, headers=reader)
        assert response.status_code == 404, response.text
        assert response.json()["error"]["code"] == "not_found"


# --------------------------------------------------------------------------- list


def test_pages_of_limit_cover_every_target_once_in_name_order(
    api: ApiClient, admin: dict[str, str], reader: dict[str, str]
) -> None:
    for i in (4, 0, 6, 2, 5, 1, 3):  # registered out of order
        register(api, admin, {"name": f"job-{i}", "kind": "heartbeat"})
    seen, offsets, offset = [], [], 0
    while offset is not None:
        page: Any = api.get(f"/api/v1/targets?limit=3&offset={offset}", headers=reader)
        assert page.json()["total"] == 7
        assert len(page.json()["items"]) <= 3
        seen += names(page)
        offsets.append(offset)
        offset = page.json()["next_offset"]
    assert seen == [f"job-{i}" for i in range(7)]
    assert offsets == [0, 3, 6]


def test_the_default_page_is_100_targets(
    api: ApiClient, admin: dict[str, str], reader: dict[str, str]
) -> None:
    for i in range(101):
        register(api, admin, {"name": f"job-{i:03d}", "kind": "heartbeat"})
    page: Any = api.get("/api/v1/targets", headers=reader)
    assert (len(page.json()["items"]), page.json()["next_offset"]) == (100, 100)
    last: Any = api.get("/api/v1/targets?offset=100", headers=reader)
    assert names(last) == ["job-100"]
    assert last.json()["next_offset"] is None


def test_filters_narrow_the_list_and_combine(
    api: ApiClient, admin: dict[str, str], reader: dict[str, str]
) -> None:
    fleet = [
        ("a", "aws", "us-east-1", "h100", "http"),
        ("b", "aws", "us-west-2", "h100", "tcp"),
        ("c", "gcp", "europe-west4", "h100", "http"),
        ("d", "aws", "us-east-1", "a100", "heartbeat"),
    ]
    urls = {"http": "http://10.0.0.1/", "tcp": "tcp://10.0.0.1:22", "heartbeat": None}
    for name, provider, region, pool, kind in fleet:
        body = {"name": name, "provider": provider, "region": region, "pool": pool}
        assert register(api, admin, {**body, "kind": kind, "url": urls[kind]}).status_code == 201

    def listed(query: str) -> list[str]:
        return names(api.get(f"/api/v1/targets?{query}", headers=reader))

    assert listed("provider=aws") == ["a", "b", "d"]
    assert listed("region=us-east-1") == ["a", "d"]
    assert listed("pool=h100") == ["a", "b", "c"]
    assert listed("kind=http") == ["a", "c"]
    assert listed("provider=aws&pool=h100&kind=tcp") == ["b"]
    assert listed("provider=azure") == []


# --------------------------------------------------------------------------- retire


def test_retiring_hides_the_target_but_keeps_its_history(
    api: ApiClient,
    admin: dict[str, str],
    reader: dict[str, str],
    sessions: sessionmaker[Session],
) -> None:
    register(api, admin, {"name": "job", "kind": "heartbeat"})
    register(api, admin, {"name": "other", "kind": "heartbeat"})
    with sessions() as session:
        target = session.scalars(select(Target).where(Target.name == "job")).one()
        session.add(Heartbeat(target_id=target.id, at=datetime(2025, 1, 1, tzinfo=UTC), step=7))
        session.commit()

    response: Any = api.delete("/api/v1/targets/job", headers=admin)

    assert response.status_code == 204
    assert response.content == b""
    assert names(api.get("/api/v1/targets", headers=reader)) == ["other"]
    everything: Any = api.get("/api/v1/targets?include_retired=true", headers=reader)
    assert names(everything) == ["job", "other"]
    fetched: Any = api.get("/api/v1/targets/job", headers=reader)
    assert fetched.status_code == 404  # deleted means gone from the resource's own URL
    assert "was retired at" in fetched.json()["error"]["message"]
    (retired,) = [t for t in everything.json()["items"] if t["name"] == "job"]
    assert retired["retired_at"] is not None
    with sessions() as session:
        steps = session.scalars(select(Heartbeat.step).where(Heartbeat.target_id == target.id))
        assert list(steps) == [7]


def test_retiring_twice_keeps_the_first_retirement(
    api: ApiClient, admin: dict[str, str], reader: dict[str, str]
) -> None:
    register(api, admin, {"name": "job", "kind": "heartbeat"})
    api.delete("/api/v1/targets/job", headers=admin)
    first: Any = api.get("/api/v1/targets?include_retired=true", headers=reader)
    again: Any = api.delete("/api/v1/targets/job", headers=admin)
    assert again.status_code == 204
    second: Any = api.get("/api/v1/targets?include_retired=true", headers=reader)
    assert second.json()["items"][0]["retired_at"] == first.json()["items"][0]["retired_at"]


def test_retiring_an_unknown_target_is_404(api: ApiClient, admin: dict[str, str]) -> None:
    response: Any = api.delete("/api/v1/targets/ghost", headers=admin)
    assert response.status_code == 404
    assert response.json()["error"]["message"] == "no target named 'ghost'"


def test_registering_a_retired_name_brings_it_back_as_an_update(
    api: ApiClient, admin: dict[str, str], reader: dict[str, str]
) -> None:
    register(api, admin, {"name": "job", "kind": "heartbeat"})
    api.delete("/api/v1/targets/job", headers=admin)
    response = register(api, admin, {"name": "job", "kind": "heartbeat"})
    assert response.status_code == 200
    assert response.json()["retired_at"] is None
    assert names(api.get("/api/v1/targets", headers=reader)) == ["job"]


# --------------------------------------------------------------------------- policy providers

BARE = {k: v for k, v in TRAINER.items() if k != "provider"}


@pytest.mark.parametrize(
    ("sla", "provider"),
    [
        ("aws-ec2-instance", "aws"),
        ("gcp-compute-single-vm", "gcp"),
        ("azure-vm-single-premium", "azure"),
    ],
)
def test_a_target_registered_without_a_provider_gets_its_policys(
    api: ApiClient, admin: dict[str, str], sla: str, provider: str
) -> None:
    response: Any = register(api, admin, {**BARE, "sla": sla})
    assert response.status_code == 201, response.text
    assert response.json()["provider"] == provider


def test_the_configs_own_sla_policies_name_the_provider_of_an_api_target(
    api: ApiClient, admin: dict[str, str], reader: dict[str, str]
) -> None:
    api.app.state.slamon.config = parse_config(  # type: ignore[attr-defined]
        "sla_policies:\n  - {name: lambda-gpu, provider: lambda, target_pct: 99.9}\n"
    )
    response: Any = register(api, admin, {**BARE, "sla": "lambda-gpu"})
    assert response.status_code == 201, response.text
    assert response.json()["provider"] == "lambda"
    listed = api.get("/api/v1/targets", headers=reader, params={"provider": "lambda"})
    assert names(listed) == ["trainer-0"]
    refused: Any = register(api, admin, {**TRAINER, "sla": "lambda-gpu"})
    assert [m for _, _, m in details(refused)] == [
        "target 'trainer-0' names provider 'aws', but its SLA policy 'lambda-gpu' belongs to "
        "provider 'lambda' (leave provider out, or choose a policy of 'aws')"
    ]


def test_targets_show_the_quorums_state_and_never_call_unknown_up(
    api: ApiClient, admin: dict[str, str], reader: dict[str, str], sessions: sessionmaker[Session]
) -> None:
    from datetime import timedelta

    from monitor.db.base import utcnow
    from monitor.db.models import TargetState

    for name in ("box-ok", "box-gpu7", "box-off", "box-stale", "box-new"):
        assert register(api, admin, {**DCGM_BODY, "name": name}).status_code == 201
    now = utcnow()
    verdicts = {
        "box-ok": ("up", "up", now),
        "box-gpu7": ("up", "down", now),  # reachable, but a GPU fell off the bus
        "box-off": ("down", "down", now),
        "box-stale": ("up", "up", now - timedelta(hours=1)),  # nobody has looked for an hour
    }
    with sessions() as session, session.begin():
        ids = dict(session.execute(select(Target.name, Target.id)).all())
        for name, (reachable, usable, at) in verdicts.items():
            for series, state in (("reachable", reachable), ("usable", usable)):
                for vantage in ("*", "here"):  # the quorum's verdict; the vantage's last probe
                    session.add(
                        TargetState(
                            target_id=ids[name],
                            vantage=vantage,
                            series=series,
                            state=state,
                            since=at - timedelta(days=1),  # the quorum row's stamp is old
                            last_probe_at=at if vantage == "here" else at - timedelta(days=1),
                        )
                    )
    listed = api.get("/api/v1/targets", headers=reader).json()["items"]
    shown = {t["name"]: (t["state"], t["reachable"], t["usable"]) for t in listed}
    assert shown == {
        "box-ok": ("up", "up", "up"),
        "box-gpu7": ("unusable", "up", "down"),
        "box-off": ("down", "down", "down"),
        "box-stale": ("unknown", "unknown", "unknown"),
        "box-new": ("unknown", "unknown", "unknown"),
    }
    one = api.get("/api/v1/targets/box-gpu7", headers=reader).json()
    assert (one["state"], one["last_probe_at"] is not None) == ("unusable", True)


DCGM_BODY = {"kind": "dcgm", "url": "http://10.0.0.7:9400/metrics", "gpus": 8, "interval": 15}
