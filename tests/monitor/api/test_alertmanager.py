"""POST /api/v1/alertmanager: Alertmanager's webhook deliveries (the bodies Debian's
Alertmanager 0.25 sent, tests/fixtures/alertmanager/, moved to the last hour) stored as account
events of provider ``prometheus``.

Each alert is stored once however often it is delivered, its resolution closes it and a late
firing repeat never reopens it, the target is the one its label names (the config's
``alertmanager_receiver.target_labels``), slamon's own alerts are left out, it shows on the
target's page, and it raises no slamon alert. A malformed body is a 422 naming the field with
nothing stored; only an events or admin token may post. The app is the real one, its request
sessions inside the test's transaction, on SQLite and PostgreSQL."""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import Engine, func, select
from sqlalchemy.orm import Session, sessionmaker

from monitor import tokens
from monitor.alerts.service import on_account_events
from monitor.api.alertmanager import MAX_WEBHOOK_BYTES
from monitor.api.app import create_app
from monitor.api.deps import db_session
from monitor.config import parse_config
from monitor.db.base import utcnow
from monitor.db.models import AccountEventRecord, Alert, Target
from monitor.settings import Settings
from tests.monitor.api.test_pages import account_events
from tests.support import ApiClient

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "alertmanager"
HOOK = "/api/v1/alertmanager"


def captured(name: str) -> dict[str, Any]:
    document: dict[str, Any] = json.loads((FIXTURES / name).read_text())
    return document


def iso(moment: datetime) -> str:
    return moment.astimezone(UTC).isoformat().replace("+00:00", "Z")


def moved(name: str, start: datetime, end: datetime | None = None) -> dict[str, Any]:
    """A captured delivery with every alert starting at ``start`` and each resolved one ending
    at ``end`` (the page lists what is open and what closed this month)."""
    document = captured(name)
    for alert in document["alerts"]:
        alert["startsAt"] = iso(start)
        if alert["status"] == "resolved":
            assert end is not None
            alert["endsAt"] = iso(end)
    return document


@dataclass
class World:
    api: ApiClient
    sessions: sessionmaker[Session]
    admin: str
    read: str
    events: str
    start: datetime

    def post(self, body: Any, token: str | None = None, **kwargs: Any) -> Any:
        token = self.events if token is None else token
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        if "content" not in kwargs:
            kwargs["json"] = body
        return self.api.post(HOOK, headers=headers | kwargs.pop("headers", {}), **kwargs)

    def listed(self, **query: Any) -> list[dict[str, Any]]:
        response: Any = self.api.get(
            "/api/v1/events", headers={"Authorization": f"Bearer {self.read}"}, params=query
        )
        assert response.status_code == 200, response.text
        items: list[dict[str, Any]] = response.json()["items"]
        return items

    def stored(self) -> int:
        with self.sessions() as session:
            return session.scalar(select(func.count()).select_from(AccountEventRecord)) or 0


@contextmanager
def build_world(
    engine: Engine, sessions: sessionmaker[Session], tmp_path: Path, config: str = ""
) -> Iterator[World]:
    path = tmp_path / "slamon.yaml"
    path.write_text(config)
    settings = Settings(
        database_url=engine.url.render_as_string(hide_password=False),
        config=path,
        state_dir=tmp_path / "state",
    )
    app = create_app(settings)

    def session_in_test_transaction() -> Iterator[Session]:
        with sessions() as session:
            yield session

    app.dependency_overrides[db_session] = session_in_test_transaction
    with sessions() as session:
        for name in ("gpu-1", "gpu-2"):
            session.add(
                Target(
                    name=name,
                    kind="dcgm",
                    url=f"http://10.0.0.{name[-1]}:9400/metrics",
                    provider="aws",
                    created_at=utcnow() - timedelta(days=2),
                )
            )
        admin = tokens.create(session, "admin", "admin")
        read = tokens.create(session, "read", "read")
        pushes = tokens.create(session, "alertmanager", "events")
        session.commit()
    start = utcnow().replace(microsecond=123456) - timedelta(minutes=30)
    with ApiClient(app) as client:
        yield World(client, sessions, admin, read, pushes, start)


