"""The read-only role Grafana connects as (migration 0003), on the real PostgreSQL server.

The server trusts local connections, so the role logs in without a password here; in
production the operator sets one (``ALTER ROLE slamon_grafana PASSWORD …``).
"""

from __future__ import annotations

from collections.abc import Iterator

import psycopg
import pytest
import sqlalchemy as sa
from alembic import command
from sqlalchemy import Engine

from monitor.db.engine import make_engine
from monitor.db.migrate import alembic_config, upgrade
from tests.support import PG_TEST_DB, recreate_pg_database

pytestmark = pytest.mark.postgres

ROLE = "slamon_grafana"


def as_grafana(engine: Engine) -> Engine:
    return sa.create_engine(engine.url.set(username=ROLE, password=None))


@pytest.fixture
def grafana(postgresql_engine: Engine) -> Iterator[sa.Connection]:
    """A connection to the migrated test database as the Grafana role."""
    reader = as_grafana(postgresql_engine)
    try:
        with reader.connect() as connection:
            yield connection
            connection.rollback()
    finally:
        reader.dispose()


def sqlstate_of(connection: sa.Connection, statement: str) -> str:
    """The SQLSTATE ``statement`` fails with (inside a savepoint, so the test goes on)."""
    with pytest.raises(sa.exc.DBAPIError) as raised, connection.begin_nested():
        connection.exec_driver_sql(statement)
    error = raised.value.orig
    assert isinstance(error, psycopg.Error)
    return str(error.sqlstate)


def test_the_grafana_role_can_log_in_and_read_every_table(grafana: sa.Connection) -> None:
    assert grafana.exec_driver_sql("SELECT current_user").scalar() == ROLE
    for table in ("targets", "outages", "probe_results", "incidents", "alerts", "task_stats"):
        assert grafana.exec_driver_sql(f"SELECT count(*) FROM {table}").scalar() is not None


def test_the_grafana_role_is_not_allowed_to_write(grafana: sa.Connection) -> None:
    # Its sessions are read-only by default; turned off, the missing privileges still refuse.
    assert grafana.exec_driver_sql("SHOW default_transaction_read_only").scalar() == "on"
    grafana.exec_driver_sql("SET default_transaction_read_only = off")
    grafana.commit()  # the next transaction starts read-write
    insufficient_privilege = "42501"
    for statement in (
        "INSERT INTO task_stats VALUES ('x', 1, 0, 0.1, 0.1, now())",
        "UPDATE targets SET gpus = 0",
        "DELETE FROM outages",
        "TRUNCATE probe_results",
        "CREATE TABLE grafana_was_here (id int)",
        "DROP TABLE targets",
    ):
        assert sqlstate_of(grafana, statement) == insufficient_privilege, statement


def test_grafana_sessions_get_sort_memory_for_the_dashboards(grafana: sa.Connection) -> None:
    # migration 0006: a month of rollups grouped per panel sorts in memory, not on disk
    assert grafana.exec_driver_sql("SHOW work_mem").scalar() == "32MB"


def test_grafana_sessions_start_read_only(grafana: sa.Connection) -> None:
    read_only_transaction = "25006"
    assert sqlstate_of(grafana, "DELETE FROM outages") == read_only_transaction


def test_the_role_has_no_powers_beyond_login(postgresql_engine: Engine) -> None:
    with postgresql_engine.connect() as connection:
        row = connection.execute(
            sa.text(
                "SELECT rolcanlogin, rolsuper, rolcreatedb, rolcreaterole, rolbypassrls "
                "FROM pg_roles WHERE rolname = :role"
            ),
            {"role": ROLE},
        ).one()
    assert tuple(row) == (True, False, False, False, False)


def can_select(connection: sa.Connection, table: str) -> bool:
    role_exists = connection.execute(
        sa.text("SELECT 1 FROM pg_roles WHERE rolname = :role"), {"role": ROLE}
    ).scalar()
    if not role_exists:
        return False
    query = sa.text("SELECT has_table_privilege(:role, :table, 'SELECT')")
    return bool(connection.execute(query, {"role": ROLE, "table": table}).scalar())


@pytest.fixture
def fresh_engine() -> Iterator[Engine]:
    engine = make_engine(recreate_pg_database(f"{PG_TEST_DB}_grafana_role"))
    try:
        yield engine
    finally:
        engine.dispose()


def test_migrating_twice_and_back_keeps_the_grants_consistent(fresh_engine: Engine) -> None:
    upgrade(fresh_engine)
    upgrade(fresh_engine)  # a no-op at head; the role may already exist from other databases
    with fresh_engine.connect() as connection:
        assert can_select(connection, "targets")

    with fresh_engine.begin() as connection:
        command.downgrade(alembic_config(connection), "0002")
    with fresh_engine.connect() as connection:
        assert not can_select(connection, "targets")

    upgrade(fresh_engine)
    with fresh_engine.connect() as connection:
        assert can_select(connection, "targets")


def test_tables_created_after_the_migration_are_readable_too(fresh_engine: Engine) -> None:
    upgrade(fresh_engine)
    with fresh_engine.begin() as connection:
        connection.exec_driver_sql("CREATE TABLE later_migration (id int)")
    with fresh_engine.connect() as connection:
        assert can_select(connection, "later_migration")


def test_the_password_comes_from_the_environment_at_migration_time(
    fresh_engine: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Quotes and percent signs must survive: PostgreSQL quotes the literal, not Python.
    monkeypatch.setenv("SLAMON_GRAFANA_DB_PASSWORD", "it's 100%s 'safe'")
    upgrade(fresh_engine)
    with fresh_engine.connect() as connection:
        stored = connection.execute(
            sa.text("SELECT rolpassword FROM pg_authid WHERE rolname = :role"), {"role": ROLE}
        ).scalar()
        assert stored is not None
        assert stored.startswith("SCRAM-SHA-256$")
        # leave the shared role as the other tests expect it: no password
        connection.exec_driver_sql(f"ALTER ROLE {ROLE} PASSWORD NULL")
        connection.commit()


def test_sqlite_databases_get_no_role(tmp_path: object) -> None:
    engine = make_engine(f"sqlite:///{tmp_path}/no-roles.db")
    try:
        upgrade(engine)  # nothing to do, nothing to fail
    finally:
        engine.dispose()
