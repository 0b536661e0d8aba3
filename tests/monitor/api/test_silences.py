"""/api/v1/silences: create, list and expire; a silence made over the API mutes the engine."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from sqlalchemy.orm import Session, sessionmaker

from monitor.alerts.engine import apply
from monitor.alerts.rules import Signal
from monitor.config import parse_config
from monitor.db.base import utcnow
from tests.support import ApiClient

CONFIG = parse_config("channels: [{name: ops, kind: webhook, url: 'https://hooks.example/x'}]")


def create(api: ApiClient, headers: dict[str, str], **body: Any) -> Any:
    return api.post("/api/v1/silences", headers=headers, json=body)


def test_a_silence_needs_an_admin_token(api: ApiClient, reader: dict[str, str]) -> None:
    until = (utcnow() + timedelta(hours=1)).isoformat()
    assert create(api, {}, match={"target": "x"}, ends_at=until).status_code == 401
    assert create(api, reader, match={"target": "x"}, ends_at=until).status_code == 403


def test_bad_silences_are_422_with_their_field(api: ApiClient, admin: dict[str, str]) -> None:
    now = utcnow()
    naive = create(api, admin, match={"target": "x"}, ends_at="2026-12-01T00:00:00")
    backwards = create(
        api,
        admin,
        match={"target": "x"},
        starts_at=now.isoformat(),
        ends_at=(now - timedelta(hours=1)).isoformat(),
    )
    empty = create(api, admin, match={}, ends_at=(now + timedelta(hours=1)).isoformat())
    assert [r.status_code for r in (naive, backwards, empty)] == [422, 422, 422]
    assert naive.json()["error"]["details"][0]["path"] == "ends_at"


def test_an_api_silence_mutes_matching_alerts_until_it_is_expired(
    api: ApiClient, admin: dict[str, str], reader: dict[str, str], sessions: sessionmaker[Session]
) -> None:
    now = utcnow()
    made = create(
        api,
        admin,
        match={"target": "gpu-3"},
        ends_at=(now + timedelta(hours=2)).isoformat(),
        comment="replacing the NIC",
    )
    assert made.status_code == 201
    listed = api.get("/api/v1/silences", headers=reader).json()["items"]
    assert [(s["match"], s["comment"], s["created_by"]) for s in listed] == [
        ({"target": "gpu-3"}, "replacing the NIC", "admin")
    ]
    now = utcnow()  # the silence began when it was made
    signal = Signal(
        "target_down", "fp-gpu-3", "critical", {"target": "gpu-3"}, "gpu-3 is down", True, now
    )
    other = Signal(
        "target_down", "fp-gpu-4", "critical", {"target": "gpu-4"}, "gpu-4 is down", True, now
    )
    with sessions() as session:
        applied = apply(session, [signal, other], CONFIG, now)
        session.commit()
    assert (applied.changed, applied.deliveries) == (2, 1)  # only gpu-4 is sent

    assert api.delete(f"/api/v1/silences/{made.json()['id']}", headers=admin).status_code == 204
    assert api.get("/api/v1/silences", headers=reader).json()["items"] == []
    assert api.delete("/api/v1/silences/999999", headers=admin).status_code == 404
