"""account events: what a provider tells the account alone, and each source's checkpoint

``account_events`` holds one row per provider key (an AWS Health event ARN, an EC2 instance
event, an Azure tracking id, a GCP event name, a metadata-service notice), polled, pushed or
heard by an agent; ``account_sources`` keeps each polled source's checkpoint and record. The
history log (0009) watches account events like every other timeline a surface shows.

Revision ID: 0011
Revises: 0010
Create Date: 2026-12-05 06:40:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0011"
down_revision: str | None = "0010"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

TABLE = "account_events"
WATCHED = (
    "kind", "status", "starts_at", "ends_at", "title", "detail", "entities", "target", "accepted",
)  # fmt: skip


def upgrade() -> None:
    op.create_table(
        TABLE,
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("provider", sa.String(16), nullable=False),
        sa.Column("source", sa.String(100), nullable=False),
        sa.Column("key", sa.String(500), nullable=False),
        sa.Column("kind", sa.String(32), nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("starts_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("ends_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("region", sa.String(500), nullable=True),
        sa.Column("service", sa.String(100), nullable=True),
        sa.Column("title", sa.String(500), nullable=False),
        sa.Column("detail", sa.Text(), nullable=False),
        sa.Column("entities", sa.JSON(), nullable=False),
        sa.Column("target", sa.String(200), nullable=True),
        sa.Column("raw_type", sa.String(200), nullable=False),
        sa.Column("via", sa.String(16), nullable=False),
        sa.Column("readings", sa.Integer(), nullable=False),
        sa.Column("accepted", sa.Boolean(), nullable=False),
        sa.Column("first_seen_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("last_seen_at", sa.DateTime(timezone=True), nullable=False),
        sa.UniqueConstraint("provider", "key", name="uq_account_events_provider_key"),
    )
    op.create_index("ix_account_events_window", TABLE, ["starts_at", "ends_at"])
    op.create_table(
        "account_sources",
        sa.Column("name", sa.String(100), primary_key=True),
        sa.Column("kind", sa.String(32), nullable=False),
        sa.Column("checkpoint", sa.DateTime(timezone=True), nullable=True),
        sa.Column("last_polled_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("last_success_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("consecutive_failures", sa.Integer(), nullable=False),
        sa.Column("last_error", sa.Text(), nullable=True),
        sa.Column("events", sa.Integer(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
    )
    watched = ", ".join(WATCHED)
    if op.get_bind().dialect.name == "postgresql":
        op.execute(
            f"CREATE TRIGGER history_changed AFTER INSERT OR UPDATE OF {watched} OR DELETE "
            f"ON {TABLE} FOR EACH STATEMENT EXECUTE FUNCTION history_changed()"
        )
    else:
        for event, clause in (
            ("insert", "INSERT"), ("update", f"UPDATE OF {watched}"), ("delete", "DELETE"),
        ):  # fmt: skip
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
    op.drop_table("account_sources")
    op.drop_index("ix_account_events_window", TABLE)
    op.drop_table(TABLE)
