"""`slamon discover once` as a new user runs it: a real file_sd file, a real SQLite database."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.support import slamon_command

CONFIG = """\
discovery:
  - name: lab
    kind: file_sd
    path: sd.json
    retire_after: 1
    template: {kind: http, url: "http://{address}/healthz", interval: 15s}
"""
KEYS = {"source", "action", "target", "external_id", "reason", "instance_type", "gpus", "capacity"}


def slamon(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {
        **os.environ,
        "SLAMON_DATABASE_URL": f"sqlite:///{cwd / 'slamon.db'}",
        "SLAMON_CONFIG": str(cwd / "slamon.yaml"),
    }
    return subprocess.run(
        [*slamon_command(), *args], cwd=cwd, env=env, capture_output=True, text=True,
        timeout=120, check=False,
    )  # fmt: skip


def lines(result: subprocess.CompletedProcess[str]) -> list[dict[str, object]]:
    return [json.loads(line) for line in result.stdout.splitlines() if line.startswith("{")]


def groups(*addresses: str) -> str:
    return json.dumps([{"targets": list(addresses), "labels": {"instance_type": "p5.48xlarge"}}])


def test_discover_once_adds_keeps_and_retires_and_says_why(tmp_path: Path) -> None:
    (tmp_path / "slamon.yaml").write_text(CONFIG)
    (tmp_path / "sd.json").write_text(groups("10.0.0.1:80", "10.0.0.2:80"))
    checked = slamon("config", "check", cwd=tmp_path)
    assert "0 targets, 1 discovery sources" in checked.stdout, checked.stdout + checked.stderr
    assert slamon("migrate", cwd=tmp_path).returncode == 0
    dry = slamon("discover", "once", "--dry-run", "--json", cwd=tmp_path)
    assert dry.returncode == 0, dry.stderr
    assert [d["action"] for d in lines(dry)] == ["added", "added"]
    first = slamon("discover", "once", "--json", cwd=tmp_path)
    records = lines(first)
    assert all(set(r) >= KEYS for r in records)
    assert [(r["action"], r["gpus"]) for r in records] == [("added", 8), ("added", 8)]
    (tmp_path / "sd.json").write_text(groups("10.0.0.1:80"))
    second = slamon("discover", "once", cwd=tmp_path)
    assert second.returncode == 0, second.stderr
    assert "retired  10.0.0.2:80" in second.stdout
    assert "missing" in second.stdout
    assert "1 kept, 1 retired" in second.stderr


def test_a_failed_sweep_exits_1_with_one_line_and_retires_nothing(tmp_path: Path) -> None:
    (tmp_path / "slamon.yaml").write_text(CONFIG)
    (tmp_path / "sd.json").write_text(groups("10.0.0.1:80"))
    assert slamon("migrate", cwd=tmp_path).returncode == 0
    assert slamon("discover", "once", cwd=tmp_path).returncode == 0
    (tmp_path / "sd.json").write_text("{broken")
    failed = slamon("discover", "once", cwd=tmp_path)
    assert failed.returncode == 1
    errors = [line for line in failed.stderr.splitlines() if line.startswith("error:")]
    assert errors == [
        "error: discovery lab: file_sd: sd.json is malformed: "
        "Expecting property name enclosed in double quotes: line 1 column 2 (char 1) "
        "(nothing retired)"
    ]
    assert "Traceback" not in failed.stderr
    (tmp_path / "sd.json").write_text(groups("10.0.0.1:80"))
    again = slamon("discover", "once", "--json", cwd=tmp_path)
    assert [(r["action"], r["reason"]) for r in lines(again)] == [("kept", "unchanged")]


def test_an_unknown_source_is_one_line(tmp_path: Path) -> None:
    (tmp_path / "slamon.yaml").write_text(CONFIG)
    result = slamon("discover", "once", "--source", "nope", cwd=tmp_path)
    assert result.returncode == 1
    assert result.stderr.strip().splitlines()[-1] == (
        "error: no discovery source named 'nope' (sources: lab)"
    )


def test_a_source_whose_extra_is_missing_fails_config_check_naming_it(tmp_path: Path) -> None:
    """A plug-in kind whose SDK is not installed: one line naming the extra to install."""
    plugin = tmp_path / "toy_plugin.py"
    plugin.write_text(
        "from monitor.discovery.kind import DiscoveryKind, SourceOptions\n"
        "from monitor.discovery.kinds import register\n"
        "register(DiscoveryKind('toy', SourceOptions, lambda o, c: [],"
        " requires=('no_such_sdk_module',), extra='toy'))\n"
    )
    script = (
        "import toy_plugin\n"
        "from monitor.config import parse_config\n"
        "from monitor.errors import ConfigError\n"
        "try:\n"
        "    parse_config('discovery: [{name: t, kind: toy, template: {kind: http}}]')\n"
        "except ConfigError as exc:\n"
        "    print(exc.problems)\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", script], cwd=tmp_path, capture_output=True, text=True,
        timeout=60, check=False,
    )  # fmt: skip
    assert result.stdout.strip() == (
        '["discovery[0] (line 1): the toy source needs no_such_sdk_module: '
        "pip install 'slamon[toy]'\"]"
    ), result.stderr
