"""scheduler lease and schedule slots: any number of schedulers, one leader, fenced messages

``scheduler_leases`` holds the lease the schedulers elect their leader by (its fencing token
grows at each change of hands); ``schedule_slots`` keeps, per periodic task, the last slot the
leader sent and the last one a worker admitted, so that no slot runs twice and a new leader
carries on the schedule where the old one stopped. Neither is history: the change log (0009)
does not watch them.

Revision ID: 0012
Revises: 0011
Create Date: 2026-12-06 07:00:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0012"
down_revision: str | None = "0011"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "scheduler_leases",
        sa.Column("name", sa.String(40), primary_key=True),
        sa.Column("holder", sa.String(200), nullable=False),
        sa.Column("token", sa.BigInteger(), nullable=False),
        sa.Column("acquired_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("renewed_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("expires_at", sa.DateTime(timezone=True), nullable=False),
    )
    op.create_table(
        "schedule_slots",
        sa.Column("name", sa.String(80), primary_key=True),
        sa.Column("task", sa.String(200), nullable=False),
        sa.Column("period_s", sa.Float(), nullable=True),
        sa.Column("sent_slot", sa.DateTime(timezone=True), nullable=True),
        sa.Column("sent_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("sent_token", sa.BigInteger(), nullable=True),
        sa.Column("done_slot", sa.DateTime(timezone=True), nullable=True),
        sa.Column("done_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("fenced", sa.BigInteger(), nullable=False, server_default="0"),
        sa.Column("repeated", sa.BigInteger(), nullable=False, server_default="0"),
    )


def downgrade() -> None:
    op.drop_table("schedule_slots")
    op.drop_table("scheduler_leases")
