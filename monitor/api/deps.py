"""What request handlers share: settings, config and the database, built once per app."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

from fastapi import Request
from sqlalchemy import Engine
from sqlalchemy.orm import Session, sessionmaker

from monitor.api.throttle import AuthThrottle
from monitor.config import Config, load_config
from monitor.db.engine import make_engine, make_sessionmaker
from monitor.settings import Settings


@dataclass
class AppState:
    settings: Settings
    config: Config
    engine: Engine
    sessions: sessionmaker[Session]
    throttle: AuthThrottle = field(default_factory=AuthThrottle)

    @classmethod
    def build(cls, settings: Settings) -> AppState:
        engine = make_engine(settings.database_url)
        return cls(
            settings=settings,
            config=load_config(settings.config, missing_ok=True),
            engine=engine,
            sessions=make_sessionmaker(engine),
            throttle=AuthThrottle(limit=settings.api_auth_failures_per_minute),
        )


def app_state(request: Request) -> AppState:
    state: AppState = request.app.state.slamon
    return state


def db_session(request: Request) -> Iterator[Session]:
    """A session per request; the handler commits what it writes."""
    with app_state(request).sessions() as session:
        yield session
