"""discovery: targets found by sweeping the clouds, and how each one's life ended

Targets gain ``external_id`` (the cloud's own id), ``capacity`` (on-demand, spot, reserved,
unknown), ``discovered_by`` (the discovery source), ``last_seen_at`` and ``missing_sweeps``
(the sweep's memory) and ``ended_by`` / ``end_detail`` (who ended the life: user, preempted,
provider, unknown; the cloud's own words). ``discovery_sources`` keeps each source's sweeps.

The history log's trigger on targets is recreated to watch the new columns a surface shows
(capacity, the end, the external id); the sweep's own memory (last_seen_at, missing_sweeps)
logs nothing, as the probes' slot does not.

Revision ID: 0010
Revises: 0009
Create Date: 2026-12-04 15:00:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0010"
down_revision: str | None = "0009"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

BEFORE = (
    "name", "kind", "provider", "region", "zone", "pool", "instance_type", "gpus",
    "hourly_price", "sla_policy", "interval_s", "timeout_s", "created_at", "retired_at",
)  # fmt: skip
AFTER = (*BEFORE, "external_id", "capacity", "discovered_by", "ended_by", "end_detail")


def upgrade() -> None:
    op.add_column("targets", sa.Column("external_id", sa.String(300), nullable=True))
    op.add_column(
        "targets",
        sa.Column("capacity", sa.String(16), nullable=False, server_default="unknown"),
    )
    op.add_column("targets", sa.Column("discovered_by", sa.String(100), nullable=True))
    op.add_column(
        "targets", sa.Column("last_seen_at", sa.DateTime(timezone=True), nullable=True)
    )
    op.add_column(
        "targets",
        sa.Column("missing_sweeps", sa.Integer(), nullable=False, server_default="0"),
    )
    op.add_column("targets", sa.Column("ended_by", sa.String(16), nullable=True))
    op.add_column("targets", sa.Column("end_detail", sa.String(500), nullable=True))
    op.create_index("ix_targets_external_id", "targets", ["external_id"])
    op.create_index("ix_targets_discovered_by", "targets", ["discovered_by"])
    op.create_table(
        "discovery_sources",
        sa.Column("name", sa.String(100), primary_key=True),
        sa.Column("kind", sa.String(32), nullable=False),
        sa.Column("last_swept_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("last_success_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("consecutive_failures", sa.Integer(), nullable=False),
        sa.Column("last_error", sa.Text(), nullable=True),
        sa.Column("instances", sa.Integer(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
    )
    _watch_targets(AFTER)


def downgrade() -> None:
    _watch_targets(BEFORE)
    op.drop_table("discovery_sources")
    op.drop_index("ix_targets_discovered_by", "targets")
    op.drop_index("ix_targets_external_id", "targets")
    with op.batch_alter_table("targets", schema=None) as batch_op:
        for column in (
            "end_detail", "ended_by", "missing_sweeps", "last_seen_at", "discovered_by",
            "capacity", "external_id",
        ):  # fmt: skip
            batch_op.drop_column(column)


def _watch_targets(columns: Sequence[str]) -> None:
    """The history log's trigger on target updates, watching ``columns``."""
    watched = ", ".join(columns)
    if op.get_bind().dialect.name == "postgresql":
        op.execute("DROP TRIGGER IF EXISTS history_changed ON targets")
        op.execute(
            f"CREATE TRIGGER history_changed AFTER INSERT OR UPDATE OF {watched} OR DELETE "
            "ON targets FOR EACH STATEMENT EXECUTE FUNCTION history_changed()"
        )
    else:
        op.execute("DROP TRIGGER IF EXISTS history_targets_update")
        op.execute(
            f"CREATE TRIGGER history_targets_update AFTER UPDATE OF {watched} ON targets "
            "BEGIN INSERT INTO history_changes (source) VALUES ('targets'); END"
        )
