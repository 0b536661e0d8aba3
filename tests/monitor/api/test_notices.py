"""/api/v1/notices: posted ahead they are upcoming, then current from their start and gone from
the current ones at their end (by the server's own clock); ended early; scoped; bad input a
422 naming the field; tokens; and the status page showing them, on SQLite and PostgreSQL."""

from __future__ import annotations

import re
import time
from datetime import datetime, timedelta
from typing import Any

import pytest
from sqlalchemy.orm import Session, sessionmaker

from monitor.config.models import TargetConfig
from monitor.db.base import utcnow
from monitor.targets import upsert_target
from tests.monitor.history.conftest import provider
from tests.support import ApiClient

URL = "/api/v1/notices"


def post(api: ApiClient, headers: dict[str, str], **body: Any) -> Any:
    return api.post(URL, headers=headers, json=body)


def listed(api: ApiClient, headers: dict[str, str], *phases: str) -> list[tuple[int, str]]:
    query = "&".join(f"phase={p}" for p in phases)
    answer = api.get(f"{URL}?{query}" if query else URL, headers=headers)
    assert answer.status_code == 200, answer.text
    return [(n["id"], n["phase"]) for n in answer.json()["items"]]


def on_page(api: ApiClient) -> dict[int, tuple[str, str]]:
    """The notices on the status page: id -> (kind, phase)."""
    page = api.get("/").text
    found = re.findall(r'data-notice="(\d+)" data-kind="(\w+)" data-phase="(\w+)"', page)
    return {int(i): (kind, phase) for i, kind, phase in found}


def iso(moment: datetime) -> str:
    return moment.isoformat()


def sleep_until(moment: datetime) -> None:
    time.sleep(max(0.0, (moment - utcnow()).total_seconds()) + 0.05)


def test_notices_need_a_token_and_posting_and_ending_an_admin_one(
    api: ApiClient, reader: dict[str, str]
) -> None:
    assert post(api, {}, title="x").status_code == 401
    assert post(api, reader, title="x").status_code == 403
    assert api.get(URL).status_code == 401
    assert api.get(URL, headers=reader).status_code == 200
    assert api.delete(f"{URL}/1", headers=reader).status_code == 403
    assert api.delete(f"{URL}/1").status_code == 401


@pytest.mark.parametrize(
    ("body", "path", "words"),
    [
        pytest.param({"title": ""}, "title", "pattern", id="empty-title"),
        pytest.param({"title": "a\nb"}, "title", "pattern", id="two-line-title"),
        pytest.param({"title": "x", "kind": "outage"}, "kind", "notice", id="unknown-kind"),
        pytest.param({"title": "x", "ends_at": "2030-01-01T00:00:00"}, "ends_at", "", id="naive"),
        pytest.param(
            {"title": "x", "starts_at": "2030-01-02T00:00:00Z", "ends_at": "2030-01-01T00:00:00Z"},
            "ends_at",
            "must be after the start",
            id="end-before-start",
        ),
        pytest.param(
            {"title": "x", "starts_at": "2020-01-01T00:00:00Z", "ends_at": "2020-01-02T00:00:00Z"},
            "ends_at",
            "already past",
            id="all-in-the-past",
        ),
        pytest.param({"title": "x", "kind": "maintenance"}, "ends_at", "needs an end", id="no-end"),
        pytest.param({"title": "x", "targets": [""]}, "targets[0]", "", id="empty-target"),
        pytest.param(
            {"title": "x", "colour": "red"}, "colour", "unknown field", id="unknown-field"
        ),
    ],
)
def test_bad_notices_are_422_naming_the_field_and_store_nothing(
    api: ApiClient,
    admin: dict[str, str],
    reader: dict[str, str],
    body: dict[str, Any],
    path: str,
    words: str,
) -> None:
    answer = post(api, admin, **body)
    assert answer.status_code == 422, answer.text
    [detail] = answer.json()["error"]["details"]
    assert detail["path"] == path
    assert words in detail["message"]
    assert listed(api, reader, "current", "upcoming", "past") == []


def test_a_notice_posted_ahead_is_upcoming_then_current_then_past(
    api: ApiClient, admin: dict[str, str], reader: dict[str, str]
) -> None:
    """By the server's own clock: the test waits for the start and the end to pass."""
    starts, ends = utcnow() + timedelta(seconds=2.5), utcnow() + timedelta(seconds=4)
    made = post(api, admin, title="Fabric swap", starts_at=iso(starts), ends_at=iso(ends))
    assert made.status_code == 201, made.text
    notice = made.json()
    assert (notice["phase"], notice["created_by"], notice["in_sla"]) == ("upcoming", "admin", False)
    assert listed(api, reader) == [(notice["id"], "upcoming")]
    assert on_page(api) == {notice["id"]: ("notice", "upcoming")}

    sleep_until(starts)
    assert listed(api, reader) == [(notice["id"], "current")]
    assert listed(api, reader, "upcoming") == []

    sleep_until(ends)
    assert listed(api, reader) == []
    assert listed(api, reader, "past") == [(notice["id"], "past")]


