"""targets: recovery_confirmations, how many successes in a row end an outage

NULL (every existing target) keeps today's rule: as many successes as ``confirmations``
failures. 1 resolves on the first good probe, as Prometheus does, one quick re-probe sooner.
Batch mode, so SQLite runs both ways.

Revision ID: 0008
Revises: 0007
Create Date: 2026-12-03 07:00:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0008"
down_revision: str | None = "0007"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("targets", schema=None) as batch_op:
        batch_op.add_column(sa.Column("recovery_confirmations", sa.Integer(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("targets", schema=None) as batch_op:
        batch_op.drop_column("recovery_confirmations")
