"""`slamon run` on the embedded default: beat fires, the worker runs the tasks (a liveness tick,
probes of a real local target that then fails and opens an outage), rows land in SQLite, the
API answers, and Ctrl-C leaves no process behind."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import time
from datetime import UTC, datetime
from pathlib import Path

import httpx
import pytest

from tests.support import FeedServer, slamon_command, wait_for

pytestmark = pytest.mark.slow


def descendants(pid: int) -> set[int]:
    """Every live process below ``pid`` (read from /proc)."""
    children: dict[int, list[int]] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        children.setdefault(int(fields[1]), []).append(int(stat.parent.name))
    found, todo = set(), [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            found.add(child)
            todo.append(child)
    return found


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode().strip()
    except OSError:
        return ""


def count(db_path: Path, sql: str) -> int:
    if not db_path.exists():
        return 0
    with sqlite3.connect(db_path) as db:
        try:
            return int(db.execute(sql).fetchone()[0])
        except sqlite3.OperationalError:
            return 0


def test_run_ticks_into_sqlite_serves_healthz_and_stops_cleanly_on_ctrl_c(
    tmp_path: Path, free_tcp_port: int
) -> None:
    target = FeedServer()
    target.routes["/healthz"] = (200, b"ok")
    (tmp_path / "slamon.yaml").write_text(
        "schedule: {tick: 1s}\nprobes: {retry_interval: 0.2}\n"
        f"targets: [{{name: gpu-0, kind: http, url: '{target.url}/healthz', interval: 1}}]\n"
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("SLAMON_")}
    run = subprocess.Popen(
        [*slamon_command(), "run", f"--port={free_tcp_port}", "--probe-processes=2"],
        cwd=tmp_path,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )
    db = tmp_path / "slamon.db"
    try:
        assert wait_for(lambda: count(db, "SELECT count(*) FROM monitor_ticks") >= 2, timeout=120)
        assert wait_for(lambda: count(db, "SELECT count(*) FROM probe_results WHERE ok") >= 2)
        target.routes["/healthz"] = (503, b"")
        assert wait_for(lambda: count(db, "SELECT count(*) FROM outages WHERE end IS NULL"))

        def health() -> httpx.Response | None:
            try:
                return httpx.get(f"http://127.0.0.1:{free_tcp_port}/healthz", timeout=2)
            except httpx.TransportError:
                return None

        response = wait_for(health, timeout=90)
        assert isinstance(response, httpx.Response)
        assert response.status_code == 200
        assert response.json()["database"] == {"ok": True}
        family = descendants(run.pid)
        commands = [cmdline(pid) for pid in family]
        # one main process (beat and the API in its threads) and the two probe processes asked
        # for; no forked beat, no API process of its own
        [main] = [c for c in commands if "--beat" in c]
        assert f"--api=127.0.0.1:{free_tcp_port}" in main
        assert "probes" not in main.split("--queues=")[1].split()[0].split(",")
        assert sum(c.endswith("--queues=probes") for c in commands) == 2  # --probe-processes=2
        assert len(commands) == 3
        # the supervisor itself never loads the application (its preflight ran in a child)
        assert application_libraries(run.pid) == []
    finally:
        run.send_signal(signal.SIGINT)
        output = run.communicate(timeout=60)[0].decode()
        target.close()
    assert run.returncode == 0, output
    assert "slamon stopped" in output
    assert "Traceback" not in output
    assert [pid for pid in family if alive(pid)] == []


def test_run_with_no_flags_is_one_process_beside_the_supervisor_at_a_light_load(
    tmp_path: Path, free_tcp_port: int
) -> None:
    """Beat, the API, the light queues and the probes (one core keeps a few targets) share
    one process; nothing else is started."""
    target = FeedServer()
    target.routes["/healthz"] = (200, b"ok")
    (tmp_path / "slamon.yaml").write_text(
        f"targets: [{{name: gpu-0, kind: http, url: '{target.url}/healthz', interval: 1}}]\n"
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("SLAMON_")}
    run = subprocess.Popen(
        [*slamon_command(), "run", f"--port={free_tcp_port}"],
        cwd=tmp_path,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )
    try:
        assert wait_for(lambda: count(tmp_path / "slamon.db", "SELECT count(*) FROM probe_results"))
        assert wait_for(lambda: api_answers(free_tcp_port), timeout=60)
        [main] = [cmdline(pid) for pid in descendants(run.pid)]
        # the same process, now the supervisor without the command line's imports
        assert cmdline(run.pid).endswith("-m monitor.supervision"), cmdline(run.pid)
        queues = main.split("--queues=")[1].split()[0].split(",")
        assert sorted(queues) == ["default", "deliveries", "feeds", "probes"]
        assert "--beat" in main
        assert f"--api=127.0.0.1:{free_tcp_port}" in main
    finally:
        run.send_signal(signal.SIGINT)
        output = run.communicate(timeout=60)[0].decode()
        target.close()
    assert run.returncode == 0, output
    assert "Traceback" not in output


def application_libraries(pid: int) -> list[str]:
    """The compiled libraries of the application's stack mapped into process ``pid``
    (SQLAlchemy, pydantic, psycopg, uvloop, httptools): a process that imported them has them."""
    marks = ("sqlalchemy", "pydantic_core", "psycopg", "uvloop", "httptools", "_yaml")
    maps = Path(f"/proc/{pid}/maps").read_text()
    return sorted({m for m in marks if m in maps})


def probe_workers(pid: int) -> list[int]:
    return [p for p in descendants(pid) if "--queues=probes" in cmdline(p) and alive(p)]


def beats(pid: int) -> list[int]:
    """The main worker: its beat is a thread, never a forked process of the same command."""
    return [p for p in descendants(pid) if "--beat" in cmdline(p) and alive(p)]


def first_probe_after(db_path: Path, moment: float) -> float | None:
    """Unix seconds of the first probe stored at or after ``moment``, None before there is one."""
    if not db_path.exists():
        return None
    with sqlite3.connect(db_path) as db:
        try:
            row = db.execute(
                "SELECT min(at) FROM probe_results WHERE at >= ?",
                (datetime.fromtimestamp(moment, UTC).strftime("%Y-%m-%d %H:%M:%S.%f"),),
            ).fetchone()
        except sqlite3.OperationalError:
            return None
    if row[0] is None:
        return None
    return datetime.fromisoformat(row[0]).replace(tzinfo=UTC).timestamp()


def children_named(pid: int, marker: str) -> list[int]:
    return [p for p in descendants(pid) if marker in cmdline(p) and alive(p)]


# Each kind of child `slamon run` starts (with one probe process asked for): how to find it,
# and its name on the console. The main one runs beat, the API and the light queues.
KINDS = [
    ("--queues=probes", "worker probes-1"),
    ("--beat", "worker main"),
]


def test_run_restarts_each_kind_of_child_killed_with_sigkill_and_probes_within_10_s(
    tmp_path: Path, free_tcp_port: int
) -> None:
    target = FeedServer()
    target.routes["/healthz"] = (200, b"ok")
    (tmp_path / "slamon.yaml").write_text(
        f"targets: [{{name: gpu-0, kind: http, url: '{target.url}/healthz', interval: 1}}]\n"
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("SLAMON_")}
    log = tmp_path / "console.txt"
    with log.open("wb") as out:
        run = subprocess.Popen(
            [*slamon_command(), "run", f"--port={free_tcp_port}", "--probe-processes=1"],
            cwd=tmp_path,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    db = tmp_path / "slamon.db"
    probes = "SELECT count(*) FROM probe_results"
    gaps: dict[str, float] = {}
    try:
        assert wait_for(lambda: count(db, probes) >= 2, timeout=120)
        for marker, name in KINDS:
            victim = min(children_named(run.pid, marker))
            killed_at = time.time()
            os.kill(victim, signal.SIGKILL)
            assert wait_for(lambda n=name: f"{n} (signal 9); restarting in 2s" in log.read_text())
            assert wait_for(
                lambda m=marker, v=victim: [p for p in children_named(run.pid, m) if p != v], 60
            )
            resumed = wait_for(lambda k=killed_at: first_probe_after(db, k), timeout=60)
            assert resumed is not None, name
            gaps[name] = resumed - killed_at
            assert wait_for(lambda: api_answers(free_tcp_port), timeout=60), name
        # the killed main worker's beat went with it (a thread): one main worker again
        assert wait_for(lambda: len(beats(run.pid)) == 1, 60)
        assert run.poll() is None
        family = descendants(run.pid)
    finally:
        run.send_signal(signal.SIGINT)
        run.wait(timeout=60)
        target.close()
    output = log.read_text()
    assert run.returncode == 0, output
    assert "slamon stopped" in output
    assert "Traceback" not in output
    assert [pid for pid in family if alive(pid)] == []
    lines = [line for line in output.splitlines() if "process exited" in line]
    assert len(lines) == len(KINDS), output  # one line per restart
    # probing resumes within one restart delay plus a worker's start (goal: 10 s)
    assert max(gaps.values()) <= 10, gaps


def api_answers(port: int) -> bool:
    try:
        return httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=2).status_code == 200
    except httpx.TransportError:
        return False
