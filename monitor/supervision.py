"""`slamon run`'s supervisor: its children started in their own sessions, a dead one restarted
with backoff (the service stops when one cannot start at all), all stopped in order on SIGINT or
SIGTERM.

It lives as long as the service, so it holds as little as it can: `slamon run` checks and
sizes the service, then replaces itself (``exec``, the same process id for a service manager)
with ``python -m monitor.supervision``, which imports a few standard modules only (12 MiB of
RSS against the command line's 17.6 MiB). What to run arrives in the ``SLAMON_SUPERVISION``
environment variable (``supervise_in_place`` writes it; the children do not inherit it). The
event words (``monitor.events``, and with them dataclasses and logging: 4 MiB) are imported at
the first line about a dead child (``_events``), which a healthy service never prints.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Sequence
from types import ModuleType
from typing import Any, NamedTuple, NoReturn

STOP_GRACE_S = 20.0
# glibc gives each thread that allocates its own malloc arena, up to 8 per core, and a
# threads-pool worker's arenas each keep freed memory: two arenas hold a worker's RSS flat at
# the same speed (set MALLOC_ARENA_MAX yourself to choose otherwise)
CHILD_ENV = {"MALLOC_ARENA_MAX": os.environ.get("MALLOC_ARENA_MAX", "2")}
PROCESS_NAME = "SLAMON_PROCESS_NAME"  # what `slamon run` calls a child (workers/console.py)
SPEC = "SLAMON_SUPERVISION"  # what the supervisor runs, as JSON (``supervise_in_place``)


class RestartPolicy(NamedTuple):
    """How `slamon run` restarts a child that died.

    Started again after ``first_s``, doubled for each death in a row that came less than
    ``stable_s`` after its start, up to ``max_s`` (a crash loop must not print a line a second).
    A child that dies less than ``immediate_s`` after its start ``give_up_after`` times in a row
    cannot start at all (a bad config, say): the service stops and says which child.
    """

    first_s: float = 2.0
    max_s: float = 30.0
    stable_s: float = 60.0
    immediate_s: float = 10.0
    give_up_after: int = 5

    def delay(self, quick_exits: int) -> float:
        return min(self.max_s, self.first_s * 2.0 ** max(0, quick_exits - 1))


RESTART = RestartPolicy()


class Child:
    """One process `slamon run` keeps running: its name on the console and its command."""

    __slots__ = (
        "argv",
        "immediate_exits",
        "name",
        "policy",
        "process",
        "quick_exits",
        "restart_at",
        "started_at",
    )

    def __init__(self, name: str, argv: list[str], policy: RestartPolicy = RESTART) -> None:
        self.name, self.argv, self.policy = name, argv, policy
        self.process: subprocess.Popen[bytes] | None = None
        self.started_at = 0.0
        self.quick_exits = 0  # deaths in a row, each less than stable_s after its start
        self.immediate_exits = 0  # deaths in a row, each less than immediate_s after its start
        self.restart_at: float | None = None  # set while it is dead, waiting to start again

    def start(self) -> None:
        self.process = _spawn(self.argv, self.name)
        self.started_at, self.restart_at = time.monotonic(), None

    def running(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def tend(self, now: float) -> str | None:
        """Notice a death (clear its leftovers, schedule the restart) or restart when due;
        why the service must stop when this child cannot start at all, else None."""
        if self.running() or self.process is None:
            return None
        if self.restart_at is None:
            _reap_group(self.process)
            lived = now - self.started_at
            self.quick_exits = self.quick_exits + 1 if lived < self.policy.stable_s else 1
            at_once = lived < self.policy.immediate_s
            self.immediate_exits = self.immediate_exits + 1 if at_once else 0
            emitting, words = _events()
            status = words.exit_status(self.process.returncode)
            if self.immediate_exits >= self.policy.give_up_after:
                return (
                    f"{self.name} exited within {self.policy.immediate_s:g} s of every start, "
                    f"{self.immediate_exits} times in a row (last: {status}); stopping slamon. "
                    "Its own output above says why (a bad setting, say)."
                )
            delay = self.policy.delay(self.quick_exits)
            self.restart_at = now + delay
            facts = words.process_exited_text(self.name, self.process.returncode, delay)
            emitting.emit(words.PROCESS_EXITED, facts)
        elif now >= self.restart_at:
            self.start()
        return None


_CONSOLE: dict[str, str | None] = {"level": None}  # main's --log-level, until the console is set up


def _events() -> tuple[ModuleType, ModuleType]:
    """``monitor.events``' emitters and words, with the console set up at the first call."""
    from monitor.events import emitting, words
    from monitor.events.console import configure_console

    level = _CONSOLE.pop("level", None)
    if level is not None:
        configure_console(level)
    return emitting, words


