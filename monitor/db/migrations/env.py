"""Alembic environment: migrations run on the connection `slamon migrate` and the tests hand in
(``monitor.db.migrate.alembic_config``: ``config.attributes["connection"]``).

Alembic's own command line (a developer's ``alembic revision --autogenerate``, with the
repository's alembic.ini) hands in none: it names the database with ``-x url=…`` or
``SLAMON_DATABASE_URL``. The process settings are not read here: ``monitor.db`` sits beside
``monitor.settings`` in the layers (docs/architecture.md), and the commands that migrate read
them and pass the connection.
"""

from __future__ import annotations

import os
from typing import Any, Literal

from alembic import context
from alembic.autogenerate.api import AutogenContext
from sqlalchemy import Connection

from monitor.db import models  # noqa: F401  (registers every table on the metadata)
from monitor.db.base import Base
from monitor.db.engine import make_engine
from monitor.db.types import UTCDateTime

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


def command_line_url() -> str:
    """The database alembic's command line names: ``-x url=…``, else ``SLAMON_DATABASE_URL``."""
    url = context.get_x_argument(as_dictionary=True).get("url") or os.environ.get(
        "SLAMON_DATABASE_URL"
    )
    if not url:
        raise SystemExit(
            "alembic: name the database with -x url=… or SLAMON_DATABASE_URL "
            "(`slamon migrate` reads slamon's settings itself)"
        )
    return url


def run_migrations_online() -> None:
    connection = context.config.attributes.get("connection")
    if connection is not None:
        run_with(connection)
        return
    engine = make_engine(command_line_url())
    with engine.connect() as connection:
        run_with(connection)
    engine.dispose()


run_migrations_online()
