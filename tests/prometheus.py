"""Debian's Prometheus binaries for the tests that check slamon with the real tools:
``promtool`` (``check metrics``, ``check rules``, ``test rules``) and ``prometheus`` itself
(started on a free loopback port to scrape a running slamon). Missing binaries skip the test
on a laptop and fail it in CI (``tests.support.unavailable``)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

from tests.support import unavailable

PROMTOOL = "/usr/bin/promtool"
PROMETHEUS = "/usr/bin/prometheus"
RULES = Path(__file__).parent.parent / "deploy" / "prometheus"


def binary(path: str) -> str:
    """``path`` if it is installed (else on PATH by its name); skips or fails the test if not."""
    found = path if Path(path).exists() else shutil.which(Path(path).name)
    if found is None:
        unavailable(Path(path).name, f"{path} is not installed (Debian's prometheus package)")
    return str(found)


def promtool(*args: str, stdin: str | None = None, cwd: Path | None = None) -> tuple[int, str]:
    """Run ``promtool args…``; its exit code and everything it printed."""
    done = subprocess.run(
        [binary(PROMTOOL), *args],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=120,
        cwd=cwd,
        check=False,
    )
    return done.returncode, done.stdout + done.stderr
