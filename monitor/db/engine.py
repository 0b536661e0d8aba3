"""Engines and sessions. SQLite gets the pragmas that make it a safe embedded database."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from sqlalchemy import Engine, create_engine, event, text
from sqlalchemy.exc import ArgumentError, NoSuchModuleError, OperationalError, SQLAlchemyError
from sqlalchemy.orm import Session, sessionmaker

from monitor.db.sqlite_writer import LOCK_FILES, WriterLockedConnection
from monitor.errors import ConfigError, ServiceUnavailable


def make_engine(url: str, **kwargs: Any) -> Engine:
    """An engine for ``url``; SQLite runs in WAL mode with foreign keys and a busy timeout.

    Raises ``ConfigError`` for a URL SQLAlchemy cannot use, naming the URL's scheme only (the
    rest may hold a password)."""
    try:
        return _make_engine(url, **kwargs)
    except (ArgumentError, NoSuchModuleError, ValueError) as exc:
        scheme = url.split("://", 1)[0] if "://" in url else "?"
        raise ConfigError(
            [f"SLAMON_DATABASE_URL ({scheme}://***) is not a usable database URL: {_reason(exc)}"]
        ) from None


def _reason(exc: Exception) -> str:
    """The error's first line, without the URL that SQLAlchemy quotes back."""
    if isinstance(exc, ValueError) and not isinstance(exc, ArgumentError):
        return "its host or port cannot be read"
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    if "from string" in text:  # "Could not parse SQLAlchemy URL from string '…'"
        return text.split(" from string", 1)[0]
    return text if "://" not in text else type(exc).__name__


def _make_engine(url: str, **kwargs: Any) -> Engine:
    if url.startswith("sqlite"):
        # writers take turns through a lock file (monitor.db.sqlite_writer)
        factory = {"factory": WriterLockedConnection} if LOCK_FILES else {}
        kwargs["connect_args"] = {"timeout": 30, **factory, **kwargs.get("connect_args", {})}
        engine = create_engine(url, **kwargs)
        event.listen(engine, "connect", _sqlite_pragmas)
        event.listen(engine, "begin", _sqlite_begin)
        return engine
    kwargs.setdefault("pool_pre_ping", True)
    return create_engine(url, **kwargs)


# Each pooled connection keeps its own page cache (SQLite's default: 2 MB), and a busy worker
# holds up to 15 of them: on a database of weeks, about 30 MB of a process's memory. The pages
# a probe round reads (targets, states, the newest buckets) fit in far less, and a page that
# misses is read from the OS page cache, which holds the file anyway.
SQLITE_CACHE_KIB = 512
SQLITE_CACHE_PRAGMA = "PRAGMA cache_size=-512"  # negative: KiB, not pages


def _sqlite_pragmas(dbapi_connection: Any, _record: Any) -> None:
    # Let SQLAlchemy, not pysqlite, decide where transactions begin, so SAVEPOINTs and
    # transactional DDL work (the recipe in SQLAlchemy's SQLite dialect documentation).
    dbapi_connection.isolation_level = None
    cursor = dbapi_connection.cursor()
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.execute("PRAGMA synchronous=NORMAL")
    cursor.execute(SQLITE_CACHE_PRAGMA)
    cursor.close()


READ_ONLY = {"slamon_read_only": True}  # Session.connection(execution_options=READ_ONLY)


def _sqlite_begin(connection: Any) -> None:
    # IMMEDIATE takes the write lock up front, so concurrent writers wait (busy timeout)
    # instead of failing with "database is locked" when a read transaction tries to write.
    # A transaction marked read-only begins deferred: in WAL mode it never waits for a writer
    # (a probe round reading its targets queued behind every other shard's writes).
    # A writer on a ``WriterLockedConnection`` first takes the writers' lock file.
    if connection.get_execution_options().get("slamon_read_only"):
        connection.exec_driver_sql("BEGIN")
        return
    dbapi_connection = connection.connection.dbapi_connection
    if not isinstance(dbapi_connection, WriterLockedConnection):
        connection.exec_driver_sql("BEGIN IMMEDIATE")
        return
    try:
        dbapi_connection.take_writer_lock()
    except sqlite3.OperationalError as exc:  # as SQLAlchemy reports SQLite's own "locked"
        raise OperationalError("BEGIN IMMEDIATE", None, exc) from None
    try:
        connection.exec_driver_sql("BEGIN IMMEDIATE")
    except BaseException:
        dbapi_connection.let_go_of_writer_lock()
        raise


def make_sessionmaker(engine: Engine) -> sessionmaker[Session]:
    return sessionmaker(engine, expire_on_commit=False)


@contextmanager
def transaction(factory: sessionmaker[Session]) -> Iterator[Session]:
    """A session that commits when the block ends and rolls back on error (the boundary)."""
    with factory() as session, session.begin():
        yield session


@contextmanager
def reading(factory: sessionmaker[Session]) -> Iterator[Session]:
    """A session that only reads: on SQLite it begins deferred, so in WAL mode it neither takes
    nor waits for the database's one write lock (``_sqlite_begin``)."""
    with factory() as session:
        session.connection(execution_options=READ_ONLY)
        yield session


def check_database(engine: Engine) -> None:
    """Raise ``ServiceUnavailable`` with a readable reason when the database does not answer."""
    try:
        with engine.connect() as connection:
            connection.execute(text("SELECT 1"))
    except SQLAlchemyError as exc:
        reason = str(getattr(exc, "orig", exc)).strip().splitlines()[0]
        raise ServiceUnavailable(
            f"database {engine.url.render_as_string(hide_password=True)} unreachable: {reason}"
        ) from None
