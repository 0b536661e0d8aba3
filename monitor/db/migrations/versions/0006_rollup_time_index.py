"""dashboards at month scale: probe_rollups by resolution and time, and sort memory for
Grafana's role

The fleet dashboards read one resolution over a time range for every target (the primary key
leads with the target); the index carries the columns they aggregate, so on PostgreSQL a month
of hour rollups is read from the index alone once vacuumed. Pruning deletes by time too.

Grafana's panels group hundreds of thousands of rollup rows; with PostgreSQL's default 4 MB of
work_mem those sorts spill to disk (1.3 s instead of 0.5 s for a month at 1,000 targets,
bench/dashboard_panels.py). On PostgreSQL, when ``slamon_grafana`` exists and the migrating user
may alter it, this database gives the role 32 MB (per sort, per panel query).

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

COVERED = ["target_id", "count", "failures", "unknown", "latency_p95_ms"]

# Only when the role exists and the migrating user may alter it; {action} is SET … or RESET ….
ROLE_WORK_MEM = """
DO $$
BEGIN
    IF EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'slamon_grafana')
       AND (SELECT rolsuper OR rolcreaterole FROM pg_roles WHERE rolname = current_user) THEN
        EXECUTE format('ALTER ROLE slamon_grafana IN DATABASE %I {action}', current_database());
    END IF;
END $$
"""


def upgrade() -> None:
    op.create_index(
        "ix_probe_rollups_resolution_bucket",
        "probe_rollups",
        ["resolution", "bucket_start"],
        postgresql_include=COVERED,
    )
    if op.get_bind().dialect.name == "postgresql":
        op.execute(ROLE_WORK_MEM.format(action="SET work_mem = ''32MB''"))  # quoted in a literal


def downgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        op.execute(ROLE_WORK_MEM.format(action="RESET work_mem"))
    op.drop_index("ix_probe_rollups_resolution_bucket", table_name="probe_rollups")
