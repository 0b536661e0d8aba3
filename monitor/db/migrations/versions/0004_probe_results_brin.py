"""probe_results.at: a BRIN index on PostgreSQL instead of a B-tree

Raw results arrive in time order; the time-range scans of rollup and pruning need only block
ranges, and the B-tree cost about 25 bytes per probe (bench/compare.py --only storage).

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-30 04:55:00
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op

revision: str = "0004"
down_revision: str | None = "0003"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    if op.get_bind().dialect.name != "postgresql":
        return  # SQLite has only B-trees: its index stays as it is
    op.drop_index("ix_probe_results_at", table_name="probe_results")
    op.create_index("ix_probe_results_at", "probe_results", ["at"], postgresql_using="brin")


def downgrade() -> None:
    if op.get_bind().dialect.name != "postgresql":
        return
    op.drop_index("ix_probe_results_at", table_name="probe_results")
    op.create_index("ix_probe_results_at", "probe_results", ["at"])
