"""`slamon token create|list|revoke` as an operator runs it, against a SQLite file."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest
from sqlalchemy.orm import Session

from monitor import tokens
from monitor.db.engine import make_engine
from tests.support import slamon_command


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
    for database_file in migrated.glob("slamon.db*"):
        shutil.copy(database_file, tmp_path / database_file.name)
    return tmp_path


def verifies(workdir: Path, plaintext: str) -> bool:
    engine = make_engine(f"sqlite:///{workdir / 'slamon.db'}")
    try:
        with Session(engine) as session:
            return tokens.verify(session, plaintext) is not None
    finally:
        engine.dispose()


def test_create_prints_the_token_once_and_a_hint(workdir: Path) -> None:
    result = slamon("token", "create", "grafana", "--scope", "read", cwd=workdir)
    assert result.returncode == 0, result.stderr
    [plaintext] = result.stdout.splitlines()
    assert plaintext.startswith("slm_")
    assert "cannot be shown again" in result.stderr
    assert "Authorization: Bearer" in result.stderr
    assert verifies(workdir, plaintext)


def test_list_shows_names_and_scopes_but_never_a_hash(workdir: Path) -> None:
    admin = slamon("token", "create", "ops", "--scope", "admin", cwd=workdir).stdout.strip()
    read = slamon("token", "create", "grafana", cwd=workdir).stdout.strip()
    result = slamon("token", "list", cwd=workdir)
    assert result.returncode == 0, result.stderr
    header, *rows = result.stdout.splitlines()
    assert header.split()[:2] == ["NAME", "SCOPE"]
    assert [row.split()[:2] for row in rows] == [["grafana", "read"], ["ops", "admin"]]
    for secret in (admin, read, tokens.hash_token(admin), tokens.hash_token(read)):
        assert secret not in result.stdout


def test_list_json_prints_one_object_per_token(workdir: Path) -> None:
    slamon("token", "create", "ops", "--scope", "admin", cwd=workdir)
    result = slamon("token", "list", "--json", cwd=workdir)
    assert result.returncode == 0, result.stderr
    [line] = result.stdout.splitlines()
    row = json.loads(line)
    assert set(row) == {"name", "scope", "created_at", "last_used_at", "revoked_at"}
    assert (row["name"], row["scope"], row["revoked_at"]) == ("ops", "admin", None)
    assert row["created_at"].endswith("Z")


def test_revoke_stops_the_token_and_list_shows_when(workdir: Path) -> None:
    plaintext = slamon("token", "create", "ci", cwd=workdir).stdout.strip()
    result = slamon("token", "revoke", "ci", cwd=workdir)
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("token 'ci' revoked at ")
    assert not verifies(workdir, plaintext)
    [line] = slamon("token", "list", "--json", cwd=workdir).stdout.splitlines()
    assert json.loads(line)["revoked_at"] is not None


@pytest.mark.parametrize(
    ("args", "message"),
    [
        pytest.param(
            ("token", "create", "ci"), "error: a token named 'ci' already exists", id="duplicate"
        ),
        pytest.param(
            ("token", "revoke", "ghost"),
            "error: no token named 'ghost' (see `slamon token list`)",
            id="unknown-name",
        ),
        pytest.param(
            ("token", "create", "x", "--scope", "root"),
            "Error: Invalid value for '--scope': 'root' is not one of 'read', 'admin', 'events'.",
            id="unknown-scope",
        ),
    ],
)
def test_mistakes_are_one_clear_line_and_a_nonzero_exit(
    workdir: Path, args: tuple[str, ...], message: str
) -> None:
    slamon("token", "create", "ci", cwd=workdir)
    result = slamon(*args, cwd=workdir)
    assert result.returncode != 0
    assert message in result.stderr.splitlines()
    assert "Traceback" not in result.stderr


def test_a_database_without_the_schema_asks_for_migrate(tmp_path: Path) -> None:
    result = slamon("token", "list", cwd=tmp_path)
    assert result.returncode == 1
    assert result.stderr.splitlines() == [
        "error: the database has no slamon schema yet: run `slamon migrate` first"
    ]
