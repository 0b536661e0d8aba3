"""`slamon run`'s supervisor over real child processes: a child that dies is restarted with
backoff; one that dies at once on every start stops the service, naming it; the others are
stopped with it."""

from __future__ import annotations

import logging
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from monitor.supervision import Child, RestartPolicy, supervise

FAST = RestartPolicy(first_s=0.2, max_s=0.8, stable_s=5.0, immediate_s=2.0, give_up_after=3)


def python(code: str) -> list[str]:
    return [sys.executable, "-c", code]


def test_the_supervisor_imports_a_few_standard_modules_only() -> None:
    """It lives as long as the service: every import it keeps is memory the service pays for
    all along (the command line's, click's, are gone once `slamon run` has exec'd it, and the
    event words wait for the first child that dies)."""
    listing = (
        "import sys, monitor.supervision; std = sys.stdlib_module_names; "
        "print('\\n'.join(m for m in sys.modules if m.split('.')[0] not in std))"
    )
    loaded = subprocess.run(python(listing), capture_output=True, text=True, check=True).stdout
    assert {m for m in loaded.split() if not m.startswith("_")} == {
        "monitor",
        "monitor.supervision",
    }
    heavy = "import sys, monitor.supervision; print('dataclasses' in sys.modules)"
    assert subprocess.run(python(heavy), capture_output=True, text=True).stdout.strip() == "False"


def test_a_child_that_dies_at_once_on_every_start_stops_the_service_naming_it(
    capsys: pytest.CaptureFixture[str], caplog: pytest.LogCaptureFixture, tmp_path: Path
) -> None:
    caplog.set_level(logging.INFO)
    pid_file = tmp_path / "steady.pid"
    steady = Child(
        "worker steady",
        python(f"import os, time; open({str(pid_file)!r}, 'w').write(str(os.getpid())); "
               "time.sleep(600)"),
        FAST,
    )  # fmt: skip
    broken = Child("worker broken", python("import sys; sys.exit(3)"), FAST)
    for child in (steady, broken):
        child.start()
    began = time.monotonic()
    code = supervise([steady, broken])
    assert code == 1
    assert time.monotonic() - began < 10  # three starts, 0.2 s then 0.4 s apart
    err = capsys.readouterr().err
    assert "worker broken exited within 2 s of every start, 3 times in a row" in err
    assert "(last: code 3)" in err
    restarts = [r.getMessage() for r in caplog.records if "process exited" in r.getMessage()]
    assert len(restarts) == 2, restarts  # one line per restart
    assert "worker broken (code 3); restarting in" in restarts[0]
    assert steady.process is not None
    assert steady.process.poll() is not None  # the healthy one was stopped with it


def test_a_child_that_lived_before_dying_is_restarted_every_time(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    policy = RestartPolicy(first_s=0.1, max_s=0.2, stable_s=5.0, immediate_s=0.5, give_up_after=2)
    starts = tmp_path / "starts"
    # lives 0.7 s (longer than immediate_s), then crashes: never "at once", so never given up
    crasher = Child(
        "worker crasher",
        python(f"import time; open({str(starts)!r}, 'a').write('x'); time.sleep(0.7); "
               "raise SystemExit(1)"),
        policy,
    )  # fmt: skip
    crasher.start()
    stop = threading.Timer(4.5, lambda: os.kill(os.getpid(), signal.SIGTERM))
    stop.start()
    try:
        code = supervise([crasher])
    finally:
        stop.cancel()
    assert code == 0
    assert len(starts.read_text()) >= 4  # restarted again and again, backoff capped at 0.2 s
    err = capsys.readouterr().err
    assert "slamon stopped" in err
    assert "stopping slamon" not in err


@pytest.mark.parametrize(
    ("quick_exits", "delay"), [(1, 2.0), (2, 4.0), (3, 8.0), (4, 16.0), (5, 30.0), (9, 30.0)]
)
def test_the_restart_delay_doubles_up_to_its_cap(quick_exits: int, delay: float) -> None:
    assert RestartPolicy().delay(quick_exits) == delay
