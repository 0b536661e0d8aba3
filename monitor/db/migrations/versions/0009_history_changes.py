"""history_changes: a log the database writes whenever what happened changes

Triggers on the tables every surface reads (outages, observed windows, targets, target verdicts,
incidents, maintenance windows, alerts, channels) add a row to ``history_changes`` in the
writing transaction, so a reader that cached month-to-date figures knows, from one cheap
query, whether anything it showed may have changed: no writer can forget to say so. The
probes' steady traffic (an observed window growing, a streak counting, a slot moving on, a
heartbeat arriving) writes no row; readers bound their cache's age for that.

PostgreSQL: statement-level triggers (one row per writing statement), a row trigger with a
WHEN clause for target verdicts; the log is insert-only, so concurrent writers never wait on
one another. SQLite: row triggers (one writer at a time anyway). Old rows are pruned by the
rollup task.

Revision ID: 0009
Revises: 0008
Create Date: 2026-12-04 03:00:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0009"
down_revision: str | None = "0008"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# table -> the columns whose update changes what a surface shows (None: any update)
WATCHED: dict[str, tuple[str, ...] | None] = {
    "outages": None,
    "observed_windows": ("start", "target_id"),
    "targets": (
        "name",
        "kind",
        "provider",
        "region",
        "zone",
        "pool",
        "instance_type",
        "gpus",
        "hourly_price",
        "sla_policy",
        "interval_s",
        "timeout_s",
        "created_at",
        "retired_at",
    ),
    "incidents": None,
    "maintenance_windows": None,
    "alerts": ("state", "rule", "severity", "summary", "suppressed", "resolved_at"),
    "channels": ("enabled", "disabled_at", "last_error"),
}
VERDICTS = "target_states"  # only a changed state counts, not a probe counted


def upgrade() -> None:
    op.create_table(
        "history_changes",
        sa.Column("id", sa.Integer(), primary_key=True, autoincrement=True),
        sa.Column("source", sa.String(32), nullable=False),
    )
    if op.get_bind().dialect.name == "postgresql":
        _postgresql_triggers()
    else:
        _sqlite_triggers()


def downgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        for table in (*WATCHED, VERDICTS):
            op.execute(f"DROP TRIGGER IF EXISTS history_changed ON {table}")
        op.execute(f"DROP TRIGGER IF EXISTS history_verdict_added ON {VERDICTS}")
        op.execute("DROP FUNCTION IF EXISTS history_changed()")
    else:
        for table in (*WATCHED, VERDICTS):
            for event in ("insert", "update", "delete"):
                op.execute(f"DROP TRIGGER IF EXISTS history_{table}_{event}")
    op.drop_table("history_changes")


def _postgresql_triggers() -> None:
    op.execute(
        """
        CREATE FUNCTION history_changed() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
            INSERT INTO history_changes (source) VALUES (TG_TABLE_NAME);
            RETURN NULL;
        END $$
        """
    )
    for table, columns in WATCHED.items():
        update = "UPDATE" if columns is None else f"UPDATE OF {', '.join(columns)}"
        op.execute(
            f"CREATE TRIGGER history_changed AFTER INSERT OR {update} OR DELETE ON {table} "
            "FOR EACH STATEMENT EXECUTE FUNCTION history_changed()"
        )
    op.execute(
        f"CREATE TRIGGER history_changed AFTER UPDATE OF state ON {VERDICTS} FOR EACH ROW "
        "WHEN (NEW.vantage = '*' AND OLD.state IS DISTINCT FROM NEW.state) "
        "EXECUTE FUNCTION history_changed()"
    )
    op.execute(
        f"CREATE TRIGGER history_verdict_added AFTER INSERT ON {VERDICTS} FOR EACH ROW "
        "WHEN (NEW.vantage = '*') EXECUTE FUNCTION history_changed()"
    )


def _sqlite_triggers() -> None:
    for table, columns in WATCHED.items():
        of = "" if columns is None else f" OF {', '.join(columns)}"
        for event, clause in (("insert", "INSERT"), ("update", f"UPDATE{of}"), ("delete", "DELETE")):
            op.execute(
                f"CREATE TRIGGER history_{table}_{event} AFTER {clause} ON {table} "
                f"BEGIN INSERT INTO history_changes (source) VALUES ('{table}'); END"
            )
    for event, clause, when in (
        ("insert", "INSERT", "NEW.vantage = '*'"),
        ("update", "UPDATE OF state", "NEW.vantage = '*' AND OLD.state IS NOT NEW.state"),
    ):
        op.execute(
            f"CREATE TRIGGER history_{VERDICTS}_{event} AFTER {clause} ON {VERDICTS} "
            f"WHEN {when} BEGIN INSERT INTO history_changes (source) VALUES ('{VERDICTS}'); END"
        )
