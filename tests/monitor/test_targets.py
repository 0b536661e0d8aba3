"""Config targets into the database: created, changed, retired and revived, and an unchanged
config costs one read and no writes (the sync runs every tick in every worker)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from typing import Any

import pytest
from sqlalchemy import event, select
from sqlalchemy.orm import Session

from monitor.config.models import Config, TargetConfig
from monitor.db.models import Target
from monitor.targets import sync_config_targets, upsert_target

T0 = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)


def config(*targets: dict[str, Any]) -> Config:
    return Config.model_validate({"targets": list(targets)})


def http(name: str, **extra: Any) -> dict[str, Any]:
    return {"name": name, "kind": "http", "url": f"http://{name}/", "interval": 5, **extra}


@contextmanager
def statements(session: Session) -> Iterator[list[str]]:
    """The SQL statements ``session`` sends while the block runs (verbs only)."""
    seen: list[str] = []
    connection = session.connection()

    def record(_conn: Any, _cursor: Any, statement: str, *_args: Any) -> None:
        seen.append(statement.split(None, 1)[0].upper())

    event.listen(connection, "before_cursor_execute", record)
    try:
        yield seen
    finally:
        event.remove(connection, "before_cursor_execute", record)


def by_name(session: Session) -> dict[str, Target]:
    return {t.name: t for t in session.scalars(select(Target))}


def test_first_sync_creates_every_target(session: Session) -> None:
    wanted = config(http("a", hourly_price=2.5, labels={"team": "ml"}), http("b", gpus=8))
    assert sync_config_targets(session, wanted, T0) == 2
    session.flush()
    rows = by_name(session)
    assert rows["a"].hourly_price == 2.5
    assert rows["a"].labels == {"team": "ml"}
    assert rows["b"].gpus == 8
    assert rows["b"].source == "config"
    assert rows["a"].next_probe_at is None  # due at once


def test_an_unchanged_config_reads_once_and_writes_nothing(session: Session) -> None:
    many = config(*(http(f"t{i}", hourly_price=1.1 * i, labels={"i": str(i)}) for i in range(300)))
    sync_config_targets(session, many, T0)
    session.flush()
    session.expire_all()  # values as the database returns them (floats, JSON), not as we set them
    with statements(session) as sent:
        assert sync_config_targets(session, many, T0) == 0
        session.flush()
    assert [s for s in sent if s != "SELECT"] == []
    assert sent.count("SELECT") <= 2  # the advisory lock on PostgreSQL, the rows


def test_a_changed_url_is_written_and_due_now(session: Session) -> None:
    sync_config_targets(session, config(http("a"), http("b")), T0)
    session.flush()
    for row in session.scalars(select(Target)):
        row.next_probe_at = T0
    session.flush()
    changed = config(http("a", url="http://elsewhere/"), http("b", timeout=2))
    assert sync_config_targets(session, changed, T0) == 2
    session.flush()
    rows = by_name(session)
    assert rows["a"].url == "http://elsewhere/"
    assert rows["a"].next_probe_at is None
    assert rows["b"].timeout_s == 2
    assert rows["b"].next_probe_at == T0


def test_a_target_gone_from_the_config_is_retired_and_comes_back(session: Session) -> None:
    sync_config_targets(session, config(http("a"), http("b")), T0)
    session.flush()
    assert sync_config_targets(session, config(http("a")), T0) == 1
    session.flush()
    assert by_name(session)["b"].retired_at == T0
    assert sync_config_targets(session, config(http("a")), T0) == 0  # retired stays retired
    assert sync_config_targets(session, config(http("a"), http("b")), T0) == 1
    session.flush()
    assert by_name(session)["b"].retired_at is None


def test_api_targets_are_left_alone_unless_the_config_names_them(session: Session) -> None:
    upsert_target(session, TargetConfig.model_validate(http("api-only")), "api")
    upsert_target(session, TargetConfig.model_validate(http("shared")), "api")
    session.flush()
    sync_config_targets(session, config(http("shared", gpus=4)), T0)
    session.flush()
    rows = by_name(session)
    assert rows["api-only"].retired_at is None
    assert rows["api-only"].source == "api"
    assert rows["shared"].source == "config"
    assert rows["shared"].gpus == 4


@pytest.mark.parametrize("field", ["kind", "interval"])
def test_every_probe_change_makes_the_target_due(session: Session, field: str) -> None:
    sync_config_targets(session, config(http("a")), T0)
    session.flush()
    row = by_name(session)["a"]
    row.next_probe_at = T0
    session.flush()
    change = {"kind": {"kind": "tcp", "url": "tcp://a:22"}, "interval": {"interval": 10}}[field]
    sync_config_targets(session, config(http("a") | change), T0)
    session.flush()
    assert by_name(session)["a"].next_probe_at is None


def test_a_target_without_a_provider_is_stored_with_its_sla_policys_provider(
    session: Session,
) -> None:
    wanted = Config.model_validate(
        {
            "sla_policies": [{"name": "lambda-gpu", "provider": "lambda", "target_pct": 99.9}],
            "targets": [
                http("ec2", sla="aws-ec2-instance"),
                http("vm", sla="gcp-compute-single-vm"),
                http("gpu", sla="lambda-gpu"),
                http("bare"),
            ],
        }
    )
    sync_config_targets(session, wanted, T0)
    session.flush()
    assert {n: t.provider for n, t in by_name(session).items()} == {
        "ec2": "aws",
        "vm": "gcp",
        "gpu": "lambda",
        "bare": None,
    }


def test_a_target_stored_before_without_a_provider_gets_it_at_the_next_sync(
    session: Session,
) -> None:
    sync_config_targets(session, config(http("ec2", sla="aws-ec2-instance")), T0)
    session.flush()
    by_name(session)["ec2"].provider = None  # as syncs wrote it before targets took their
    session.flush()  # policy's provider
    assert sync_config_targets(session, config(http("ec2", sla="aws-ec2-instance")), T0) == 1
    assert by_name(session)["ec2"].provider == "aws"


def test_sync_fills_in_the_provider_even_for_a_config_that_skipped_validation(
    session: Session,
) -> None:
    cfg = TargetConfig.model_validate(http("gpu", sla="lambda-gpu"))
    user = [{"name": "lambda-gpu", "provider": "lambda", "target_pct": 99.9}]
    wanted = Config.model_construct(targets=[cfg], sla_policies=user)
    assert wanted.targets[0].provider is None
    sync_config_targets(session, wanted, T0)
    assert by_name(session)["gpu"].provider == "lambda"


def test_upserting_one_target_fills_in_a_built_in_policys_provider(session: Session) -> None:
    cfg = TargetConfig.model_validate(http("vm", sla="azure-vm-single-premium"))
    assert upsert_target(session, cfg, "api").provider == "azure"
    user = {"lambda-gpu": "lambda"}
    cfg = TargetConfig.model_validate(http("gpu", sla="lambda-gpu"))
    assert upsert_target(session, cfg, "api", user).provider == "lambda"
