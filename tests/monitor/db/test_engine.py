"""The pragmas every SQLite connection gets (monitor.db.engine): WAL, foreign keys, NORMAL
sync and a bounded page cache, on each connection the pool opens, not only the first."""

from __future__ import annotations

from pathlib import Path

from sqlalchemy import text

from monitor.db.engine import READ_ONLY, SQLITE_CACHE_KIB, make_engine


def test_every_pooled_sqlite_connection_gets_the_pragmas(tmp_path: Path) -> None:
    engine = make_engine(f"sqlite:///{tmp_path / 'slamon.db'}")
    try:
        # three at once (read-only: writers would wait for each other): three connections
        connections = [engine.connect().execution_options(**READ_ONLY) for _ in range(3)]
        try:
            seen = {
                (
                    c.scalar(text("PRAGMA journal_mode")),
                    c.scalar(text("PRAGMA foreign_keys")),
                    c.scalar(text("PRAGMA synchronous")),
                    c.scalar(text("PRAGMA cache_size")),
                )
                for c in connections
            }
            assert len({id(c.connection.dbapi_connection) for c in connections}) == 3
        finally:
            for connection in connections:
                connection.close()
    finally:
        engine.dispose()
    assert seen == {("wal", 1, 1, -SQLITE_CACHE_KIB)}  # synchronous 1 is NORMAL
