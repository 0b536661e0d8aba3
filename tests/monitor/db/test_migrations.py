from __future__ import annotations

from datetime import UTC, datetime

import pytest
from alembic.script import ScriptDirectory
from sqlalchemy import Engine, inspect

from monitor.db.base import Base
from monitor.db.engine import make_engine
from monitor.db.migrate import alembic_config, current_revision, schema_drift, upgrade
from tests.support import PG_TEST_DB, recreate_pg_database

HEAD_REVISION = ScriptDirectory.from_config(alembic_config()).get_current_head()


def test_the_migrated_schema_matches_the_models(engine: Engine) -> None:
    assert schema_drift(engine) == []
    assert current_revision(engine) == HEAD_REVISION


def test_every_model_table_exists_after_migration(engine: Engine) -> None:
    assert set(Base.metadata.tables) <= set(inspect(engine).get_table_names())


def _fresh(kind: str, tmp_path: object) -> Engine:
    if kind == "sqlite":
        return make_engine(f"sqlite:///{tmp_path}/fresh.db")
    return make_engine(recreate_pg_database(f"{PG_TEST_DB}_migrations"))


@pytest.mark.parametrize("kind", ["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)])
def test_migrations_go_down_to_nothing_and_up_again(kind: str, tmp_path: object) -> None:
    engine = _fresh(kind, tmp_path)
    try:
        upgrade(engine)
        from alembic import command

        with engine.begin() as connection:
            command.downgrade(alembic_config(connection), "base")
        assert set(inspect(engine).get_table_names()) <= {"alembic_version"}
        upgrade(engine)
        assert schema_drift(engine) == []
    finally:
        engine.dispose()


def test_sqlite_stores_rollups_in_their_key_without_a_rowid(tmp_path: object) -> None:
    """The minute rollups hold most probes now: on SQLite no rowid and no second copy of the
    key (migration 0015), and a downgrade gives the rowid table back with its rows."""
    from pathlib import Path

    from alembic import command
    from sqlalchemy import text
    from sqlalchemy.orm import Session

    from monitor.config.models import TargetConfig
    from monitor.db.models import ProbeRollup
    from monitor.targets import upsert_target

    engine = make_engine(f"sqlite:///{Path(str(tmp_path)) / 'r.db'}")
    try:
        upgrade(engine)
        with Session(engine) as session, session.begin():
            target = upsert_target(
                session, TargetConfig(name="t", kind="http", url="http://h/"), "config"
            )
            session.flush()
            session.add(
                ProbeRollup(target_id=target.id, resolution="minute", bucket_start=datetime(
                    2026, 12, 1, tzinfo=UTC), count=12, failures=1, unknown=0)
            )  # fmt: skip
        ddl = "SELECT sql FROM sqlite_master WHERE name = 'probe_rollups'"
        with engine.connect() as c:
            assert "WITHOUT ROWID" in c.scalar(text(ddl))
        with engine.begin() as c:
            command.downgrade(alembic_config(c), "0014")
        with engine.connect() as c:
            assert "WITHOUT ROWID" not in c.scalar(text(ddl))
            assert c.scalar(text("SELECT count FROM probe_rollups")) == 12
        upgrade(engine)
        assert schema_drift(engine) == []
    finally:
        engine.dispose()


def test_compaction_finds_its_rows_through_the_partial_index(engine: Engine) -> None:
    """Compaction takes the marked rows of final minutes, oldest first: the index lists only
    them, so rows recorded before migration 0015 (weeks of them at the upgrade) are never
    scanned to find them (each database's planner says so)."""
    from sqlalchemy import text

    from monitor.probes.rollup import marked_before

    query = marked_before(datetime(2026, 12, 1, tzinfo=UTC))
    with engine.connect() as connection:
        sql = str(query.compile(connection, compile_kwargs={"literal_binds": True}))
        if engine.dialect.name == "postgresql":
            connection.execute(text("SET LOCAL enable_seqscan = off"))
            plan = "\n".join(connection.scalars(text(f"EXPLAIN {sql}")))
            kind = connection.scalar(
                text("SELECT indexdef FROM pg_indexes WHERE indexname = 'ix_probe_results_at'")
            )
            # rows are deleted within minutes and their space reused: not in time order, so
            # not BRIN (migration 0015)
            assert kind is not None
            assert "USING btree" in kind
            # and autovacuum frees them by their number, not a fifth of two weeks' kept rows
            options = connection.scalar(
                text("SELECT reloptions FROM pg_class WHERE relname = 'probe_results'")
            )
            assert set(options) == {
                "autovacuum_vacuum_scale_factor=0",
                "autovacuum_vacuum_threshold=20000",
            }
        else:
            plan = "\n".join(
                row[-1] for row in connection.execute(text(f"EXPLAIN QUERY PLAN {sql}"))
            )
    assert "ix_probe_results_marked_at" in plan, plan


CHANNEL_STATE_COLUMNS = {"disabled_at", "last_error", "config_digest"}


@pytest.mark.parametrize("kind", ["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)])
def test_0007_gives_existing_channels_the_disabled_columns_and_keeps_them_enabled(
    kind: str, tmp_path: object
) -> None:
    from datetime import UTC, datetime

    from alembic import command
    from sqlalchemy import text

    engine = _fresh(kind, tmp_path)
    try:
        upgrade(engine, "0006")
        with engine.begin() as connection:
            connection.execute(
                text(
                    "INSERT INTO channels (name, kind, enabled, created_at) "
                    "VALUES ('ops', 'webhook', :enabled, :at)"
                ),
                {"enabled": True, "at": datetime(2026, 12, 1, tzinfo=UTC)},
            )
        assert not CHANNEL_STATE_COLUMNS & _columns(engine, "channels").keys()

        upgrade(engine, "0007")

        columns = _columns(engine, "channels")
        assert {name: columns[name]["nullable"] for name in CHANNEL_STATE_COLUMNS} == dict.fromkeys(
            CHANNEL_STATE_COLUMNS, True
        )
        with engine.connect() as connection:
            row = connection.execute(
                text("SELECT name, enabled, disabled_at, last_error, config_digest FROM channels")
            ).one()
        assert (row[0], bool(row[1]), *row[2:]) == ("ops", True, None, None, None)

        with engine.begin() as connection:
            command.downgrade(alembic_config(connection), "0006")
        assert not CHANNEL_STATE_COLUMNS & _columns(engine, "channels").keys()
        with engine.connect() as connection:
            assert connection.execute(text("SELECT name FROM channels")).scalars().all() == ["ops"]
    finally:
        engine.dispose()


@pytest.mark.parametrize("kind", ["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)])
def test_0008_leaves_existing_targets_recovering_as_they_confirm_down(
    kind: str, tmp_path: object
) -> None:
    from datetime import UTC, datetime

    from alembic import command
    from sqlalchemy import text

    engine = _fresh(kind, tmp_path)
    try:
        upgrade(engine, "0007")
        with engine.begin() as connection:
            connection.execute(
                text(
                    "INSERT INTO targets (name, kind, gpus, hourly_price, interval_s, timeout_s,"
                    " confirmations, settings, labels, source, created_at) VALUES ('gpu-a',"
                    " 'http', 0, 0, 30, 5, 3, '{}', '{}', 'config', :at)"
                ),
                {"at": datetime(2026, 12, 1, tzinfo=UTC)},
            )
        assert "recovery_confirmations" not in _columns(engine, "targets")

        upgrade(engine, "0008")

        assert _columns(engine, "targets")["recovery_confirmations"]["nullable"] is True
        with engine.connect() as connection:
            row = connection.execute(
                text("SELECT name, confirmations, recovery_confirmations FROM targets")
            ).one()
        assert tuple(row) == ("gpu-a", 3, None)

        with engine.begin() as connection:
            command.downgrade(alembic_config(connection), "0007")
        assert "recovery_confirmations" not in _columns(engine, "targets")
        with engine.connect() as connection:
            assert connection.execute(text("SELECT name FROM targets")).scalars().all() == ["gpu-a"]
    finally:
        engine.dispose()


def _columns(engine: Engine, table: str) -> dict[str, dict[str, object]]:
    return {str(c["name"]): dict(c) for c in inspect(engine).get_columns(table)}
