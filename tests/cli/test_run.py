"""`slamon run` on the embedded default: beat fires, the worker runs the tasks (a liveness tick,
probes of a real local target that then fails and opens an outage), rows land in SQLite, the
API answers, and Ctrl-C leaves no process behind."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
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
        assert any("--beat" in c for c in commands)  # the main worker (and its beat)
        assert sum(c.endswith("--queues=probes") for c in commands) == 2  # --probe-processes=2
        assert any(" api " in c for c in commands)
    finally:
        run.send_signal(signal.SIGINT)
        output = run.communicate(timeout=60)[0].decode()
        target.close()
    assert run.returncode == 0, output
    assert "slamon stopped" in output
    assert "Traceback" not in output
    assert [pid for pid in family if alive(pid)] == []


def probe_workers(pid: int) -> list[int]:
    return [p for p in descendants(pid) if "--queues=probes" in cmdline(p) and alive(p)]


def beats(pid: int) -> list[int]:
    """The main worker and its embedded beat (a forked process with the same command line)."""
    return [p for p in descendants(pid) if "--beat" in cmdline(p) and alive(p)]


def test_run_restarts_a_child_killed_with_sigkill_and_keeps_probing(
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
            [*slamon_command(), "run", f"--port={free_tcp_port}"],
            cwd=tmp_path,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    db = tmp_path / "slamon.db"
    probes = "SELECT count(*) FROM probe_results"
    try:
        assert wait_for(lambda: count(db, probes) >= 2, timeout=120)
        [first] = probe_workers(run.pid)
        os.kill(first, signal.SIGKILL)
        assert wait_for(lambda: "worker probes-1 (signal 9); restarting in 2s" in log.read_text())
        assert wait_for(lambda: [p for p in probe_workers(run.pid) if p != first], timeout=60)
        before = count(db, probes)
        assert wait_for(lambda: count(db, probes) >= before + 3, timeout=60)  # probing again

        main = min(beats(run.pid))  # the worker; its beat was forked from it later
        os.kill(main, signal.SIGKILL)
        assert wait_for(lambda: "worker main (signal 9); restarting in 2s" in log.read_text())
        # the orphaned beat is gone with it: one worker and one beat again, never two beats
        assert wait_for(lambda: len(beats(run.pid)) == 2 and main not in beats(run.pid), 60)
        before = count(db, probes)
        assert wait_for(lambda: count(db, probes) >= before + 3, timeout=60)  # dispatch again
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
    assert len(lines) == 2, output
