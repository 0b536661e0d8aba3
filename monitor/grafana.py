"""Push slamon's datasource and dashboards to a Grafana through its documented HTTP API.

Idempotent: the datasource is looked up by its uid (``slamon-postgres``) and updated when it
exists, created when not; the folder is looked up by uid and created when missing; every
dashboard is posted with ``overwrite: true``. Running it twice leaves Grafana as once.

Five endpoints over one ``httpx.Client`` with explicit timeouts (tests fake Grafana at the
transport with respx): ``GET/PUT /api/datasources/uid/{uid}``, ``POST /api/datasources``,
``GET /api/folders/{uid}``, ``POST /api/folders``, ``POST /api/dashboards/db``. Not
grafana-client: its releases since 4.x pull niquests and urllib3-future, which replaces the
``urllib3`` package itself and breaks requests-based tools installed beside slamon
(docs/operations.md, "Grafana").

The datasource's database credentials (what *Grafana* uses to reach PostgreSQL, ideally a
SELECT-only role) come from ``--database-url-for-grafana`` / ``SLAMON_GRAFANA_DB_URL`` or the
parts ``SLAMON_GRAFANA_DB_HOST`` (``host:port``), ``SLAMON_GRAFANA_DB_NAME``,
``SLAMON_GRAFANA_DB_USER``, ``SLAMON_GRAFANA_DB_PASSWORD``, ``SLAMON_GRAFANA_DB_SSLMODE``;
a part given explicitly overrides the same part of the URL.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx

from monitor.errors import SlamonError

DATASOURCE_UID = "slamon-postgres"
DATASOURCE_TYPE = "grafana-postgresql-datasource"
DEFAULT_FOLDER = "slamon"
# dashboards/ beside the package in a checkout (what docker-compose provisions too).
DASHBOARDS_DIR = Path(__file__).resolve().parent.parent / "dashboards"
TIMEOUT = httpx.Timeout(10.0, connect=5.0)


class GrafanaError(SlamonError):
    """Grafana refused the push or could not be reached; the message is one line and never
    contains the token."""


@dataclass(frozen=True, slots=True)
class GrafanaDatabase:
    """Where Grafana (not slamon) reaches PostgreSQL: ``host`` is ``host:port``."""

    host: str
    database: str
    user: str
    password: str = field(repr=False, default="")
    sslmode: str = "disable"

    @classmethod
    def resolve(
        cls,
        url: str | None = None,
        *,
        host: str | None = None,
        database: str | None = None,
        user: str | None = None,
        password: str | None = None,
        sslmode: str | None = None,
    ) -> GrafanaDatabase:
        """Combine a ``postgresql://user:pw@host:port/db`` URL with explicit parts (which win).
        Raises :class:`GrafanaError` naming what is missing."""
        parts: dict[str, str | None] = {}
        if url:
            split = urlsplit(url)
            if not split.scheme.startswith("postgres"):
                raise GrafanaError(
                    f"the database URL for Grafana must be postgresql://…, got {split.scheme}://"
                )
            parts = {
                "host": f"{split.hostname}:{split.port or 5432}" if split.hostname else None,
                "database": split.path.lstrip("/") or None,
                "user": split.username,
                "password": split.password,
            }
        host = host or parts.get("host")
        database = database or parts.get("database")
        user = user or parts.get("user")
        missing = [
            name
            for name, value in (("host", host), ("database name", database), ("user", user))
            if not value
        ]
        if missing or host is None or database is None or user is None:
            raise GrafanaError(
                "the datasource needs the database "
                + ", ".join(missing)
                + ": pass --database-url-for-grafana or set SLAMON_GRAFANA_DB_*"
            )
        return cls(
            host=host,
            database=database,
            user=user,
            password=password if password is not None else (parts.get("password") or ""),
            sslmode=sslmode or "disable",
        )


@dataclass(frozen=True, slots=True)
class PushResult:
    """What a push did: ``datasource`` is ``created`` or ``updated``; the folder's uid; the
    dashboards' uids in the order pushed."""

    datasource: str
    folder_uid: str
    folder_created: bool
    dashboards: list[str]


def datasource_payload(db: GrafanaDatabase, name: str = "slamon") -> dict[str, Any]:
    """The datasource as Grafana's API takes it (the same as the provisioning YAML)."""
    return {
        "uid": DATASOURCE_UID,
        "name": name,
        "type": DATASOURCE_TYPE,
        "access": "proxy",
        "url": db.host,
        "user": db.user,
        "database": db.database,
        "isDefault": False,
        "jsonData": {
            "database": db.database,
            "sslmode": db.sslmode,
            "postgresVersion": 1600,
            "timescaledb": False,
        },
        "secureJsonData": {"password": db.password},
    }


