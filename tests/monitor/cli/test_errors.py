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


def test_config_check_says_once_how_to_give_alerts_a_link(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("SLAMON_PUBLIC_URL", raising=False)
    (tmp_path / "slamon.yaml").write_text("targets: []\n")

    bare = slamon("config", "check", cwd=tmp_path)
    linked = slamon("config", "check", cwd=tmp_path, SLAMON_PUBLIC_URL="https://s.example/")

    assert bare.returncode == 0, bare.stderr
    notes = [line for line in bare.stderr.splitlines() if "SLAMON_PUBLIC_URL" in line]
    assert notes == [
        "note: alerts will carry no link: set SLAMON_PUBLIC_URL=https://… to the address users "
        "reach slamon at (its status page and API), in the environment of the worker and of "
        "`slamon run`"
    ]
    assert linked.returncode == 0, linked.stderr
    assert "SLAMON_PUBLIC_URL" not in linked.stderr


def test_a_setting_that_is_not_valid_is_one_error_line_naming_its_variable(
    tmp_path: Path,
) -> None:
    (tmp_path / "slamon.yaml").write_text("targets: []\n")

    result = slamon("config", "check", cwd=tmp_path, SLAMON_PUBLIC_URL="ftp://files.example")

    assert result.returncode == 1
    assert result.stderr.splitlines() == [
        "error: SLAMON_PUBLIC_URL: must be an http(s) URL such as https://slamon.example.com, "
        "got 'ftp://files.example'"
    ]


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
