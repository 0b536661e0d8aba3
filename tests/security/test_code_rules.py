"""Rules read off the source with ``ast``: no SQL built by string formatting, and secrets
(tokens, signatures) compared only in constant time."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
# The migrations (monitor/db/migrations) run fixed DDL written once and never take input; they
# lived outside the package until it shipped them, and are left out of the scan as before.
MIGRATIONS = ROOT / "monitor" / "db" / "migrations"
SOURCES = sorted(
    p
    for d in ("monitor", "workers")
    for p in (ROOT / d).rglob("*.py")
    if not p.is_relative_to(MIGRATIONS)
)
# Calls whose first argument is SQL text: SQLAlchemy's text()/exec_driver_sql()/DDL and the
# DB-API cursor's execute family (Connection.execute takes a text() or a construct).
SQL_CALLS = {"text", "exec_driver_sql", "execute", "executemany", "executescript", "DDL", "copy"}
# psycopg's composition quotes what it formats: ``sql.SQL("… {} …").format(sql.Identifier(x))``.
COMPOSERS = {"SQL"}
# Explicit allow-list, "path:line": only where the interpolated part is a compile-time constant
# identifier (a table name from a fixed tuple, never input). Empty: nothing needs it today.
ALLOWED: set[str] = set()


def formatting(node: ast.expr) -> str | None:
    """How ``node`` builds a string at run time, or None for a plain literal or a name."""
    if isinstance(node, ast.JoinedStr) and any(
        isinstance(v, ast.FormattedValue) for v in node.values
    ):
        return "f-string"
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mod):
        return "%-format"
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        return "concatenation"
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr in ("format", "join", "format_map")
        and not composed(node.func.value)
        and (node.func.attr != "join" or is_text(node.func.value))
    ):
        return f".{node.func.attr}()"
    return None


def is_text(node: ast.expr) -> bool:
    """A string literal (``", ".join``), not a query builder (``select(...).join``)."""
    return isinstance(node, ast.JoinedStr) or (
        isinstance(node, ast.Constant) and isinstance(node.value, str)
    )


def composed(node: ast.expr) -> bool:
    """``sql.SQL(...)`` or ``SQL(...)``: psycopg's composable, which quotes what it formats."""
    return isinstance(node, ast.Call) and called_name(node) in COMPOSERS


def called_name(call: ast.Call) -> str | None:
    if isinstance(call.func, ast.Attribute):
        return call.func.attr
    return call.func.id if isinstance(call.func, ast.Name) else None


def formatted_names(scope: ast.AST) -> dict[str, str]:
    """Names assigned a formatted string in ``scope``: ``sql = f"..."; text(sql)`` counts too."""
    out = {}
    for node in ast.walk(scope):
        if isinstance(node, ast.Assign) and (how := formatting(node.value)):
            out.update({t.id: how for t in node.targets if isinstance(t, ast.Name)})
    return out


def formatted_sql(source: str, filename: str) -> list[str]:
    """``file:line call(how)`` for each SQL call whose text is built by formatting."""
    tree = ast.parse(source)
    found = []
    scopes = [tree, *(n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef))]
    for scope in scopes:
        names = formatted_names(scope)
        for node in ast.walk(scope):
            if not (isinstance(node, ast.Call) and node.args and called_name(node) in SQL_CALLS):
                continue
            first = node.args[0]
            how = formatting(first) or (isinstance(first, ast.Name) and names.get(first.id))
            if how:
                found.append(f"{filename}:{node.lineno} {called_name(node)}({how})")
    return sorted(set(found))


def test_no_sql_is_built_by_string_formatting() -> None:
    found = []
    for path in SOURCES:
        relative = path.relative_to(ROOT).as_posix()
        found += formatted_sql(path.read_text(encoding="utf-8"), relative)
    assert [f for f in found if f.split(" ")[0] not in ALLOWED] == []
    assert len(SOURCES) > 50  # the scan saw the packages