def load_dashboards(directory: Path = DASHBOARDS_DIR) -> list[dict[str, Any]]:
    """Every ``*.json`` dashboard in ``directory``, sorted by file name."""
    paths = sorted(directory.glob("*.json"))
    if not paths:
        raise GrafanaError(f"no dashboard JSON in {directory}")
    return [json.loads(path.read_text(encoding="utf-8")) for path in paths]


def folder_uid(title: str) -> str:
    """A stable folder uid from its title (Grafana uids: at most 40 of [a-zA-Z0-9_-])."""
    return re.sub(r"[^a-zA-Z0-9_-]+", "-", title.strip()).strip("-").lower()[:40] or DEFAULT_FOLDER


class GrafanaApi:
    """Grafana's HTTP API at ``base`` (``http[s]://host[:port][/prefix]``), Bearer ``token``
    when given, sending through ``client``."""

    def __init__(self, base: str, token: str | None, client: httpx.Client) -> None:
        self.base = base
        self.client = client
        self.headers = {"Accept": "application/json"}
        if token:
            self.headers["Authorization"] = f"Bearer {token}"

    def call(self, method: str, path: str, body: dict[str, Any] | None = None) -> Any:
        """The JSON answer; None for 404 on a GET (not there); :class:`GrafanaError` for any
        other refusal, one line without the token."""
        answer = self.client.request(
            method, f"{self.base}/api/{path}", headers=self.headers, json=body
        )
        if answer.status_code == 404 and method == "GET":
            return None
        if answer.status_code in (401, 403):
            raise GrafanaError(
                f"Grafana rejected the credentials (HTTP {answer.status_code}): check --token "
                "and that it may edit datasources and dashboards"
            )
        if answer.is_error:
            raise GrafanaError(
                f"Grafana refused {method} /api/{path} (HTTP {answer.status_code}): "
                f"{_message(answer)}"
            )
        return answer.json() if answer.content else None


def _message(answer: httpx.Response) -> str:
    try:
        text = str(answer.json().get("message", ""))
    except (ValueError, AttributeError):
        text = answer.text
    return " ".join(text.split())[:200] or answer.reason_phrase


def connect(url: str, token: str | None, client: httpx.Client) -> GrafanaApi:
    """A :class:`GrafanaApi` on ``url`` (``http[s]://host[:port][/prefix]``)."""
    split = urlsplit(url.rstrip("/"))
    if split.scheme not in ("http", "https") or not split.hostname:
        raise GrafanaError(f"--url must be http(s)://host[:port], got {url!r}")
    return GrafanaApi(url.rstrip("/"), token, client)


def push(
    api: GrafanaApi,
    datasource: dict[str, Any],
    dashboards: list[dict[str, Any]],
    folder: str = DEFAULT_FOLDER,
) -> PushResult:
    """Create or update the datasource, the folder and every dashboard.

    Raises :class:`GrafanaError` (one line) when Grafana rejects the credentials (401/403),
    cannot be reached, or refuses a request."""
    try:
        return _push(api, datasource, dashboards, folder)
    except httpx.TimeoutException:
        raise GrafanaError(f"Grafana at {api.base} did not answer in time") from None
    except httpx.TransportError as exc:
        raise GrafanaError(f"Grafana at {api.base} is unreachable: {type(exc).__name__}") from None


def _push(
    api: GrafanaApi,
    datasource: dict[str, Any],
    dashboards: list[dict[str, Any]],
    folder: str,
) -> PushResult:
    uid = datasource["uid"]
    if api.call("GET", f"datasources/uid/{uid}") is None:
        api.call("POST", "datasources", datasource)
        ds_action = "created"
    else:
        api.call("PUT", f"datasources/uid/{uid}", datasource)
        ds_action = "updated"

    fuid = folder_uid(folder)
    folder_created = False
    if api.call("GET", f"folders/{fuid}") is None:
        api.call("POST", "folders", {"uid": fuid, "title": folder})
        folder_created = True

    pushed = []
    for dashboard in dashboards:
        body = {**dashboard, "id": None}  # Grafana matches by uid; a stale id would conflict
        api.call(
            "POST",
            "dashboards/db",
            {
                "dashboard": body,
                "folderUid": fuid,
                "overwrite": True,
                "message": "slamon grafana push",
            },
        )
        pushed.append(str(dashboard["uid"]))
    return PushResult(ds_action, fuid, folder_created, pushed)
