"""Which schema revision a database holds, read without loading Alembic: every worker checks
it at start, and only `slamon migrate` (or `slamon run`'s preflight) needs Alembic itself."""

from __future__ import annotations

from sqlalchemy import Engine, column, inspect, select, table

VERSION_TABLE = "alembic_version"  # where Alembic records the revision


def stored_revision(engine: Engine) -> str | None:
    """The revision Alembic recorded, or None for a database without slamon's schema."""
    with engine.connect() as connection:
        if not inspect(connection).has_table(VERSION_TABLE):
            return None
        version = table(VERSION_TABLE, column("version_num"))
        found = connection.execute(select(version.c.version_num)).scalar()
        return None if found is None else str(found)
