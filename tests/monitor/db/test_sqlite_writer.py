"""SQLite writers take turns through the lock file beside the database (monitor.db.sqlite_writer):
held from BEGIN to COMMIT or ROLLBACK, never by a reader, and bounded like SQLite's own wait."""

from __future__ import annotations

import fcntl
import os
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import Engine, select, text, update
from sqlalchemy.exc import OperationalError

from monitor.db.engine import make_engine, make_sessionmaker, reading
from monitor.db.migrate import upgrade
from monitor.db.models import TaskStat


@pytest.fixture
def engine(tmp_path: Path) -> Iterator[Engine]:
    engine = make_engine(f"sqlite:///{tmp_path / 'slamon.db'}", connect_args={"timeout": 2})
    upgrade(engine)
    yield engine
    engine.dispose()


def lock_is_free(database: Path) -> bool:
    """Whether another process could take the writers' lock right now."""
    fd = os.open(f"{database}-writer", os.O_RDWR | os.O_CREAT)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    finally:
        os.close(fd)  # closing lets go of what it took
    return True


def test_a_write_transaction_holds_the_lock_until_commit_or_rollback(
    engine: Engine, tmp_path: Path
) -> None:
    database = tmp_path / "slamon.db"
    sessions = make_sessionmaker(engine)
    with sessions() as session, session.begin():
        session.add(TaskStat(task="t", runs=1))
        session.flush()  # the transaction begins with its first statement
        assert not lock_is_free(database)
    assert lock_is_free(database)
    held_while_writing: list[bool] = []

    def write_then_fail() -> None:
        with sessions() as session, session.begin():
            session.execute(update(TaskStat).values(runs=2))
            held_while_writing.append(not lock_is_free(database))
            raise RuntimeError("roll back")

    with pytest.raises(RuntimeError):
        write_then_fail()
    assert held_while_writing == [True]
    assert lock_is_free(database)
    with reading(sessions) as session:
        assert session.scalar(select(TaskStat.runs)) == 1  # rolled back
        assert lock_is_free(database)  # a reader takes nothing


def test_a_writer_waits_for_another_process_and_then_writes(engine: Engine, tmp_path: Path) -> None:
    database = tmp_path / "slamon.db"
    sessions = make_sessionmaker(engine)
    with sessions() as session, session.begin():
        session.add(TaskStat(task="t", runs=0))
    other_process = os.open(f"{database}-writer", os.O_RDWR)
    fcntl.flock(other_process, fcntl.LOCK_EX)  # as another process's writer would
    wrote = threading.Event()

    def write() -> None:
        with sessions() as session, session.begin():
            session.execute(update(TaskStat).values(runs=TaskStat.runs + 1))
        wrote.set()

    writer = threading.Thread(target=write)
    writer.start()
    assert not wrote.wait(0.3)  # still waiting for the other process
    os.close(other_process)
    writer.join(5)
    assert wrote.is_set()
    with reading(sessions) as session:
        assert session.scalar(select(TaskStat.runs)) == 1


def test_threads_writing_at_once_lose_no_write(engine: Engine) -> None:
    sessions = make_sessionmaker(engine)
    with sessions() as session, session.begin():
        session.add(TaskStat(task="t", runs=0))

    def add(times: int) -> None:
        for _ in range(times):
            with sessions() as session, session.begin():
                runs = session.scalar(select(TaskStat.runs))  # read, then write: no lost update
                session.execute(update(TaskStat).values(runs=(runs or 0) + 1))

    threads = [threading.Thread(target=add, args=(25,)) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    with reading(sessions) as session:
        assert session.scalar(select(TaskStat.runs)) == 100


def test_a_writer_held_off_past_its_timeout_gets_database_is_locked(tmp_path: Path) -> None:
    engine = make_engine(f"sqlite:///{tmp_path / 'slamon.db'}", connect_args={"timeout": 0.2})
    upgrade(engine)
    held = os.open(f"{tmp_path / 'slamon.db'}-writer", os.O_RDWR)
    fcntl.flock(held, fcntl.LOCK_EX)
    try:
        with pytest.raises(OperationalError, match="database is locked"), engine.begin() as db:
            db.execute(text("UPDATE task_stats SET runs = runs + 1"))
    finally:
        os.close(held)
        engine.dispose()
    assert lock_is_free(tmp_path / "slamon.db")