def test_ending_a_notice_early_takes_it_off_the_page_at_once(
    api: ApiClient, admin: dict[str, str], reader: dict[str, str]
) -> None:
    later = iso(utcnow() + timedelta(hours=2))
    kept = post(api, admin, title="Quota raised", severity="minor").json()
    ended = post(api, admin, title="Fabric swap", ends_at=later).json()
    assert on_page(api) == {kept["id"]: ("notice", "current"), ended["id"]: ("notice", "current")}

    assert api.delete(f"{URL}/{ended['id']}", headers=admin).status_code == 204
    assert listed(api, reader) == [(kept["id"], "current")]
    assert on_page(api) == {kept["id"]: ("notice", "current")}
    [past] = api.get(f"{URL}?phase=past", headers=reader).json()["items"]
    assert (past["id"], past["ended_by"], past["ends_at"] is not None) == (
        ended["id"],
        "admin",
        True,
    )
    assert datetime.fromisoformat(past["ended_at"]) <= utcnow()
    assert api.delete(f"{URL}/{ended['id']}", headers=admin).status_code == 204  # still over
    assert api.delete(f"{URL}/999999", headers=admin).status_code == 404
    assert api.delete(f"{URL}/0", headers=admin).status_code == 422


def test_scoped_maintenance_shows_what_it_is_about_and_never_makes_a_target_up(
    api: ApiClient, admin: dict[str, str], sessions: sessionmaker[Session]
) -> None:
    """gpu-1 was never probed: under maintenance it is still unknown, not up."""
    with sessions() as session:
        upsert_target(session, TargetConfig(name="gpu-1", kind="tcp", url="tcp://h:22"), "config")
        session.commit()
    until = iso(utcnow() + timedelta(hours=2))
    made = post(
        api, admin, title="Swap", kind="maintenance", ends_at=until, targets=["gpu-1"], body="a<b"
    )
    assert made.status_code == 201, made.text
    notice = made.json()
    assert notice["in_sla"] is True
    assert notice["scope"] == {"provider": None, "region": None, "pool": None, "targets": ["gpu-1"]}
    page = api.get("/").text
    assert on_page(api) == {notice["id"]: ("maintenance", "current")}
    assert '<a href="targets/gpu-1">gpu-1</a>' in page
    assert "a&lt;b" in page
    assert "a<b" not in page
    row = re.search(r'<[^>]*data-target="gpu-1"[^>]*>', page)
    assert row is not None
    assert 'data-state="unknown"' in row.group(0)


def test_the_list_pages_current_before_upcoming(
    api: ApiClient, admin: dict[str, str], reader: dict[str, str]
) -> None:
    ahead = post(api, admin, title="later", starts_at=iso(utcnow() + timedelta(days=1))).json()
    now = post(api, admin, title="now").json()
    assert listed(api, reader) == [(now["id"], "current"), (ahead["id"], "upcoming")]
    first = api.get(f"{URL}?limit=1", headers=reader).json()
    assert (first["total"], first["next_offset"], len(first["items"])) == (2, 1, 1)


def test_the_pages_of_a_target_a_pool_and_a_provider_show_the_notices_about_them(
    api: ApiClient, admin: dict[str, str], sessions: sessionmaker[Session]
) -> None:
    with sessions() as session:
        for name, cloud, pool in (("gpu-1", "aws", "h100"), ("gpu-2", "gcp", "a100")):
            config = TargetConfig(
                name=name, kind="tcp", url="tcp://h:22", provider=cloud, pool=pool
            )
            upsert_target(session, config, "config")
        session.commit()
    made = {
        title: post(api, admin, title=title, **scope).json()["id"]
        for title, scope in (
            ("everyone", {}),
            ("gpu-1 only", {"targets": ["gpu-1"]}),
            ("gpu-2 only", {"targets": ["gpu-2"]}),
            ("all of aws", {"provider": "aws"}),
            ("the h100 pool", {"pool": "h100"}),
        )
    }

    def shown(path: str) -> set[str]:
        answer = api.get(path)
        assert answer.status_code == 200, path
        ids = re.findall(r'data-notice="(\d+)"', answer.text)
        return {title for title, i in made.items() if str(i) in ids}

    assert shown("/targets/gpu-1") == {"everyone", "gpu-1 only", "all of aws", "the h100 pool"}
    assert shown("/targets/gpu-2") == {"everyone", "gpu-2 only"}
    # a pool's page: what is about any of its members
    assert shown("/pools/h100") == {"everyone", "gpu-1 only", "all of aws", "the h100 pool"}
    assert shown("/pools/a100") == {"everyone", "gpu-2 only"}
    assert '<a href="../targets/gpu-1">gpu-1</a>' in api.get("/targets/gpu-1").text
    with sessions() as session:
        provider(session, "aws")
        session.commit()
    assert shown("/providers/aws") == {"everyone", "all of aws"}
