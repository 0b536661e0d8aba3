"""Alembic environment: migrations run against SLAMON_DATABASE_URL, or a connection handed in
by `slamon migrate` / the tests (``config.attributes["connection"]``)."""

from __future__ import annotations

from typing import Any, Literal

from alembic import context
from alembic.autogenerate.api import AutogenContext
from sqlalchemy import Connection

from monitor.db import models  # noqa: F401  (registers every table on the metadata)
from monitor.db.base import Base
from monitor.db.engine import make_engine
from monitor.db.types import UTCDateTime
from monitor.settings import Settings

target_metadata = Base.metadata


def render_item(type_: str, obj: Any, autogen_context: AutogenContext) -> str | Literal[False]:
    """Write our dialect-aware types as plain SQLAlchemy types in migration files."""
    if type_ == "type" and isinstance(obj, UTCDateTime):
        return "sa.DateTime(timezone=True)"
    return False


def run_with(connection: Connection) -> None:
    context.configure(
        connection=connection,
        target_metadata=target_metadata,
        render_as_batch=True,  # SQLite needs batch mode to alter tables
        compare_type=True,
        render_item=render_item,
    )
    with context.begin_transaction():
        context.run_migrations()


def run_migrations_online() -> None:
    connection = context.config.attributes.get("connection")
    if connection is not None:
        run_with(connection)
        return
    engine = make_engine(Settings().database_url)
    with engine.connect() as connection:
        run_with(connection)
    engine.dispose()


run_migrations_online()
