"""watchdog pings: the last ping the leader sent to the watchdog URL, and how it went

One row, written by the leading scheduler's watchdog after each ping, so that every API
replica's /metrics tells when the outside service last heard from slamon. Not history: the
change log (0009) does not watch it.

Revision ID: 0013
Revises: 0012
Create Date: 2026-12-06 09:00:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0013"
down_revision: str | None = "0012"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "watchdog_pings",
        sa.Column("name", sa.String(length=40), nullable=False),
        sa.Column("holder", sa.String(length=200), nullable=False),
        sa.Column("attempted_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("pinged_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("error", sa.Text(), nullable=True),
        sa.PrimaryKeyConstraint("name", name=op.f("pk_watchdog_pings")),
    )


def downgrade() -> None:
    op.drop_table("watchdog_pings")
