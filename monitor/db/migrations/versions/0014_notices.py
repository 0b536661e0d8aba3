"""notices: an operator's notices and maintenance announced ahead

One row per notice posted through the API or the CLI (``monitor.notices``): its words, kind
(notice | maintenance), severity, when it shows (``starts_at`` may be ahead: announced; without
``ends_at`` it shows until ended), ``ended_at`` when an operator ended it early, its scope
(targets, or a provider/region/pool) and who posted and ended it. A scoped maintenance notice
points at the ``maintenance_windows`` row it made for the SLA arithmetic. The history log (0009)
watches notices like every other table the status page shows, so a posted or ended notice shows
at once.

Revision ID: 0014
Revises: 0013
Create Date: 2026-12-07 09:00:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0014"
down_revision: str | None = "0013"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

TABLE = "notices"


def upgrade() -> None:
    op.create_table(
        TABLE,
        sa.Column("title", sa.String(200), nullable=False),
        sa.Column("body", sa.Text(), nullable=False),
        sa.Column("kind", sa.String(16), nullable=False),
        sa.Column("severity", sa.String(16), nullable=False),
        sa.Column("starts_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("ends_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("ended_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("provider", sa.String(64), nullable=True),
        sa.Column("region", sa.String(64), nullable=True),
        sa.Column("pool", sa.String(200), nullable=True),
        sa.Column("targets", sa.JSON(), nullable=False),
        sa.Column("created_by", sa.String(200), nullable=True),
        sa.Column("ended_by", sa.String(200), nullable=True),
        sa.Column("maintenance_window_id", sa.Integer(), nullable=True),
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.CheckConstraint("kind IN ('notice', 'maintenance')", name=op.f("ck_notices_kind")),
        sa.ForeignKeyConstraint(
            ["maintenance_window_id"],
            ["maintenance_windows.id"],
            name=op.f("fk_notices_maintenance_window_id_maintenance_windows"),
            ondelete="SET NULL",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_notices")),
    )
    op.create_index("ix_notices_starts_at", TABLE, ["starts_at"])
    if op.get_bind().dialect.name == "postgresql":
        op.execute(
            f"CREATE TRIGGER history_changed AFTER INSERT OR UPDATE OR DELETE ON {TABLE} "
            "FOR EACH STATEMENT EXECUTE FUNCTION history_changed()"
        )
    else:
        for event, clause in (("insert", "INSERT"), ("update", "UPDATE"), ("delete", "DELETE")):
            op.execute(
                f"CREATE TRIGGER history_{TABLE}_{event} AFTER {clause} ON {TABLE} "
                f"BEGIN INSERT INTO history_changes (source) VALUES ('{TABLE}'); END"
            )


def downgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        op.execute(f"DROP TRIGGER IF EXISTS history_changed ON {TABLE}")
    else:
        for event in ("insert", "update", "delete"):
            op.execute(f"DROP TRIGGER IF EXISTS history_{TABLE}_{event}")
    op.drop_index("ix_notices_starts_at", TABLE)
    op.drop_table(TABLE)
