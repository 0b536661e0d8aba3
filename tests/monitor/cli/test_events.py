"""`slamon events poll` and `slamon events list` as a new user runs them: a real SQLite
database, an aws_health source pointed at a local server of the Health API's JSON protocol."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

from tests.monitor.account.fake_aws import aws_server, json_error
from tests.monitor.account.test_aws_health import HealthApi
from tests.support import slamon_command

KEYS = {"source", "outcome", "provider", "key", "kind", "status", "starts_at", "targets"}


def slamon(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {
        **os.environ,
        "SLAMON_DATABASE_URL": f"sqlite:///{cwd / 'slamon.db'}",
        "SLAMON_CONFIG": str(cwd / "slamon.yaml"),
        "AWS_ACCESS_KEY_ID": "testing",
        "AWS_SECRET_ACCESS_KEY": "testing",
        "AWS_EC2_METADATA_DISABLED": "true",
    }
    return subprocess.run(
        [*slamon_command(), *args], cwd=cwd, env=env, capture_output=True, text=True,
        timeout=120, check=False,
    )  # fmt: skip


def lines(result: subprocess.CompletedProcess[str]) -> list[dict[str, object]]:
    return [json.loads(line) for line in result.stdout.splitlines() if line.startswith("{")]


def config(url: str) -> str:
    return (
        "targets:\n"
        "  - {name: trainer-3, kind: tcp, url: 'tcp://127.0.0.1:1', instance_id: i-03,"
        " provider: aws, region: us-east-1}\n"
        "account_events:\n"
        f"  - {{name: health, kind: aws_health, endpoint_url: '{url}', timeout: 2s}}\n"
    )


def test_events_poll_stores_once_and_list_shows_what_is_ahead(tmp_path: Path) -> None:
    with aws_server(HealthApi(4)) as server:
        (tmp_path / "slamon.yaml").write_text(config(server.url))
        checked = slamon("config", "check", cwd=tmp_path)
        assert "1 account event sources" in checked.stdout, checked.stdout + checked.stderr
        assert slamon("migrate", cwd=tmp_path).returncode == 0
        first = slamon("events", "poll", "--json", cwd=tmp_path)
        assert first.returncode == 0, first.stderr
        again = slamon("events", "poll", cwd=tmp_path)
    records = lines(first)
    assert all(set(r) >= KEYS for r in records)
    assert sorted(str(r["outcome"]) for r in records) == ["new"] * 4
    about = [r for r in records if r["targets"] == ["trainer-3"]]
    assert len(about) == 1, records  # HealthApi names i-00 … i-03: one is the configured box
    assert about[0]["kind"] == "retirement"
    assert "health: 4 events listed; 4 unchanged" in again.stderr, again.stderr
    listed = slamon("events", "list", "--target", "trainer-3", "--json", cwd=tmp_path)
    assert [r["key"] for r in lines(listed)] == [about[0]["key"]]


def test_a_refused_poll_is_one_line_and_exit_1(tmp_path: Path) -> None:
    def refuse(operation: str, params: dict[str, object]) -> tuple[int, object]:
        return 400, json_error("SubscriptionRequiredException", "no support plan")

    with aws_server(refuse) as server:
        (tmp_path / "slamon.yaml").write_text(config(server.url))
        slamon("migrate", cwd=tmp_path)
        failed = slamon("events", "poll", cwd=tmp_path)
    assert failed.returncode == 1
    [said] = failed.stderr.strip().splitlines()
    assert said.startswith("error: account events health: ")
    assert "Business" in said, said  # which support plans the Health API needs
    assert "Traceback" not in failed.stderr
    unknown = slamon("events", "poll", "--source", "nope", cwd=tmp_path)
    assert unknown.returncode != 0
    assert "no account event source named 'nope' (sources: health)" in unknown.stderr
