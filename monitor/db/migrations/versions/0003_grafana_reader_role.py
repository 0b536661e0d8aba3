"""grafana reader role: a SELECT-only PostgreSQL role for Grafana's datasource

On PostgreSQL, creates the role ``slamon_grafana`` (LOGIN, read-only by default) when it does
not exist, and grants it CONNECT on this database, USAGE on schema public, SELECT on every
table and, through default privileges, on tables later migrations create. On SQLite: nothing.

The role has no password unless ``SLAMON_GRAFANA_DB_PASSWORD`` is set when this migration runs;
otherwise set one with ``ALTER ROLE slamon_grafana PASSWORD '…'`` (Grafana needs it unless
pg_hba.conf trusts the connection). Creating the role needs CREATEROLE; a migrating user
without it gets the grants only if an administrator created the role beforehand.

Roles are cluster-wide and several databases may be migrated at once, so every step is
idempotent and tolerates a concurrent twin. Downgrade revokes the grants in this database and
drops the role only when nothing in any database still depends on it.

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-30 04:00:00
"""

from __future__ import annotations

import os
from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0003"
down_revision: str | None = "0002"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

ROLE = "slamon_grafana"  # a fixed identifier: written into the SQL below, never user input
PASSWORD_ENV = "SLAMON_GRAFANA_DB_PASSWORD"

CREATE_ROLE = """
DO $$
BEGIN
    IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'slamon_grafana')
       AND (SELECT rolsuper OR rolcreaterole FROM pg_roles WHERE rolname = current_user) THEN
        CREATE ROLE slamon_grafana LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE NOINHERIT;
    END IF;
EXCEPTION
    -- another database's migration created it at the same moment
    WHEN duplicate_object OR unique_violation THEN NULL;
END $$
"""

GRANT = """
DO $$
BEGIN
    IF EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'slamon_grafana') THEN
        EXECUTE format('GRANT CONNECT ON DATABASE %I TO slamon_grafana', current_database());
        GRANT USAGE ON SCHEMA public TO slamon_grafana;
        GRANT SELECT ON ALL TABLES IN SCHEMA public TO slamon_grafana;
        ALTER DEFAULT PRIVILEGES IN SCHEMA public GRANT SELECT ON TABLES TO slamon_grafana;
        IF (SELECT rolsuper OR rolcreaterole FROM pg_roles WHERE rolname = current_user) THEN
            -- a second lock: even a privilege granted by mistake later does not let it write
            ALTER ROLE slamon_grafana SET default_transaction_read_only = on;
        END IF;
    END IF;
END $$
"""

REVOKE = """
DO $$
BEGIN
    IF EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'slamon_grafana') THEN
        ALTER DEFAULT PRIVILEGES IN SCHEMA public REVOKE SELECT ON TABLES FROM slamon_grafana;
        REVOKE SELECT ON ALL TABLES IN SCHEMA public FROM slamon_grafana;
        REVOKE USAGE ON SCHEMA public FROM slamon_grafana;
        EXECUTE format('REVOKE CONNECT ON DATABASE %I FROM slamon_grafana', current_database());
    END IF;
END $$
"""

# pg_shdepend lists the role's privileges and owned objects in every database of the cluster.
DROP_IF_UNUSED = """
DO $$
BEGIN
    IF EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'slamon_grafana')
       AND NOT EXISTS (
           SELECT 1 FROM pg_shdepend d JOIN pg_roles r ON d.refobjid = r.oid
           WHERE r.rolname = 'slamon_grafana'
       ) THEN
        DROP ROLE slamon_grafana;
    END IF;
EXCEPTION
    -- granted in another database meanwhile, or dropped by a twin: the role stays (or is gone)
    WHEN dependent_objects_still_exist OR undefined_object OR insufficient_privilege THEN NULL;
END $$
"""


def upgrade() -> None:
    bind = op.get_bind()
    if bind.dialect.name != "postgresql":
        return
    op.execute(CREATE_ROLE)
    op.execute(GRANT)
    password = os.environ.get(PASSWORD_ENV)
    if password:
        _set_password(bind, password)


def _set_password(bind: sa.Connection, password: str) -> None:
    """PostgreSQL quotes the password itself (format %L): no SQL is built from it here."""
    statement = bind.execute(
        sa.text("SELECT format('ALTER ROLE slamon_grafana PASSWORD %L', CAST(:pw AS text))"),
        {"pw": password},
    ).scalar_one()
    bind.exec_driver_sql(statement)


def downgrade() -> None:
    if op.get_bind().dialect.name != "postgresql":
        return
    op.execute(REVOKE)
    op.execute(DROP_IF_UNUSED)
