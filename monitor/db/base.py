"""The declarative base: naming conventions (Alembic's SQLite batch mode needs named
constraints) and the shared column types."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any, ClassVar

from sqlalchemy import JSON, BigInteger, Integer, MetaData
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column

from monitor.db.types import UTCDateTime

NAMING_CONVENTION = {
    "ix": "ix_%(column_0_label)s",
    "uq": "uq_%(table_name)s_%(column_0_N_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}

# SQLite only auto-increments INTEGER PRIMARY KEY; PostgreSQL gets a real bigint.
BigId = BigInteger().with_variant(Integer(), "sqlite")


def utcnow() -> datetime:
    """Now, aware UTC (the only kind of time slamon stores)."""
    return datetime.now(UTC)


class Base(DeclarativeBase):
    metadata = MetaData(naming_convention=NAMING_CONVENTION)
    type_annotation_map: ClassVar[dict[Any, Any]] = {
        datetime: UTCDateTime(),
        dict[str, Any]: JSON(),
        list[str]: JSON(),
    }


class IdMixin:
    id: Mapped[int] = mapped_column(primary_key=True)


class CreatedMixin:
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
