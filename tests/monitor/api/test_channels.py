"""GET /api/v1/channels: each notification channel's state, and why a disabled one was disabled."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from sqlalchemy.orm import Session, sessionmaker

from monitor.db.models import Channel
from tests.support import ApiClient

DISABLED_AT = datetime(2026, 12, 1, 12, 0, 5, tzinfo=UTC)
ERROR = 'HTTP 404 from https://discord.com/***: {"message": "Unknown Webhook", "code": 10015}'


def seed(sessions: sessionmaker[Session]) -> None:
    with sessions() as session:
        session.add_all(
            [
                Channel(name="ops", kind="webhook", enabled=True),
                Channel(
                    name="gamers",
                    kind="discord",
                    enabled=False,
                    disabled_at=DISABLED_AT,
                    last_error=ERROR,
                    config_digest="pbkdf2_sha256$100000$00$00",
                ),
            ]
        )
        session.commit()


def test_channels_show_their_state_and_a_disabled_ones_last_error(
    api: ApiClient, reader: dict[str, str], sessions: sessionmaker[Session]
) -> None:
    seed(sessions)

    response: Any = api.get("/api/v1/channels", headers=reader)

    assert response.status_code == 200
    assert response.json() == [
        {
            "name": "gamers",
            "kind": "discord",
            "state": "disabled",
            "enabled": False,
            "disabled_at": "2026-12-01T12:00:05Z",
            "last_error": ERROR,
            "configured": False,
        },
        {
            "name": "ops",
            "kind": "webhook",
            "state": "enabled",
            "enabled": True,
            "disabled_at": None,
            "last_error": None,
            "configured": False,
        },
    ]
    assert "pbkdf2" not in response.text  # the config digest stays in the database


def test_channels_need_a_token(api: ApiClient) -> None:
    response: Any = api.get("/api/v1/channels")

    assert response.status_code == 401


def test_no_channel_is_an_empty_list(api: ApiClient, reader: dict[str, str]) -> None:
    response: Any = api.get("/api/v1/channels", headers=reader)

    assert (response.status_code, response.json()) == (200, [])
