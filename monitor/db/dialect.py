"""Insert-or-ignore and upsert for PostgreSQL and SQLite: the one place the dialects differ."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sqlalchemy import Insert, Table
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.orm import DeclarativeBase, Session


def _insert(session: Session, model: type[DeclarativeBase]) -> Any:
    name = session.get_bind().dialect.name
    if name == "postgresql":
        return postgresql.insert(model)
    if name == "sqlite":
        return sqlite.insert(model)
    raise NotImplementedError(f"slamon supports PostgreSQL and SQLite, not {name}")


def insert_ignoring_conflicts(
    session: Session,
    model: type[DeclarativeBase],
    rows: Sequence[dict[str, Any]],
    conflict: Sequence[str],
) -> int:
    """Insert rows, skipping those that collide on ``conflict``; returns how many were new."""
    if not rows:
        return 0
    stmt: Insert = _insert(session, model).values(list(rows))
    stmt = stmt.on_conflict_do_nothing(index_elements=list(conflict))  # type: ignore[attr-defined]
    # rowcount is -1 for batched inserts on some drivers; RETURNING counts exactly everywhere.
    key = model.__table__.c[conflict[0]]
    return len(session.execute(stmt.returning(key)).all())


def upsert(
    session: Session,
    model: type[DeclarativeBase],
    row: dict[str, Any],
    conflict: Sequence[str],
    update: Sequence[str],
) -> None:
    """Insert ``row`` or, when it collides on ``conflict``, update the ``update`` columns."""
    upsert_many(session, model, [row], conflict, update)


def upsert_many(
    session: Session,
    model: type[DeclarativeBase],
    rows: Sequence[dict[str, Any]],
    conflict: Sequence[str],
    update: Sequence[str],
) -> None:
    """``upsert`` for many rows as one executemany of one compiled statement (a statement
    with hundreds of VALUES costs more to compile than to run). Rows must not collide with
    each other on ``conflict``."""
    if not rows:
        return
    table = model.__table__
    stmt = _insert(session, model)
    stmt = stmt.on_conflict_do_update(
        index_elements=list(conflict), set_={col: stmt.excluded[col] for col in update}
    )
    assert isinstance(table, Table)
    session.connection().execute(stmt, list(rows))
