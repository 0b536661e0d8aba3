"""vantages: each probing vantage's agreement with the quorum (the vantage_blind alert)

Revision ID: 0005
Revises: 0004
Create Date: 2026-12-01 23:40:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0005"
down_revision: str | None = "0004"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "vantages",
        sa.Column("name", sa.String(length=100), nullable=False),
        sa.Column("last_probe_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("targets", sa.Integer(), nullable=False),
        sa.Column("disagreeing", sa.Integer(), nullable=False),
        sa.Column("last_agreed_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("disagreeing_since", sa.DateTime(timezone=True), nullable=True),
        sa.Column("blind_since", sa.DateTime(timezone=True), nullable=True),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("name", name=op.f("pk_vantages")),
    )


def downgrade() -> None:
    op.drop_table("vantages")
