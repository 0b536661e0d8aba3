from __future__ import annotations

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


@pytest.mark.postgres
def test_raw_results_are_time_indexed_by_brin_on_postgresql(postgresql_engine: Engine) -> None:
    """The per-row B-tree on probe_results.at cost ~25 bytes a probe; BRIN costs almost none."""
    from sqlalchemy import text

    with postgresql_engine.connect() as connection:
        definition = connection.scalar(
            text("SELECT indexdef FROM pg_indexes WHERE indexname = 'ix_probe_results_at'")
        )
    assert definition is not None
    assert "USING brin" in definition