@pytest.mark.parametrize(
    "source",
    [
        pytest.param('s.execute(text(f"SELECT * FROM t WHERE name = {name}"))', id="f-string"),
        pytest.param('q = f"COPY {t} FROM STDIN"\nwith c.copy(q) as w: pass', id="copy-f-string"),
        pytest.param('c.copy("COPY {} FROM STDIN".format(t))', id="copy-format"),
        pytest.param('c.exec_driver_sql("DELETE FROM t WHERE id = %s" % x)', id="percent"),
        pytest.param('cur.execute("SELECT " + column + " FROM t")', id="concatenation"),
        pytest.param('text("SELECT {} FROM t".format(col))', id="format"),
        pytest.param('c.execute(text("SELECT " + ", ".join(cols)))', id="join-concatenated"),
        pytest.param('sql = ", ".join(parts)\nc.execute(sql)', id="join-via-a-name"),
        pytest.param('def f(x):\n    sql = f"DROP TABLE {x}"\n    c.execute(sql)', id="via-a-name"),
    ],
)
def test_the_scan_catches_each_way_of_formatting_sql(source: str) -> None:
    assert formatted_sql(source, "example.py") != []


def test_a_query_builders_join_is_not_string_formatting() -> None:
    source = "q = select(A).join(B, B.id == A.b_id)\nsession.execute(q)"
    assert formatted_sql(source, "example.py") == []


@pytest.mark.parametrize(
    "source",
    [
        pytest.param(
            's.execute(text("SELECT * FROM t WHERE name = :name"), {"name": n})', id="bound"
        ),
        pytest.param('cur.execute("PRAGMA foreign_keys=ON")', id="literal"),
        pytest.param("s.execute(select(T).where(T.name == name))", id="construct"),
        pytest.param(
            'c.copy(sql.SQL("COPY {} FROM STDIN").format(sql.Identifier(t)))', id="composed"
        ),
    ],
)
def test_the_scan_passes_parameterised_sql(source: str) -> None:
    assert formatted_sql(source, "example.py") == []


# --------------------------------------------------------------------------- constant time

SECRET_WORDS = ("token", "digest", "signature", "secret", "hash", "expected")
# Modules that check a secret the caller presents.
CHECKERS = ["monitor/tokens.py", "monitor/api/auth.py", "monitor/api/heartbeats.py"]
CHECKERS += ["monitor/alerts/channels/webhook.py"]


def secret_equality(source: str) -> list[str]:
    """``==``/``!=`` comparisons that touch a secret-looking value, except SQL column
    expressions (``ApiToken.token_hash == digest`` is a database lookup by hash, not a check)."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.Compare):
            continue
        if not any(isinstance(op, ast.Eq | ast.NotEq) for op in node.ops):
            continue
        text = ast.unparse(node)
        sides = [node.left, *node.comparators]
        is_column = any(
            isinstance(s, ast.Attribute)
            and isinstance(s.value, ast.Name)
            and s.value.id[0].isupper()
            for s in sides
        )
        if any(word in text.lower() for word in SECRET_WORDS) and not is_column:
            found.append(f"{node.lineno}: {text}")
    return found


@pytest.mark.parametrize("relative", CHECKERS)
def test_secrets_are_never_compared_with_equals(relative: str) -> None:
    assert secret_equality((ROOT / relative).read_text(encoding="utf-8")) == []


def test_the_equality_scan_catches_a_plain_comparison() -> None:
    assert secret_equality("ok = stored_hash == hash_token(presented)") != []
    assert secret_equality("q = select(A).where(ApiToken.token_hash == digest)") == []


@pytest.mark.parametrize(
    ("relative", "function"),
    [
        pytest.param("monitor/tokens.py", "verify", id="api-token"),
        pytest.param("monitor/tokens.py", "heartbeat_token_matches", id="heartbeat-token"),
        pytest.param("monitor/alerts/channels/webhook.py", "verify_signature", id="webhook"),
    ],
)
def test_each_secret_check_ends_in_hmac_compare_digest(relative: str, function: str) -> None:
    tree = ast.parse((ROOT / relative).read_text(encoding="utf-8"))
    body = next(n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef) and n.name == function)
    calls = {ast.unparse(n.func) for n in ast.walk(body) if isinstance(n, ast.Call)}
    assert "hmac.compare_digest" in calls
