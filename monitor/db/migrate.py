"""Running Alembic from code, so `slamon migrate` works from any directory."""

from __future__ import annotations

from pathlib import Path

from alembic import command
from alembic.autogenerate import compare_metadata
from alembic.config import Config
from alembic.migration import MigrationContext
from sqlalchemy import Connection, Engine

from monitor.db import models  # noqa: F401  (registers every table on the metadata)
from monitor.db.base import Base

ALEMBIC_DIR = Path(__file__).resolve().parent / "migrations"  # shipped inside the package


def alembic_config(connection: Connection | None = None) -> Config:
    config = Config()
    config.set_main_option("script_location", str(ALEMBIC_DIR))
    if connection is not None:
        config.attributes["connection"] = connection
    return config


def upgrade(engine: Engine, revision: str = "head") -> None:
    """Bring the schema to ``revision`` in one transaction."""
    with engine.begin() as connection:
        command.upgrade(alembic_config(connection), revision)


def current_revision(engine: Engine) -> str | None:
    with engine.connect() as connection:
        return MigrationContext.configure(connection).get_current_revision()


def schema_drift(engine: Engine) -> list[object]:
    """What differs between the migrated database and the models (empty when they agree)."""
    with engine.connect() as connection:
        context = MigrationContext.configure(connection, opts={"compare_type": True})
        return list(compare_metadata(context, Base.metadata))