@pytest.fixture
def world(engine: Engine, sessions: sessionmaker[Session], tmp_path: Path) -> Iterator[World]:
    """The real app with the default config; targets gpu-1 and gpu-2 (dcgm); tokens of each
    scope."""
    with build_world(engine, sessions, tmp_path) as built:
        yield built


# --------------------------------------------------------------------------- storing


def test_a_delivery_stores_each_alert_about_the_target_its_label_names(world: World) -> None:
    response = world.post(moved("1-dcgm-xid-two-firing.json", world.start))
    assert response.status_code == 200, response.text
    body = response.json()
    key = f"abccd36610cf5b47@{iso(world.start)}"
    assert body["receiver"] == "slamon"
    assert body["group_key"] == '{}:{alertname="DCGMXidErrors"}'
    assert (body["echoed"], body["truncated_alerts"]) == (0, 0)
    first, second = body["alerts"]
    assert first == {
        "id": first["id"],
        "key": key,
        "alertname": "DCGMXidErrors",
        "status": "open",
        "outcome": "new",
        "target": "gpu-1",
        "target_known": True,
    }
    assert (second["target"], second["status"], second["outcome"]) == ("gpu-2", "open", "new")
    (event,) = world.listed(target="gpu-1")
    assert event["id"] == first["id"]
    assert (event["provider"], event["source"], event["kind"]) == (
        "prometheus",
        "alertmanager",
        "issue",
    )
    assert (event["key"], event["status"], event["raw_type"]) == (key, "open", "DCGMXidErrors")
    assert (event["scope"], event["targets"], event["reported_for"]) == (
        "targets",
        ["gpu-1"],
        "gpu-1",
    )
    assert event["starts_at"].startswith(world.start.strftime("%Y-%m-%dT%H:%M:%S.123456"))
    assert event["ends_at"] is None
    assert event["title"] == "GPU 0 on 10.0.0.5:9400 reported XID 79"
    assert event["detail"].startswith("XID 79 (GPU has fallen off the bus) on GPU 0.")
    assert 'slamon_target="gpu-1"' in event["detail"]
    assert (event["service"], event["via"], event["readings"]) == ("dcgm", "push", 1)
    assert [e["targets"] for e in world.listed(target="gpu-2")] == [["gpu-2"]]


def test_the_same_delivery_twice_changes_nothing(world: World) -> None:
    body = moved("1-dcgm-xid-two-firing.json", world.start)
    first = world.post(body).json()
    again = world.post(copy.deepcopy(body))
    assert again.status_code == 200, again.text
    assert [a["outcome"] for a in again.json()["alerts"]] == ["unchanged", "unchanged"]
    assert [a["id"] for a in again.json()["alerts"]] == [a["id"] for a in first["alerts"]]
    assert world.stored() == 2
    assert sorted(e["readings"] for e in world.listed()) == [2, 2]


def test_the_resolution_closes_it_and_a_late_firing_repeat_does_not_reopen_it(
    world: World,
) -> None:
    firing = moved("1-dcgm-xid-two-firing.json", world.start)
    end = world.start + timedelta(minutes=20)
    resolved = moved("2-dcgm-xid-one-resolved.json", world.start, end)
    world.post(firing)
    answer = world.post(resolved).json()["alerts"]
    assert [(a["target"], a["status"], a["outcome"]) for a in answer] == [
        ("gpu-1", "closed", "updated"),
        ("gpu-2", "open", "unchanged"),
    ]
    late = world.post(firing).json()["alerts"]  # another replica's repeat, or a retry
    assert [(a["target"], a["status"], a["outcome"]) for a in late] == [
        ("gpu-1", "closed", "stale"),
        ("gpu-2", "open", "unchanged"),
    ]
    (gone,) = world.listed(target="gpu-1")
    assert (gone["status"], gone["ends_at"][:19]) == ("closed", iso(end)[:19])
    assert world.listed(target="gpu-1", status="open") == []
    assert world.stored() == 2


