"""`slamon export prometheus-rules`: the config's rules on standard output or in a file; bad
input is one line and exit 1, never a traceback (the rules themselves are tested in
tests/monitor/alerts/test_prometheus_rules.py)."""

from __future__ import annotations

from pathlib import Path

import yaml

from tests.monitor.cli.test_errors import slamon


def test_it_reads_slamon_config_when_no_config_is_given(tmp_path: Path) -> None:
    (tmp_path / "mine.yaml").write_text(
        "alerts:\n  burn_windows:\n    - {long: 2h, short: 10m, factor: 3, severity: info}\n"
    )
    done = slamon("export", "prometheus-rules", cwd=tmp_path, SLAMON_CONFIG="mine.yaml")
    assert done.returncode == 0, done.stderr
    alerts = yaml.safe_load(done.stdout)["groups"][-1]["rules"]
    assert [(a["alert"], a["labels"]["severity"]) for a in alerts] == [
        ("SlamonSlaBurn", "info"),
        ("SlamonTargetDown", "critical"),
    ]


def test_a_missing_or_invalid_config_is_one_line_and_exit_1(tmp_path: Path) -> None:
    done = slamon("export", "prometheus-rules", "--config", "nope.yaml", cwd=tmp_path)
    assert (done.returncode, done.stdout) == (1, "")
    assert done.stderr.splitlines() == ["error: nope.yaml: no such file"]
    (tmp_path / "bad.yaml").write_text("alerts:\n  burn_windows: []\n")
    done = slamon("export", "prometheus-rules", "--config", "bad.yaml", cwd=tmp_path)
    assert done.returncode == 1
    assert len(done.stderr.splitlines()) == 1
    assert done.stderr.startswith("error: alerts.burn_windows")


def test_an_out_file_it_cannot_write_is_one_line_and_exit_1(tmp_path: Path) -> None:
    (tmp_path / "ok.yaml").write_text("targets: []\n")
    out = tmp_path / "no-such-dir" / "rules.yml"
    done = slamon("export", "prometheus-rules", "--config", "ok.yaml", "--out", str(out),
                  cwd=tmp_path)  # fmt: skip
    assert done.returncode == 1
    assert done.stderr.splitlines() == [f"error: {out}: No such file or directory"]


def test_a_window_prometheus_cannot_write_is_one_line_and_exit_1(tmp_path: Path) -> None:
    (tmp_path / "odd.yaml").write_text(
        "alerts:\n  burn_windows:\n    - {long: 1h, short: 1.5s, factor: 14.4}\n"
    )
    done = slamon("export", "prometheus-rules", "--config", "odd.yaml", cwd=tmp_path)
    assert (done.returncode, done.stdout) == (1, "")
    assert done.stderr.splitlines() == [
        "error: alerts.burn_windows: a rule window must be whole seconds, got 1.5 s"
    ]
