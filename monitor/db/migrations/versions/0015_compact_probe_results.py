"""compact probe records: ``probe_results.routine`` and the indexes compaction needs

A routine row is a success that repeats the one before it at its vantage; its minute's rollup
holds it, and the rollup deletes it once that minute is final (``monitor.probes.rollup``). So
raw rows live minutes, not the raw retention, but for failures, unknowns and the first success
after them, kept whole. The partial index lists exactly the rows compaction deletes. Rows no
longer lie on disk in time order (deleted space is reused), which a BRIN index needs: on
PostgreSQL the time index becomes a B-tree again (0004 made it BRIN), small now that the table
holds minutes of rows, and autovacuum frees deleted rows by their number, not by a share of the
table. Existing rows are not marked routine: they age out at the raw retention.

Minute rollups are now the record of most probes; on SQLite ``probe_rollups`` becomes a
``WITHOUT ROWID`` table (its rows stored in its primary key's B-tree: no rowid and no separate
key index, 173 → 132 bytes a row), rebuilt by a batch copy.

Revision ID: 0015
Revises: 0014
Create Date: 2026-12-08 09:00:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0015"
down_revision: str | None = "0014"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

TABLE = "probe_results"
# Compaction deletes a minute of routine rows every minute (12,000 at 1,000 targets every 5 s).
# PostgreSQL's default waits for dead rows to reach a fifth of the table, which the kept rows of
# two weeks make hundreds of thousands: the table would swell by that much before its space is
# reused. Counted in rows instead, autovacuum frees it every minute or two.
VACUUM_SETTINGS = {"autovacuum_vacuum_scale_factor": "0", "autovacuum_vacuum_threshold": "20000"}
VACUUM_WHEN = ", ".join(f"{k} = {v}" for k, v in VACUUM_SETTINGS.items())


def upgrade() -> None:
    op.add_column(TABLE, sa.Column("routine", sa.Boolean(), nullable=True))
    op.create_index(
        "ix_probe_results_routine_at",
        TABLE,
        ["at"],
        sqlite_where=sa.text("routine"),
        postgresql_where=sa.text("routine"),
    )
    if op.get_bind().dialect.name == "postgresql":
        op.drop_index("ix_probe_results_at", table_name=TABLE)
        op.create_index("ix_probe_results_at", TABLE, ["at"])
        op.execute(f"ALTER TABLE {TABLE} SET ({VACUUM_WHEN})")
    else:
        _rebuild_rollups(with_rowid=False)


def downgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        op.execute(f"ALTER TABLE {TABLE} RESET ({', '.join(VACUUM_SETTINGS)})")
        op.drop_index("ix_probe_results_at", table_name=TABLE)
        op.create_index("ix_probe_results_at", TABLE, ["at"], postgresql_using="brin")
    else:
        _rebuild_rollups(with_rowid=True)
    op.drop_index("ix_probe_results_routine_at", table_name=TABLE)
    with op.batch_alter_table(TABLE) as batch:
        batch.drop_column("routine")


def _rebuild_rollups(*, with_rowid: bool) -> None:
    """SQLite: copy ``probe_rollups`` into a table of the other kind (its indexes with it)."""
    with op.batch_alter_table(
        "probe_rollups", recreate="always", table_kwargs={"sqlite_with_rowid": with_rowid}
    ):
        pass
