"""`slamon grafana push` against a Grafana faked at the transport with respx, on the endpoints
Grafana documents: datasources by uid, folders, POST /api/dashboards/db."""

from __future__ import annotations

import json
from collections.abc import Iterator

import httpx
import pytest
import respx
from click.testing import CliRunner

from monitor import grafana as g
from monitor.cli import cli

URL = "http://grafana.test:3000"
TOKEN = "glsa_secret-token"
DB = g.GrafanaDatabase(host="postgres:5432", database="slamon", user="grafana", password="pw")


@pytest.fixture
def grafana() -> Iterator[respx.MockRouter]:
    with respx.mock(base_url=f"{URL}/api", assert_all_called=False) as router:
        yield router


def run_push() -> g.PushResult:
    with httpx.Client(timeout=g.TIMEOUT) as client:
        api = g.connect(URL, TOKEN, client)
        return g.push(api, g.datasource_payload(DB), g.load_dashboards(), "slamon")


def fresh_grafana(router: respx.MockRouter, folder: str = "slamon") -> dict[str, respx.Route]:
    return {
        "ds_get": router.get("/datasources/uid/slamon-postgres").respond(
            404, json={"message": "Data source not found"}
        ),
        "ds_post": router.post("/datasources").respond(200, json={"id": 1, "message": "ok"}),
        "ds_put": router.put("/datasources/uid/slamon-postgres").respond(200, json={"id": 1}),
        "folder_get": router.get(f"/folders/{folder}").respond(404, json={"message": "not found"}),
        "folder_post": router.post("/folders").respond(200, json={"uid": "slamon"}),
        "dash": router.post("/dashboards/db").respond(200, json={"status": "success"}),
    }


def test_a_fresh_grafana_gets_the_datasource_folder_and_every_dashboard(
    grafana: respx.MockRouter,
) -> None:
    routes = fresh_grafana(grafana)

    result = run_push()

    assert result.datasource == "created"
    assert result.folder_created
    assert not routes["ds_put"].called
    sent = json.loads(routes["ds_post"].calls.last.request.content)
    assert sent["uid"] == "slamon-postgres"
    assert sent["type"] == "grafana-postgresql-datasource"
    assert sent["url"] == "postgres:5432"
    assert sent["user"] == "grafana"
    assert sent["jsonData"]["database"] == "slamon"
    assert sent["secureJsonData"] == {"password": "pw"}
    assert json.loads(routes["folder_post"].calls.last.request.content) == {
        "title": "slamon",
        "uid": "slamon",
    }
    assert routes["dash"].call_count == 4
    uids = []
    for call in routes["dash"].calls:
        body = json.loads(call.request.content)
        assert body["overwrite"] is True
        assert body["folderUid"] == "slamon"
        assert body["dashboard"]["id"] is None
        assert body["dashboard"]["panels"]
        uids.append(body["dashboard"]["uid"])
    assert sorted(uids) == sorted(result.dashboards)
    assert len(set(uids)) == 4
    for route in routes.values():
        for call in route.calls:
            assert call.request.headers["Authorization"] == f"Bearer {TOKEN}"


def test_an_existing_datasource_and_folder_are_updated_not_duplicated(
    grafana: respx.MockRouter,
) -> None:
    routes = fresh_grafana(grafana)
    routes["ds_get"].respond(200, json={"id": 1, "uid": "slamon-postgres", "name": "slamon"})
    routes["folder_get"].respond(200, json={"uid": "slamon", "title": "slamon"})

    first = run_push()
    second = run_push()

    assert first == second
    assert first.datasource == "updated"
    assert not first.folder_created
    assert not routes["ds_post"].called
    assert not routes["folder_post"].called
    assert routes["ds_put"].call_count == 2
    assert json.loads(routes["ds_put"].calls.last.request.content)["uid"] == "slamon-postgres"
    assert routes["dash"].call_count == 8


@pytest.mark.parametrize("status", [401, 403])
def test_rejected_credentials_are_one_clear_line(grafana: respx.MockRouter, status: int) -> None:
    grafana.get("/datasources/uid/slamon-postgres").respond(
        status, json={"message": "invalid API key"}
    )

    with pytest.raises(g.GrafanaError) as caught:
        run_push()

    message = str(caught.value)
    assert f"HTTP {status}" in message
    assert "token" in message
    assert TOKEN not in message
    assert "\n" not in message


def test_an_unreachable_grafana_is_one_clear_line(grafana: respx.MockRouter) -> None:
    grafana.get("/datasources/uid/slamon-postgres").mock(side_effect=httpx.ConnectError("refused"))

    with pytest.raises(g.GrafanaError, match=r"unreachable"):
        run_push()


def test_database_parts_override_the_url() -> None:
    db = g.GrafanaDatabase.resolve(
        "postgresql://ro:secret@db.internal:6432/slamon", user="grafana_ro", sslmode="require"
    )
    assert db == g.GrafanaDatabase("db.internal:6432", "slamon", "grafana_ro", "secret", "require")


def test_a_missing_database_host_is_named() -> None:
    with pytest.raises(g.GrafanaError, match="host"):
        g.GrafanaDatabase.resolve(None, database="slamon", user="grafana")


def cli_env() -> dict[str, str]:
    return {
        "SLAMON_GRAFANA_DB_HOST": "postgres:5432",
        "SLAMON_GRAFANA_DB_NAME": "slamon",
        "SLAMON_GRAFANA_DB_USER": "grafana",
        "SLAMON_GRAFANA_DB_PASSWORD": "pw",
    }


def test_the_cli_pushes_with_the_database_from_the_environment(
    grafana: respx.MockRouter,
) -> None:
    routes = fresh_grafana(grafana, folder="gpu-slas")

    result = CliRunner().invoke(
        cli,
        ["grafana", "push", "--url", URL, "--token", TOKEN, "--folder", "GPU SLAs"],
        env=cli_env(),
    )

    assert result.exit_code == 0, result.output
    assert "datasource slamon-postgres created" in result.output
    assert "4 dashboards pushed" in result.output
    assert TOKEN not in result.output
    assert json.loads(routes["ds_post"].calls.last.request.content)["user"] == "grafana"
    assert json.loads(routes["dash"].calls.last.request.content)["folderUid"] == "gpu-slas"


def test_the_cli_reports_an_auth_failure_without_a_traceback(grafana: respx.MockRouter) -> None:
    grafana.get("/datasources/uid/slamon-postgres").respond(401, json={"message": "Unauthorized"})

    result = CliRunner().invoke(
        cli, ["grafana", "push", "--url", URL, "--token", TOKEN], env=cli_env()
    )

    assert result.exit_code == 1
    assert result.output.strip().startswith("error: Grafana rejected the credentials (HTTP 401)")
    assert "Traceback" not in result.output
    assert TOKEN not in result.output
