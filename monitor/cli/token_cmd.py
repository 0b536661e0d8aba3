"""`slamon token create|list|revoke`: API tokens for the REST API. Hashes are never printed."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime
from typing import TYPE_CHECKING, Any

import click

if TYPE_CHECKING:
    from sqlalchemy.orm import Session

    from monitor.db.models import ApiToken


@click.group()
def token() -> None:
    """Create, list and revoke API tokens."""


@token.command("create")
@click.argument("name")
@click.option(
    "--scope",
    type=click.Choice(["read", "admin", "events"]),
    default="read",
    show_default=True,
    help="read: every GET; admin: also register/retire targets and push heartbeats; "
    "events: only push account events (POST /api/v1/events/...).",
)
def create(name: str, scope: str) -> None:
    """Create a token called NAME and print it, this once."""
    from monitor import tokens

    with _session() as session:
        plaintext = tokens.create(session, name, scope)
        _commit(session, f"a token named {name.strip()!r} already exists")
    click.echo(plaintext)
    click.echo(
        f"token {name.strip()!r} ({scope}) created; store it now, it cannot be shown again. "
        "Send it as `Authorization: Bearer <token>`.",
        err=True,
    )


@token.command("list")
@click.option("--json", "as_json", is_flag=True, help="One JSON object per line.")
def list_(as_json: bool) -> None:
    """List tokens: name, scope, when created, last used and revoked."""
    from monitor import tokens

    with _session() as session:
        rows = [_describe(row) for row in tokens.list_tokens(session)]
    if as_json:
        for row in rows:
            click.echo(json.dumps(row))
        return
    click.echo(f"{'NAME':<24} {'SCOPE':<6} {'CREATED':<20} {'LAST USED':<20} REVOKED")
    for row in rows:
        cells = [_short(row[k]) for k in ("created_at", "last_used_at", "revoked_at")]
        click.echo(f"{row['name']:<24} {row['scope']:<6} {cells[0]:<20} {cells[1]:<20} {cells[2]}")


@token.command("revoke")
@click.argument("name")
def revoke(name: str) -> None:
    """Revoke the token called NAME; requests with it are refused from now on."""
    from monitor import tokens

    with _session() as session:
        row = tokens.revoke(session, name)
        session.commit()
    click.echo(f"token {name!r} revoked at {_short(_iso(row.revoked_at))} UTC")


def _describe(row: ApiToken) -> dict[str, Any]:
    return {
        "name": row.name,
        "scope": row.scope,
        "created_at": _iso(row.created_at),
        "last_used_at": _iso(row.last_used_at),
        "revoked_at": _iso(row.revoked_at),
    }


def _iso(moment: datetime | None) -> str | None:
    return moment.isoformat().replace("+00:00", "Z") if moment else None


def _short(iso: str | None) -> str:
    return iso[:19].replace("T", " ") if iso else "-"


@contextmanager
def _session() -> Iterator[Session]:
    """A session on the configured database; one clear line when it has no schema yet."""
    from sqlalchemy import inspect

    from monitor.db.engine import check_database, make_engine, make_sessionmaker
    from monitor.errors import SlamonError
    from monitor.settings import Settings

    engine = make_engine(Settings().database_url)
    try:
        check_database(engine)
        if not inspect(engine).has_table("api_tokens"):
            raise SlamonError("the database has no slamon schema yet: run `slamon migrate` first")
        with make_sessionmaker(engine)() as session:
            yield session
    finally:
        engine.dispose()


def _commit(session: Session, conflict: str) -> None:
    """Commit; a concurrent writer's unique-name clash becomes a clear error."""
    from sqlalchemy.exc import IntegrityError

    from monitor.errors import SlamonError

    try:
        session.commit()
    except IntegrityError:
        raise SlamonError(conflict) from None
