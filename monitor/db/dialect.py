"""Insert-or-ignore, upsert and bulk update for PostgreSQL and SQLite: the one place the
dialects differ."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import (
    ColumnElement,
    Insert,
    Table,
    any_,
    bindparam,
    cast,
    func,
    literal_column,
    or_,
    select,
    type_coerce,
)
from sqlalchemy import update as sa_update
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.dialects.postgresql import ARRAY
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
    *,
    changed_only: bool = False,
) -> None:
    """``upsert`` for many rows as one executemany of one compiled statement (a statement
    with hundreds of VALUES costs more to compile than to run). Rows must not collide with
    each other on ``conflict``. ``changed_only``: a stored row whose ``update`` columns already
    hold the values is left alone (on PostgreSQL an update writes a new row version and new
    index entries even when nothing changed: dead rows and index bloat for nothing)."""
    if not rows:
        return
    table = model.__table__
    assert isinstance(table, Table)
    stmt = _insert(session, model)
    changed = or_(*(table.c[col].is_distinct_from(stmt.excluded[col]) for col in update))
    stmt = stmt.on_conflict_do_update(
        index_elements=list(conflict),
        set_={col: stmt.excluded[col] for col in update},
        where=changed if changed_only else None,
    )
    session.connection().execute(stmt, list(rows))


KEY_PREFIX = "k_"


def update_many(session: Session, table: Table, rows: Sequence[dict[str, Any]]) -> None:
    """Update many rows of ``table`` by key: in each row, ``k_<column>`` values pick the row and
    the other values are set (every row names the same columns).

    On PostgreSQL one ``UPDATE … FROM unnest(arrays)``: a handful of array parameters and one
    plan, where an executemany binds and runs a statement per row (on a round of thousands of
    targets, most of the cost of writing its states). Elsewhere one executemany.
    """
    if not rows:
        return
    names = list(rows[0])
    keys = [n.removeprefix(KEY_PREFIX) for n in names if n.startswith(KEY_PREFIX)]
    values = [n for n in names if not n.startswith(KEY_PREFIX)]
    if session.get_bind().dialect.name != "postgresql":
        where = [table.c[k] == bindparam(KEY_PREFIX + k) for k in keys]
        session.execute(sa_update(table).where(*where), list(rows))
        return
    columns = [*keys, *values]
    sources = [KEY_PREFIX + k for k in keys] + values
    arrays = [
        cast(
            bindparam(f"a{i}", [row[source] for row in rows], type_=ARRAY(table.c[c].type)),
            ARRAY(table.c[c].type),
        )
        for i, (c, source) in enumerate(zip(columns, sources, strict=True))
    ]
    given = func.unnest(*arrays).table_valued(*columns).render_derived(name="v")
    statement = (
        sa_update(table)
        .values({c: given.c[c] for c in values})
        .where(*(table.c[k] == given.c[k] for k in keys))
    )
    session.execute(statement)


def among(session: Session, column: Any, values: Iterable[Any]) -> Any:
    """``column IN values``; on PostgreSQL ``column = ANY(array)``: one parameter and the same
    SQL text whatever the count (psycopg re-parses an IN list of hundreds of parameters each
    time, a tenth of a probe round's CPU)."""
    found = list(values)
    if session.get_bind().dialect.name == "postgresql":
        array = ARRAY(column.type)
        return column == any_(cast(bindparam(None, found, type_=array), array))
    return column.in_(found)


def truncated(session: Session, column: Any, unit: str) -> Any:
    """``column`` (a UTC timestamp) down to its ``unit`` ("minute" or "hour"), still a
    ``UTCDateTime``. SQLite keeps UTC text ("YYYY-MM-DD HH:MM:SS.ffffff"): a prefix of it."""
    from monitor.db.types import UTCDateTime

    # constants as SQL text, not parameters: the expression then reads the same in the select
    # list and in GROUP BY, which PostgreSQL requires
    if session.get_bind().dialect.name == "postgresql":
        at_utc = func.timezone(literal_column("'UTC'"), column)  # the session's zone is moot
        return type_coerce(func.date_trunc(literal_column(f"'{unit}'"), at_utc), UTCDateTime())
    kept, zeros = {"minute": ("16", "':00'"), "hour": ("13", "':00:00'")}[unit]
    prefix = func.substr(column, literal_column("1"), literal_column(kept))
    return type_coerce(prefix.concat(literal_column(zeros)), UTCDateTime())


def collected(session: Session, column: Any, where: Any) -> Any:
    """Every non-null ``column`` value of a group where ``where`` holds, read back by
    ``floats_of``: so the database groups the rows, and Python sees one row per group (an
    array on PostgreSQL, comma-separated text on SQLite, which has no arrays)."""
    if session.get_bind().dialect.name == "postgresql":
        return func.array_agg(column).filter(where)
    return func.group_concat(column).filter(where)


def floats_of(value: str | list[float | None] | None) -> list[float]:
    """What ``collected`` read, as floats (SQLite's text keeps 15 significant digits)."""
    if not value:
        return []
    if isinstance(value, str):
        return [float(part) for part in value.split(",")]
    return [v for v in value if v is not None]


def json_list_has(session: Session, column: Any, value: str) -> ColumnElement[bool]:
    """Whether the JSON list in ``column`` holds the string ``value`` (either dialect)."""
    if session.get_bind().dialect.name == "postgresql":
        elements = func.json_array_elements_text(column).table_valued("value")
    else:
        elements = func.json_each(column).table_valued("value")
    return select(1).select_from(elements).where(elements.c.value == value).exists()


def database_now(session: Session) -> datetime:
    """The database's clock, in aware UTC: what leases are timed by, so that schedulers on
    machines whose clocks disagree still agree on when a lease ends. SQLite has no server:
    every process that opens the file runs on this machine, with this clock."""
    if session.get_bind().dialect.name == "postgresql":
        at = session.scalar(select(func.now()))
        assert isinstance(at, datetime)
        return at.astimezone(UTC)
    return datetime.now(UTC)