def _spawn(argv: list[str], name: str = "") -> subprocess.Popen[bytes]:
    """A child in its own session (Ctrl-C reaches only us; we stop children in order) that
    dies with us even if we are killed. ``name`` tells its console lines from its siblings'."""
    env = {k: v for k, v in os.environ.items() if k != SPEC} | CHILD_ENV
    if name:
        env[PROCESS_NAME] = name.removeprefix("worker ")
    return subprocess.Popen(  # noqa: S603
        argv, start_new_session=True, preexec_fn=_die_with_parent, env=env
    )


def _reap_group(process: subprocess.Popen[bytes]) -> None:
    """Kill what a dead child left in its process group: the embedded beat of a worker killed
    with SIGKILL would otherwise live on and run beside its replacement's."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signal.SIGKILL)


def _die_with_parent() -> None:
    if sys.platform.startswith("linux"):
        import ctypes

        pr_set_pdeathsig = 1
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(pr_set_pdeathsig, signal.SIGTERM)


def supervise(children: list[Child]) -> int:
    """Keep every child running (a dead one is restarted) until SIGINT or SIGTERM arrives, or
    until a child cannot start at all; then stop them all. Our exit code: 0, or 1 for the
    latter."""
    stopping = {"signal": 0}

    def on_signal(signum: int, _frame: Any) -> None:
        stopping["signal"] = signum

    signal.signal(signal.SIGINT, on_signal)
    signal.signal(signal.SIGTERM, on_signal)
    failure = None
    while not stopping["signal"] and failure is None:
        now = time.monotonic()
        for child in children:
            failure = failure or child.tend(now)
        time.sleep(0.2)
    _stop([c.process for c in children if c.process is not None])
    if failure:
        print(f"slamon: {failure}", file=sys.stderr, flush=True)
        return 1
    print("slamon stopped", file=sys.stderr, flush=True)
    return 0


def _stop(children: list[subprocess.Popen[bytes]]) -> None:
    for child in children:
        if child.poll() is None:
            os.killpg(child.pid, signal.SIGTERM)
    deadline = time.monotonic() + STOP_GRACE_S
    for child in children:
        try:
            child.wait(timeout=max(0.1, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            os.killpg(child.pid, signal.SIGKILL)
            child.wait()


def supervise_in_place(
    children: Sequence[tuple[str, list[str]]], log_level: str, banner: str
) -> NoReturn:
    """Become the supervisor of ``children`` (name, argv): this process is replaced by
    ``python -m monitor.supervision``, which starts them, prints ``banner`` and supervises."""
    spec = {"children": [list(child) for child in children], "log_level": log_level}
    os.environ[SPEC] = json.dumps({**spec, "banner": banner})
    sys.stdout.flush()
    sys.stderr.flush()
    os.execv(sys.executable, [sys.executable, "-m", "monitor.supervision"])  # noqa: S606


def main() -> None:
    """The supervisor process: ``SLAMON_SUPERVISION`` names the children; exits with
    ``supervise``'s code."""
    spec = json.loads(os.environ[SPEC])
    _CONSOLE["level"] = spec["log_level"]
    children = [Child(name, list(argv)) for name, argv in spec["children"]]
    for child in children:
        child.start()
    print(spec["banner"], file=sys.stderr, flush=True)
    sys.exit(supervise(children))


if __name__ == "__main__":
    main()
