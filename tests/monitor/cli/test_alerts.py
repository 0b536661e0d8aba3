"""`slamon alerts list` shows each notification channel's state and a disabled one's last error;
`slamon alerts enable NAME` enables it again. Run as an operator runs them, on a SQLite file."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from datetime import UTC, datetime
from pathlib import Path

import pytest
from sqlalchemy import select
from sqlalchemy.orm import Session

from monitor.db.engine import make_engine
from monitor.db.models import Channel
from tests.support import WebhookReceiver, slamon_command

SLACK_TOKEN = "sl4ckT0kenS3cretValue24x"
CONFIG = f"""
channels:
  - {{name: chat, kind: slack, url: "https://hooks.slack.com/services/T0/B0/{SLACK_TOKEN}"}}
  - {{name: ops, kind: webhook, url: "https://hooks.example.com/slamon"}}
"""
DISABLED_AT = datetime(2026, 12, 1, 12, 0, 5, tzinfo=UTC)
ERROR = "HTTP 403 from https://hooks.slack.com/***: invalid_token"


def slamon(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "SLAMON_DATABASE_URL": f"sqlite:///{cwd / 'slamon.db'}"}
    return subprocess.run(
        [*slamon_command(), *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


@pytest.fixture(scope="module")
def migrated(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A database after `slamon migrate`, made once; each test gets a copy."""
    folder = tmp_path_factory.mktemp("migrated")
    result = slamon("migrate", cwd=folder)
    assert result.returncode == 0, result.stderr
    return folder


@pytest.fixture
def workdir(migrated: Path, tmp_path: Path) -> Path:
    """A config with two channels; chat was disabled by Slack's answer, ops works."""
    for database_file in migrated.glob("slamon.db*"):
        shutil.copy(database_file, tmp_path / database_file.name)
    (tmp_path / "slamon.yaml").write_text(CONFIG)
    engine = make_engine(f"sqlite:///{tmp_path / 'slamon.db'}")
    try:
        with Session(engine) as session:
            session.add_all(
                [
                    Channel(name="ops", kind="webhook", enabled=True),
                    Channel(
                        name="chat",
                        kind="slack",
                        enabled=False,
                        disabled_at=DISABLED_AT,
                        last_error=ERROR,
                    ),
                ]
            )
            session.commit()
    finally:
        engine.dispose()
    return tmp_path


def enabled(workdir: Path, name: str) -> bool:
    engine = make_engine(f"sqlite:///{workdir / 'slamon.db'}")
    try:
        with Session(engine) as session:
            row = session.scalars(select(Channel).where(Channel.name == name)).one()
            return row.enabled
    finally:
        engine.dispose()


def test_list_shows_a_disabled_channel_with_its_error(workdir: Path) -> None:
    result = slamon("alerts", "list", cwd=workdir)

    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == [
        f"channel chat (slack): disabled since 2026-12-01 12:00: {ERROR}",
        "channel ops (webhook): enabled",
    ]
    assert SLACK_TOKEN not in result.stdout + result.stderr


def test_list_channels_json_has_one_object_per_channel(workdir: Path) -> None:
    result = slamon("alerts", "list", "--channels", "--json", cwd=workdir)

    assert result.returncode == 0, result.stderr
    assert [json.loads(line) for line in result.stdout.splitlines()] == [
        {
            "channel": "chat",
            "kind": "slack",
            "state": "disabled",
            "enabled": False,
            "disabled_at": "2026-12-01T12:00:05+00:00",
            "last_error": ERROR,
            "configured": True,
        },
        {
            "channel": "ops",
            "kind": "webhook",
            "state": "enabled",
            "enabled": True,
            "disabled_at": None,
            "last_error": None,
            "configured": True,
        },
    ]


def test_list_json_without_channels_stays_alerts_only(workdir: Path) -> None:
    result = slamon("alerts", "list", "--json", cwd=workdir)

    assert (result.returncode, result.stdout) == (0, "")


def test_enable_enables_a_disabled_channel_once(workdir: Path) -> None:
    first = slamon("alerts", "enable", "chat", cwd=workdir)
    again = slamon("alerts", "enable", "chat", cwd=workdir)

    assert first.returncode == 0, first.stderr
    assert first.stdout == "chat: enabled; 0 held deliveries will be sent on the next sweep\n"
    assert (again.returncode, again.stdout) == (0, "chat: already enabled\n")
    assert enabled(workdir, "chat")
    listed = slamon("alerts", "list", cwd=workdir).stdout
    assert "channel chat (slack): enabled\n" in listed
    assert ERROR not in listed


def test_enable_names_an_unknown_channel(workdir: Path) -> None:
    result = slamon("alerts", "enable", "nope", cwd=workdir)

    assert result.returncode == 1
    assert result.stderr == "error: no channel named 'nope' has been sent to yet\n"


def test_the_test_message_links_to_the_status_page_under_the_public_url(tmp_path: Path) -> None:
    receiver = WebhookReceiver()
    (tmp_path / "slamon.yaml").write_text(
        f"channels: [{{name: hook, kind: webhook, url: '{receiver.url}'}}]\n"
    )
    env = {
        **os.environ,
        "SLAMON_DATABASE_URL": f"sqlite:///{tmp_path / 'slamon.db'}",
        "SLAMON_PUBLIC_URL": "https://slamon.example.com/ops/",
    }
    try:
        result = subprocess.run(
            [*slamon_command(), "alerts", "test", "--channel", "hook"],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
    finally:
        receiver.close()

    assert result.returncode == 0, result.stderr
    [(_, body)] = receiver.requests
    assert json.loads(body)["alert"]["url"] == "https://slamon.example.com/ops/"