def test_a_new_firing_after_the_resolution_is_a_new_event(world: World) -> None:
    end = world.start + timedelta(minutes=5)
    world.post(moved("2-dcgm-xid-one-resolved.json", world.start, end))
    again = moved("3-dcgm-xid-max-alerts-1-truncated.json", world.start + timedelta(minutes=10))
    (alert,) = world.post(again).json()["alerts"]
    assert (alert["target"], alert["outcome"], alert["status"]) == ("gpu-1", "new", "open")
    statuses = [e["status"] for e in world.listed(target="gpu-1")]
    assert statuses == ["open", "closed"]  # newest start first


def test_a_truncated_delivery_is_taken_and_says_so(world: World) -> None:
    response = world.post(moved("3-dcgm-xid-max-alerts-1-truncated.json", world.start))
    assert response.status_code == 200, response.text
    assert (len(response.json()["alerts"]), response.json()["truncated_alerts"]) == (1, 1)


def test_an_alert_naming_no_target_is_stored_about_none(world: World) -> None:
    response = world.post(moved("4-node-filesystem-no-target.json", world.start))
    (alert,) = response.json()["alerts"]
    assert (alert["target"], alert["target_known"], alert["outcome"]) == (None, False, "new")
    (event,) = world.listed()
    assert (event["scope"], event["targets"], event["raw_type"]) == (
        "account",
        [],
        "NodeFilesystemAlmostOutOfSpace",
    )
    assert world.listed(target="gpu-1") == []


def test_an_unknown_target_is_kept_and_joins_the_target_once_slamon_knows_it(
    world: World,
) -> None:
    body = moved("3-dcgm-xid-max-alerts-1-truncated.json", world.start)
    body["alerts"][0]["labels"]["slamon_target"] = "gpu-9"
    (alert,) = world.post(body).json()["alerts"]
    assert (alert["target"], alert["target_known"]) == ("gpu-9", False)
    with world.sessions() as session:  # discovery finds the box a minute later
        session.add(Target(name="gpu-9", kind="heartbeat"))
        session.commit()
    assert [e["key"] for e in world.listed(target="gpu-9")] == [alert["key"]]


def test_a_label_too_long_for_a_target_s_name_names_none(world: World) -> None:
    body = moved("3-dcgm-xid-max-alerts-1-truncated.json", world.start)
    body["alerts"][0]["labels"]["slamon_target"] = "g" * 201
    response = world.post(body)
    assert response.status_code == 200, response.text  # stored, about no target
    assert response.json()["alerts"][0]["target"] is None
    assert [e["scope"] for e in world.listed()] == ["account"]


def test_slamon_s_own_alerts_sent_back_are_not_stored(world: World) -> None:
    body = moved("1-dcgm-xid-two-firing.json", world.start)
    body["alerts"][0]["labels"]["slamon_fingerprint"] = "4f1c"
    answer = world.post(body).json()
    assert [a["target"] for a in answer["alerts"]] == ["gpu-2"]
    assert answer["echoed"] == 1
    assert world.stored() == 1


def test_the_configured_target_labels_name_the_target(
    engine: Engine, sessions: sessionmaker[Session], tmp_path: Path
) -> None:
    config = "alertmanager_receiver:\n  target_labels: [node, slamon_target]\n"
    with build_world(engine, sessions, tmp_path, config) as world:
        body = moved("4-node-filesystem-no-target.json", world.start)
        body["alerts"][0]["labels"]["node"] = "gpu-2"
        (alert,) = world.post(body).json()["alerts"]
        assert (alert["target"], alert["target_known"]) == ("gpu-2", True)
        assert [e["raw_type"] for e in world.listed(target="gpu-2")] == [
            "NodeFilesystemAlmostOutOfSpace"
        ]


def test_the_team_s_alerts_raise_no_slamon_alert(world: World) -> None:
    world.post(moved("1-dcgm-xid-two-firing.json", world.start))
    with world.sessions() as session:
        on_account_events(session, parse_config(""), utcnow())
        assert session.scalar(select(func.count()).select_from(Alert)) == 0


# --------------------------------------------------------------------------- the pages


