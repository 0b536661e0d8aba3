"""probe_rollups by resolution and time: the fleet dashboards read one resolution over a time
range for every target (the primary key leads with the target), and pruning deletes by time

Revision ID: 0006
Revises: 0005
Create Date: 2026-12-02 05:00:00
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op

revision: str = "0006"
down_revision: str | None = "0005"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_index(
        "ix_probe_rollups_resolution_bucket", "probe_rollups", ["resolution", "bucket_start"]
    )


def downgrade() -> None:
    op.drop_index("ix_probe_rollups_resolution_bucket", table_name="probe_rollups")
