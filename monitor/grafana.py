"""Push slamon's datasource and dashboards to a Grafana through its HTTP API (grafana-client).

Idempotent: the datasource is looked up by its uid (``slamon-postgres``) and updated when it
exists, created when not; the folder is looked up by uid and created when missing; every
dashboard is posted with ``overwrite: true``. Running it twice leaves Grafana as once.

grafana-client speaks niquests; :class:`HttpxAdapter` sends its requests through one
``httpx.Client`` with explicit timeouts instead, so slamon has a single HTTP stack (and tests
fake Grafana at the transport with respx).

The datasource's database credentials (what *Grafana* uses to reach PostgreSQL, ideally a
SELECT-only role) come from ``--database-url-for-grafana`` / ``SLAMON_GRAFANA_DB_URL`` or the
parts ``SLAMON_GRAFANA_DB_HOST`` (``host:port``), ``SLAMON_GRAFANA_DB_NAME``,
``SLAMON_GRAFANA_DB_USER``, ``SLAMON_GRAFANA_DB_PASSWORD``, ``SLAMON_GRAFANA_DB_SSLMODE``;
a part given explicitly overrides the same part of the URL.
"""

from __future__ import annotations

import io
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx
import niquests
from grafana_client.api import GrafanaApi
from grafana_client.client import GrafanaClientError, GrafanaException, TokenAuth
from niquests.adapters import BaseAdapter
from niquests.packages.urllib3 import HTTPResponse  # type: ignore[import-not-found]
from niquests.structures import CaseInsensitiveDict

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


class HttpxAdapter(BaseAdapter):
    """A niquests transport adapter that sends through an ``httpx.Client``."""

    def __init__(self, client: httpx.Client) -> None:
        super().__init__()
        self.client = client

    def send(self, request: Any, *args: Any, **kwargs: Any) -> niquests.Response:
        body = request.body
        if isinstance(body, str):
            body = body.encode()
        answer = self.client.request(
            request.method or "GET",
            request.url or "",
            headers=dict(request.headers),
            content=body,
        )
        response = niquests.Response()
        response.status_code = answer.status_code
        response.headers = CaseInsensitiveDict(answer.headers.items())
        response._content = answer.content
        response.encoding = answer.encoding
        response.url = str(answer.url)
        response.reason = answer.reason_phrase
        response.request = request
        # niquests reads cookies off ``raw``; Grafana's API needs none, so an empty body will do.
        response.raw = HTTPResponse(
            body=io.BytesIO(b""), headers=dict(answer.headers), status=answer.status_code
        )
        return response

    def close(self) -> None:
        self.client.close()


def connect(url: str, token: str | None, client: httpx.Client) -> GrafanaApi:
    """A GrafanaApi on ``url`` (``http[s]://host[:port][/prefix]``) sending through ``client``;
    Bearer ``token`` when given."""
    split = urlsplit(url.rstrip("/"))
    if split.scheme not in ("http", "https") or not split.hostname:
        raise GrafanaError(f"--url must be http(s)://host[:port], got {url!r}")
    prefix = split.path.strip("/")
    api = GrafanaApi(
        auth=TokenAuth(token) if token else None,  # type: ignore[no-untyped-call]
        host=split.hostname,
        port=split.port,
        protocol=split.scheme,
        url_path_prefix=f"{prefix}/" if prefix else "",
    )
    adapter = HttpxAdapter(client)
    api.client.s.mount("http://", adapter)
    api.client.s.mount("https://", adapter)
    return api


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
    except GrafanaClientError as exc:
        if exc.status_code in (401, 403):
            raise GrafanaError(
                f"Grafana rejected the credentials (HTTP {exc.status_code}): check --token "
                "and that it may edit datasources and dashboards"
            ) from None
        raise GrafanaError(f"Grafana refused a request: {exc.message}") from None
    except GrafanaException as exc:
        raise GrafanaError(f"Grafana failed: {exc.message}") from None
    except httpx.TimeoutException:
        raise GrafanaError(f"Grafana at {api.client.url} did not answer in time") from None
    except httpx.TransportError as exc:
        raise GrafanaError(
            f"Grafana at {api.client.url} is unreachable: {type(exc).__name__}"
        ) from None


def _push(
    api: Any,  # grafana-client's element methods are untyped
    datasource: dict[str, Any],
    dashboards: list[dict[str, Any]],
    folder: str,
) -> PushResult:
    uid = datasource["uid"]
    if _get_or_none(lambda: api.datasource.get_datasource_by_uid(uid)) is None:
        api.datasource.create_datasource(datasource)
        ds_action = "created"
    else:
        api.datasource.update_datasource_by_uid(uid, datasource)
        ds_action = "updated"

    fuid = folder_uid(folder)
    folder_created = False
    if _get_or_none(lambda: api.folder.get_folder(fuid)) is None:
        api.folder.create_folder(folder, uid=fuid)
        folder_created = True

    pushed = []
    for dashboard in dashboards:
        body = {**dashboard, "id": None}  # Grafana matches by uid; a stale id would conflict
        api.dashboard.update_dashboard(
            {
                "dashboard": body,
                "folderUid": fuid,
                "overwrite": True,
                "message": "slamon grafana push",
            }
        )
        pushed.append(str(dashboard["uid"]))
    return PushResult(ds_action, fuid, folder_created, pushed)


def _get_or_none(call: Any) -> Any:
    """``call()``'s answer, or None when Grafana answers 404."""
    try:
        return call()
    except GrafanaClientError as exc:
        if exc.status_code == 404:
            return None
        raise
