"""channels: disabled after a dead-channel answer, with the answer and a digest of the config

A receiver that says the channel is dead (a revoked Slack token, a deleted Discord webhook)
disables it: ``disabled_at`` and ``last_error`` (redacted) say when and why, and
``config_digest`` (a salted hash of kind, URL and secret) lets a config change re-enable it.
Existing channels stay enabled. Batch mode, so SQLite runs both ways: it adds a column in place,
but dropping one (the downgrade) needs the table copied, which batch mode does.

Revision ID: 0007
Revises: 0006
Create Date: 2026-12-02 09:00:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0007"
down_revision: str | None = "0006"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("channels", schema=None) as batch_op:
        batch_op.add_column(sa.Column("disabled_at", sa.DateTime(timezone=True), nullable=True))
        batch_op.add_column(sa.Column("last_error", sa.Text(), nullable=True))
        batch_op.add_column(sa.Column("config_digest", sa.String(length=200), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("channels", schema=None) as batch_op:
        batch_op.drop_column("config_digest")
        batch_op.drop_column("last_error")
        batch_op.drop_column("disabled_at")