def test_the_alert_shows_on_its_target_s_page_and_closed_once_resolved(world: World) -> None:
    world.post(moved("1-dcgm-xid-two-firing.json", world.start))
    page = world.api.get("/targets/gpu-1").text
    [row] = account_events(page, "account-events")
    assert row.attrs["data-event"] == f"abccd36610cf5b47@{iso(world.start)}"
    assert (row.attrs["data-kind"], row.attrs["data-status"]) == ("issue", "open")
    assert "GPU 0 on 10.0.0.5:9400 reported XID 79" in row.text
    assert "alertmanager · via push" in row.text
    assert "XID 79" not in world.api.get("/targets/gpu-2").text  # gpu-2's alert is XID 48
    end = world.start + timedelta(minutes=1)
    world.post(moved("2-dcgm-xid-one-resolved.json", world.start, end))
    page = world.api.get("/targets/gpu-1").text
    assert account_events(page, "account-events") == []
    [closed] = account_events(page, "account-events-closed")
    assert closed.attrs["data-status"] == "closed"


# --------------------------------------------------------------------------- refused


@pytest.mark.parametrize(
    ("token", "status"),
    [("none", 401), ("read", 403), ("events", 200), ("admin", 200)],
)
def test_only_an_events_or_admin_token_may_post(world: World, token: str, status: int) -> None:
    secret = {"none": "", "read": world.read, "events": world.events, "admin": world.admin}
    response = world.post(moved("4-node-filesystem-no-target.json", world.start), secret[token])
    assert response.status_code == status, response.text
    assert world.stored() == (1 if status == 200 else 0)


@pytest.mark.parametrize(
    ("change", "path", "message"),
    [
        (lambda d: d.update(version="3"), "version", "'3' is not '4'"),
        (lambda d: d.pop("alerts"), "alerts", "missing or not a list"),
        (
            lambda d: d["alerts"][1].update(startsAt="2026-12-06T10:00:00"),
            "alerts[1].startsAt",
            "is not an RFC 3339 time",
        ),
        (
            lambda d: d["alerts"][1].update(status="pending"),
            "alerts[1].status",
            "is neither firing nor resolved",
        ),
        (
            lambda d: d["alerts"][0].update(fingerprint="f" * 600),
            "alerts[0].fingerprint",
            "longer than",
        ),
    ],
    ids=["version", "no-alerts", "start-without-offset", "status", "huge-fingerprint"],
)
def test_a_malformed_delivery_is_a_422_naming_the_field_and_stores_nothing(
    world: World, change: Any, path: str, message: str
) -> None:
    body = moved("1-dcgm-xid-two-firing.json", world.start)
    change(body)
    response = world.post(body)
    assert response.status_code == 422, response.text
    (detail,) = response.json()["error"]["details"]
    assert detail["path"] == path
    assert message in detail["message"]
    assert world.stored() == 0  # the first alert, good, is not stored either


@pytest.mark.parametrize("body", [b"[]", b"not json", b'{"alerts": [1]}'])
def test_a_body_that_is_not_the_webhook_is_a_422(world: World, body: bytes) -> None:
    headers = {"Content-Type": "application/json"}
    response = world.post(None, content=body, headers=headers)
    assert response.status_code == 422, response.text
    assert world.stored() == 0


def test_a_body_over_the_bound_is_a_413_and_one_at_it_is_read(world: World) -> None:
    def padded(size: int) -> bytes:
        body = moved("4-node-filesystem-no-target.json", world.start)
        raw = json.dumps(body).encode()
        body["padding"] = "x" * (size - len(raw) - len(', "padding": ""'))
        encoded = json.dumps(body).encode()
        assert len(encoded) == size
        return encoded

    headers = {"Content-Type": "application/json"}
    over = world.post(None, content=padded(MAX_WEBHOOK_BYTES + 1), headers=headers)
    assert over.status_code == 413, over.text
    assert world.stored() == 0
    at = world.post(None, content=padded(MAX_WEBHOOK_BYTES), headers=headers)
    assert at.status_code == 200, at.text
