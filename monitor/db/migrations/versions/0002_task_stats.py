"""task_stats: Celery task run counts and durations for /metrics

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-30 03:40:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0002"
down_revision: str | None = "0001"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "task_stats",
        sa.Column("task", sa.String(length=200), nullable=False),
        sa.Column("runs", sa.BigInteger(), nullable=False),
        sa.Column("failures", sa.BigInteger(), nullable=False),
        sa.Column("seconds_total", sa.Float(), nullable=False),
        sa.Column("last_seconds", sa.Float(), nullable=False),
        sa.Column("last_finished_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("task", name=op.f("pk_task_stats")),
    )


def downgrade() -> None:
    op.drop_table("task_stats")
