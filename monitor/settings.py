"""Process settings from the environment (``SLAMON_*``), validated once at start.

Secrets may come from files: ``SLAMON_DATABASE_URL_FILE=/run/secrets/db`` is read when
``SLAMON_DATABASE_URL`` itself is not set (the Docker/Kubernetes secrets convention).
"""

from __future__ import annotations

import os
import socket
from functools import lru_cache
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from pydantic import Field, field_validator, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

_FILE_SECRETS = ("database_url", "broker_url")


class Settings(BaseSettings):
    """Everything a slamon process needs before it reads the YAML config."""

    model_config = SettingsConfigDict(env_prefix="SLAMON_", extra="ignore")

    database_url: str = Field(
        default="sqlite:///slamon.db",
        description="SQLAlchemy URL; a SQLite file in the working directory by default.",
    )
    broker_url: str = Field(
        default="filesystem://",
        description="Celery broker; Celery's filesystem transport in `state_dir` by default.",
    )
    config: Path = Field(default=Path("slamon.yaml"), description="The YAML config file.")
    state_dir: Path = Field(
        default=Path(".slamon"), description="Local state: filesystem broker, beat schedule."
    )
    api_auth_failures_per_minute: int = Field(
        default=20,
        ge=1,
        le=1_000_000,
        description="Failed authentications an address or a token prefix may make in a minute "
        "before the API answers 429 (per API process; valid tokens are never refused).",
    )
    broker_visibility_timeout: float = Field(
        default=3600.0,
        gt=0,
        description="Seconds before Redis hands an unacknowledged task (its worker died) to "
        "another worker. Longer than the longest task; shorter means faster recovery.",
    )
    broker_give_up_after: float = Field(
        default=180.0,
        gt=0,
        description="Seconds a worker or beat goes on without an answer from the broker before "
        "it gives up: it exits with code 75 for systemd, Kubernetes or `slamon run` to start "
        "it again (workers/broker_watch.py).",
    )
    vantage: str = Field(
        default_factory=socket.gethostname, description="Where this worker probes from."
    )
    public_url: str | None = Field(
        default=None,
        description="The address people reach slamon's API and status page at "
        "(`https://slamon.example.com`): every alert links to the page for what it is about "
        "under it. Unset, alerts carry no link.",
    )
    log_level: str = "INFO"

    @field_validator("public_url")
    @classmethod
    def _public_url_is_http(cls, value: str | None) -> str | None:
        """An absolute http(s) URL with a host, without a query or fragment; stored without
        its trailing slash, so pages are joined on as ``{public_url}/targets/NAME``. Empty is
        unset (``SLAMON_PUBLIC_URL=`` in an env file)."""
        text = (value or "").strip()
        if not text:
            return None
        parts = urlsplit(text)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(
                f"must be an http(s) URL such as https://slamon.example.com, got {text!r}"
            )
        if parts.query or parts.fragment:
            raise ValueError(f"must not carry a query or a fragment, got {text!r}")
        return text.rstrip("/")

    @model_validator(mode="before")
    @classmethod
    def _read_secret_files(cls, data: Any) -> Any:
        if not isinstance(data, dict):
            return data
        for name in _FILE_SECRETS:
            path = os.environ.get(f"SLAMON_{name.upper()}_FILE")
            if path and name not in data and f"SLAMON_{name.upper()}" not in os.environ:
                data[name] = Path(path).read_text().strip()
        return data

    @property
    def broker_folder(self) -> Path:
        """Where the filesystem transport keeps its messages."""
        return self.state_dir / "broker"

    @property
    def uses_filesystem_broker(self) -> bool:
        return self.broker_url.startswith("filesystem://")


@lru_cache(maxsize=1)
def get_settings() -> Settings:
    """The process-wide settings, read once."""
    return Settings()
