"""What both sides of the side-by-side benchmark are measured with, so they are measured the same
way: CPU and memory of groups of processes read from /proc (no psutil), and probe schedules.

A group is a function returning the pids that belong to it right now (a process tree, the
postgres backends of one database…). A background thread samples every ``period`` seconds:
per-pid CPU ticks (utime + stime) and the group's summed VmRSS. CPU of a group over the window
is the sum over pids of (last ticks seen − ticks at the window start, or 0 for a pid born inside
the window); a pid that exits loses at most its last ``period`` of CPU.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

CLOCK_TICKS = os.sysconf("SC_CLK_TCK")
PROC = Path("/proc")

PidSelector = Callable[[], Iterable[int]]


def _stat_fields(pid: int) -> list[str] | None:
    try:
        text = (PROC / str(pid) / "stat").read_text()
    except OSError:
        return None
    return text[text.rindex(")") + 2 :].split()  # fields from `state` on (the comm may hold spaces)


def cpu_ticks(pid: int) -> int | None:
    """Utime + stime of one process, in clock ticks; None when it is gone."""
    fields = _stat_fields(pid)
    return None if fields is None else int(fields[11]) + int(fields[12])


def rss_kib(pid: int) -> int:
    try:
        for line in (PROC / str(pid) / "status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    except OSError:
        pass
    return 0


def all_pids() -> list[int]:
    return [int(p.name) for p in PROC.iterdir() if p.name.isdigit()]


def parents() -> dict[int, int]:
    """Pid -> parent pid for every live process."""
    table = {}
    for pid in all_pids():
        fields = _stat_fields(pid)
        if fields is not None:
            table[pid] = int(fields[1])
    return table


def command_of(pid: int) -> str:
    """A short name for a process: slamon's role in it (its subcommand and queues), else its
    program; the same name for a process restarted under a new pid."""
    try:
        argv = (PROC / str(pid) / "cmdline").read_bytes().decode(errors="replace").split("\0")
    except OSError:
        return str(pid)
    words = [a for a in argv if a]
    if "monitor.cli" in words or any(w.endswith("/slamon") for w in words):
        role = [w for w in words if w in {"run", "worker", "api", "beat", "preflight"}]
        queues = [w.removeprefix("--queues=") for w in words if w.startswith("--queues=")]
        return " ".join(["slamon", *role[:1], *queues])
    return Path(words[0]).name if words else str(pid)


def tree(root: int) -> PidSelector:
    """The root and all its descendants (children spawned in new sessions included)."""

    def select() -> list[int]:
        table = parents()
        found, frontier = {root}, [root]
        while frontier:
            parent = frontier.pop()
            children = [pid for pid, ppid in table.items() if ppid == parent and pid not in found]
            found.update(children)
            frontier.extend(children)
        return [pid for pid in found if pid in table]

    return select


def fixed(*pids: int) -> PidSelector:
    return lambda: list(pids)


def cmdline_matches(*needles: str) -> PidSelector:
    """Processes whose command line holds every needle (e.g. postgres backends of one DB)."""

    def select() -> list[int]:
        found = []
        for pid in all_pids():
            try:
                cmd = (PROC / str(pid) / "cmdline").read_bytes().replace(b"\0", b" ").decode()
            except OSError:
                continue
            if all(n in cmd for n in needles):
                found.append(pid)
        return found

    return select


def named(comm: str) -> PidSelector:
    """Processes whose short name (/proc/<pid>/comm) is ``comm``, e.g. redis-server."""

    def select() -> list[int]:
        found = []
        for pid in all_pids():
            try:
                if (PROC / str(pid) / "comm").read_text().strip() == comm:
                    found.append(pid)
            except OSError:
                continue
        return found

    return select


@dataclass
class GroupReading:
    cpu_s: float
    peak_rss_mib: float
    pids_seen: int
    cpu_s_by_process: dict[str, float] = field(default_factory=dict)  # by command line
    peak_rss_mib_by_process: dict[str, float] = field(default_factory=dict)


@dataclass
class Meter:
    """Sample groups of processes from ``start()`` to ``stop()``; readings per group."""

    groups: dict[str, PidSelector]
    period: float = 0.5
    _base: dict[str, dict[int, int]] = field(default_factory=dict)
    _last: dict[str, dict[int, int]] = field(default_factory=dict)
    _peak: dict[str, int] = field(default_factory=dict)
    _peak_total: int = 0
    _commands: dict[int, str] = field(default_factory=dict)
    _peak_pid: dict[int, int] = field(default_factory=dict)
    _stop: threading.Event = field(default_factory=threading.Event)
    _thread: threading.Thread | None = None

    def start(self) -> None:
        for name, select in self.groups.items():
            ticks = {pid: t for pid in select() if (t := cpu_ticks(pid)) is not None}
            self._base[name], self._last[name], self._peak[name] = ticks, dict(ticks), 0
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def stop(self) -> dict[str, GroupReading]:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
        self._sample()
        return {name: self._reading(name) for name in self.groups}

    @property
    def peak_total_mib(self) -> float:
        """Peak of the sum over all groups at one sample."""
        return self._peak_total / 1024

    def _reading(self, name: str) -> GroupReading:
        base, last = self._base[name], self._last[name]
        ticks = sum(t - base.get(pid, 0) for pid, t in last.items())
        by_process: dict[str, float] = {}
        rss_by_process: dict[str, float] = {}
        for pid, t in last.items():
            command = self._commands.get(pid, str(pid))
            by_process[command] = by_process.get(command, 0.0) + (t - base.get(pid, 0))
            rss = self._peak_pid.get(pid, 0) / 1024
            rss_by_process[command] = max(rss_by_process.get(command, 0.0), rss)
        return GroupReading(
            ticks / CLOCK_TICKS,
            self._peak[name] / 1024,
            len(last),
            {k: round(v / CLOCK_TICKS, 2) for k, v in by_process.items()},
            {k: round(v, 1) for k, v in rss_by_process.items()},
        )

    def _run(self) -> None:
        while not self._stop.wait(self.period):
            self._sample()

    def _sample(self) -> None:
        total = 0
        for name, select in self.groups.items():
            rss = 0
            for pid in select():
                ticks = cpu_ticks(pid)
                if ticks is None:
                    continue
                self._last[name][pid] = ticks
                if pid not in self._commands:
                    self._commands[pid] = command_of(pid)
                own = rss_kib(pid)
                self._peak_pid[pid] = max(self._peak_pid.get(pid, 0), own)
                rss += own
            self._peak[name] = max(self._peak[name], rss)
            total += rss
        self._peak_total = max(self._peak_total, total)


def wait_for(check: Callable[[], bool], timeout: float, what: str, step: float = 0.25) -> None:
    """Poll ``check`` until it is true; TimeoutError naming ``what`` otherwise."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            if check():
                return
        except OSError:
            pass
        time.sleep(step)
    raise TimeoutError(f"{what} not ready within {timeout:g} s")


def count_window(
    times: dict[Any, list[float]],
    start: float,
    end: float,
    interval_s: float,
) -> tuple[int, int]:
    """(probes inside [start, end), late ones: gap from the previous probe > 1.5 × interval).
    Both sides count the same way, from the probe times each one stored."""
    executed = late = 0
    for stamps in times.values():
        previous = None
        for at in sorted(stamps):
            if start <= at < end:
                executed += 1
                if previous is not None and at - previous > 1.5 * interval_s:
                    late += 1
            previous = at
    return executed, late


def per_probe(total: float, probes: int, digits: int) -> float | None:
    """``total`` per probe; None when nothing was probed (a collapse, not a division by 1)."""
    return round(total / probes, digits) if probes else None
