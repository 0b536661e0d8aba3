"""User errors give one clear line and a non-zero exit, never a traceback."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from tests.support import slamon_command


def slamon(*args: str, cwd: Path, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*slamon_command(), *args],
        cwd=cwd,
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def test_config_check_prints_each_problem_with_its_path_and_exits_1(tmp_path: Path) -> None:
    (tmp_path / "bad.yaml").write_text(
        "targets:\n"
        "  - {name: x, kind: http, url: 'http://127.0.0.1:1/', interval: -5}\n"
        "  - {name: y, kind: tcp, url: 'tcp://h'}\n"
    )
    result = slamon("config", "check", "bad.yaml", cwd=tmp_path)
    assert result.returncode == 1
    assert result.stderr.splitlines() == [
        "error: targets[0].interval (line 2): must be ≥ 1 s",
        "error: targets[1] (line 3): url: a tcp target needs tcp://host:port, e.g. tcp://10.0.0.5:22",
    ]


def test_config_check_reads_slamon_config_when_no_file_is_given(tmp_path: Path) -> None:
    (tmp_path / "good.yaml").write_text("targets:\n  - {name: x, kind: tcp, url: 'tcp://h:22'}\n")
    result = slamon("config", "check", cwd=tmp_path, SLAMON_CONFIG=str(tmp_path / "good.yaml"))
    assert result.returncode == 0, result.stderr
    assert "ok (0 providers, 1 targets" in result.stdout


@pytest.mark.parametrize(
    ("args", "env", "message"),
    [
        pytest.param(
            ("migrate",),
            {"SLAMON_DATABASE_URL": "postgresql+psycopg://nobody@127.0.0.1:1/none"},
            "error: database postgresql+psycopg://nobody@127.0.0.1:1/none unreachable:",
            id="migrate-without-database",
        ),
        pytest.param(
            ("worker",),
            {"SLAMON_BROKER_URL": "redis://:hunter2@127.0.0.1:1/0"},
            "error: broker redis://***@127.0.0.1:1/0 unreachable:",
            id="worker-without-broker",
        ),
        pytest.param(
            ("worker",),
            {"SLAMON_DATABASE_URL": "sqlite:////nonexistent-dir/x.db"},
            "error: database sqlite:////nonexistent-dir/x.db unreachable:",
            id="worker-without-database",
        ),
        pytest.param(
            ("api",),
            {"SLAMON_CONFIG": "broken.yaml"},
            "error: not valid YAML:",
            id="api-with-broken-config",
        ),
    ],
)
def test_unreachable_services_and_bad_config_are_one_clear_line_at_start(
    tmp_path: Path, args: tuple[str, ...], env: dict[str, str], message: str
) -> None:
    (tmp_path / "broken.yaml").write_text("targets: [")
    slamon("migrate", cwd=tmp_path)  # the default SQLite database, so only `env` is wrong
    result = slamon(*args, cwd=tmp_path, **env)
    assert result.returncode == 1
    assert "Traceback" not in result.stderr
    assert result.stderr.startswith(message), result.stderr
    assert "hunter2" not in result.stderr
