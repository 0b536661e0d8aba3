"""POST /api/v1/heartbeats/{target}: a training job's push, authorized per target."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import Engine, select
from sqlalchemy.orm import Session, sessionmaker

from monitor import tokens
from monitor.api.app import create_app
from monitor.api.deps import db_session
from monitor.db.base import utcnow
from monitor.db.models import Heartbeat, Target
from monitor.settings import Settings
from tests.support import ApiClient


@dataclass
class World:
    api: ApiClient
    sessions: sessionmaker[Session]
    admin: str
    read: str
    job_a: str  # heartbeat token of target job-a
    job_b: str  # heartbeat token of target job-b

    def push(self, target: str, token: str | None, **kwargs: Any) -> Any:
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        return self.api.post(f"/api/v1/heartbeats/{target}", headers=headers, **kwargs)

    def beats(self, target: str) -> list[Heartbeat]:
        with self.sessions() as session:
            query = select(Heartbeat).join(Target).where(Target.name == target)
            return list(session.scalars(query.order_by(Heartbeat.id)))


@pytest.fixture
def world(engine: Engine, sessions: sessionmaker[Session], tmp_path: Path) -> Iterator[World]:
    """The real app (request sessions inside the test's transaction), two heartbeat targets
    with their own tokens, an HTTP target without one, a retired target, and API tokens."""
    settings = Settings(  # type: ignore[call-arg]
        database_url=engine.url.render_as_string(hide_password=False),
        config=tmp_path / "none.yaml",
        state_dir=tmp_path / "state",
    )
    app = create_app(settings)

    def session_in_test_transaction() -> Iterator[Session]:
        with sessions() as session:
            yield session

    app.dependency_overrides[db_session] = session_in_test_transaction
    with sessions() as session:
        job_a, job_b = (
            Target(name="job-a", kind="heartbeat"),
            Target(name="job-b", kind="heartbeat"),
        )
        http = Target(name="node-0", kind="http", url="http://10.0.0.5/healthz")
        gone = Target(name="gone", kind="heartbeat", retired_at=utcnow())
        session.add_all([job_a, job_b, http, gone])
        session.flush()
        hb_a, hb_b = (tokens.create_heartbeat_token(session, t) for t in (job_a, job_b))
        tokens.create_heartbeat_token(session, gone)
        admin, read = tokens.create(session, "admin", "admin"), tokens.create(session, "r", "read")
        session.commit()
    with ApiClient(app) as client:
        yield World(client, sessions, admin, read, hb_a, hb_b)


def test_a_target_accepts_its_own_heartbeat_token_and_answers_202(world: World) -> None:
    before = utcnow()
    response = world.push("job-a", world.job_a, json={"step": 1200, "throughput": 3.5e4})
    assert response.status_code == 202, response.text
    body = response.json()
    assert body["target"] == "job-a"
    at = datetime.fromisoformat(body["at"])
    assert before <= at <= utcnow()
    [beat] = world.beats("job-a")
    assert (beat.step, beat.throughput, beat.payload) == (1200, 3.5e4, None)
    assert beat.at == at


def test_an_admin_token_may_push_for_any_target(world: World) -> None:
    assert world.push("job-b", world.admin).status_code == 202
    assert len(world.beats("job-b")) == 1


def test_a_heartbeat_token_for_one_target_does_not_work_for_another(world: World) -> None:
    response = world.push("job-b", world.job_a, json={"step": 1})
    assert response.status_code == 401
    assert response.json()["error"]["code"] == "unauthorized"
    assert world.beats("job-b") == []


def test_a_rotated_heartbeat_token_stops_working(world: World) -> None:
    with world.sessions() as session:
        row = session.scalars(select(Target).where(Target.name == "job-a")).one()
        tokens.create_heartbeat_token(session, row)
        session.commit()
    assert world.push("job-a", world.job_a).status_code == 401


@pytest.mark.parametrize(
    ("token", "status"),
    [
        pytest.param(None, 401, id="no-token"),
        pytest.param("slmhb_" + "A" * 43, 401, id="unknown-heartbeat-token"),
        pytest.param("read", 403, id="read-scope-api-token"),
    ],
)
def test_pushes_without_the_right_token_are_refused_and_not_stored(
    world: World, token: str | None, status: int
) -> None:
    presented = world.read if token == "read" else token
    response = world.push("job-a", presented, json={"step": 1})
    assert response.status_code == status, response.text
    assert world.beats("job-a") == []


def test_an_anonymous_push_is_refused_before_its_body_is_read(world: World) -> None:
    response = world.push("job-a", None, content=b"{broken")
    assert response.status_code == 401


def test_the_body_is_optional(world: World) -> None:
    response = world.push("job-a", world.job_a)
    assert response.status_code == 202, response.text
    [beat] = world.beats("job-a")
    assert (beat.step, beat.throughput, beat.payload) == (None, None, None)


def test_extra_fields_are_kept_as_the_payload(world: World) -> None:
    body = {"step": 5, "loss": 1.25, "epoch": 2, "host": "node-0"}
    world.push("job-a", world.job_a, json=body)
    [beat] = world.beats("job-a")
    assert beat.payload == {"loss": 1.25, "epoch": 2, "host": "node-0"}


def test_a_heartbeat_target_of_another_kind_is_accepted(world: World) -> None:
    # A training job may push beside an HTTP probe of the instance it runs on.
    assert world.push("node-0", world.admin, json={"step": 3}).status_code == 202
    assert [b.step for b in world.beats("node-0")] == [3]


@pytest.mark.parametrize(
    ("target", "message"),
    [
        pytest.param("ghost", "no target named 'ghost'", id="unknown"),
        pytest.param("gone", "target 'gone' is retired", id="retired"),
    ],
)
def test_an_unknown_or_retired_target_is_404_for_an_admin(
    world: World, target: str, message: str
) -> None:
    response = world.push(target, world.admin)
    assert response.status_code == 404
    assert response.json()["error"]["message"] == message


def test_an_unknown_target_does_not_reveal_itself_to_an_anonymous_caller(world: World) -> None:
    assert world.push("ghost", None).status_code == 401
    assert world.push("ghost", world.job_a).status_code == 401


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        pytest.param({"step": -1}, [("step", "Input should be greater than or equal to 0")]),
        pytest.param(
            {"throughput": -0.5}, [("throughput", "Input should be greater than or equal to 0")]
        ),
        pytest.param({"step": "many"}, [("step", "must be a number")]),
        # what the schema says: a JSON number, not a numeric string or a boolean
        pytest.param({"step": "5"}, [("step", "must be a number")]),
        pytest.param({"step": True}, [("step", "must be a number")]),
        pytest.param(
            {"step": 5.5},
            [("step", "Input should be a valid integer, got a number with a fractional part")],
        ),
        pytest.param({"throughput": "1.5"}, [("throughput", "must be a number")]),
        pytest.param(
            {"step": 2**63}, [("step", "Input should be less than or equal to 9223372036854775807")]
        ),
        pytest.param(
            [1, 2], [("", "Input should be a valid dictionary or instance of HeartbeatIn")]
        ),
    ],
)
def test_an_invalid_body_is_422_naming_the_field(
    world: World, body: Any, expected: list[tuple[str, str]]
) -> None:
    response = world.push("job-a", world.job_a, json=body)
    assert response.status_code == 422, response.text
    got = [(d["path"], d["message"]) for d in response.json()["error"]["details"]]
    assert got == expected
    assert world.beats("job-a") == []


@pytest.mark.parametrize(
    ("content", "status"),
    [
        pytest.param(b'{"throughput": NaN}', 422, id="nan"),
        pytest.param(b'{"throughput": Infinity}', 422, id="infinity"),
        pytest.param(b'{"note": "a\\u0000b"}', 422, id="nul-character"),
        pytest.param(b"{oops", 422, id="not-json"),
        pytest.param(b'{"pad": "' + b"x" * 17_000 + b'"}', 413, id="over-16-kib"),
    ],
)
def test_a_body_we_cannot_store_is_refused_without_a_500(
    world: World, content: bytes, status: int
) -> None:
    response = world.push("job-a", world.job_a, content=content)
    assert response.status_code == status, response.text
    assert response.json()["error"]["code"] in ("validation_error", "payload_too_large")
    assert world.beats("job-a") == []


def test_heartbeats_are_stamped_with_the_servers_time(world: World) -> None:
    skewed = utcnow() - timedelta(seconds=90)  # a box whose clock runs 90 s behind
    world.push("job-a", world.job_a, json={"at": skewed.isoformat()})
    world.push("job-a", world.job_a, json={})
    beats = world.beats("job-a")
    assert len(beats) == 2
    assert all(utcnow() - beat.at < timedelta(seconds=30) for beat in beats)
    assert {beat.at.tzinfo for beat in beats} == {UTC}


def test_a_reading_that_waited_out_an_outage_keeps_its_own_time(world: World) -> None:
    taken = (utcnow() - timedelta(minutes=10)).replace(microsecond=0)
    response = world.push("job-a", world.job_a, json={"at": taken.isoformat(), "step": 5})
    assert response.status_code == 202, response.text
    [beat] = world.beats("job-a")
    assert beat.at == taken


@pytest.mark.parametrize(
    "at",
    [
        pytest.param("1999-01-01T00:00:00Z", id="older-than-seven-days"),
        pytest.param("2999-01-01T00:00:00Z", id="in-the-future"),
        pytest.param("2026-12-03T10:00:00", id="no-timezone"),
    ],
)
def test_a_reading_time_we_cannot_believe_is_refused(world: World, at: str) -> None:
    response = world.push("job-a", world.job_a, json={"at": at})
    assert response.status_code == 422, response.text
    assert "at" in response.text
    assert world.beats("job-a") == []


def test_an_agents_gpu_readings_are_stored_for_the_judge(world: World) -> None:
    from monitor.agent.nvml import NvmlReader
    from tests.fake_nvml import FakeNvml, h100s

    reading = NvmlReader(FakeNvml(h100s(2)), hostname="box").read().to_json()
    response = world.push("job-a", world.job_a, json=reading)
    assert response.status_code == 202, response.text
    [beat] = world.beats("job-a")
    assert beat.payload is not None
    assert beat.payload["source"] == "nvml"
    assert [g["uuid"] for g in beat.payload["gpus"]] == [g["uuid"] for g in reading["gpus"]]
    assert beat.payload["gpus"][0]["temperature_c"] == 59.0


@pytest.mark.parametrize(
    "gpus",
    [
        pytest.param([{"temperature_c": 50}], id="no-key"),
        pytest.param([{"key": "GPU-a", "temperature_c": -4}], id="negative"),
        pytest.param([{"key": "GPU-a", "xid": 7.5}], id="fractional-xid"),
        pytest.param([{"key": "GPU-a", "row_remap_failure": "no"}], id="not-a-boolean"),
        pytest.param([{"key": f"GPU-{i}"} for i in range(65)], id="more-than-64"),
        pytest.param({"key": "GPU-a"}, id="not-a-list"),
    ],
)
def test_gpu_readings_the_judge_could_not_read_are_refused(world: World, gpus: object) -> None:
    response = world.push("job-a", world.job_a, json={"gpus": gpus})
    assert response.status_code == 422, response.text
    assert world.beats("job-a") == []
