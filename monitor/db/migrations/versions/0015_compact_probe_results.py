"""compact probe records: ``probe_results`` holds minutes, ``probe_evidence`` what is kept whole

The recorder marks each raw row ``routine`` (a success that repeats the one before at its
vantage) or not (a failure, an unknown, a first success, a recovery). Once a minute's rollup is
final, the rollup copies the rows kept whole into ``probe_evidence`` and deletes every row of
that minute from ``probe_results`` (``monitor.probes.rollup.compact_raw``): the minute's rollup
row holds the routine ones (count and latency digest). So ``probe_results`` holds minutes of
rows, and its index pages empty whole and are reused; a kept row left among deleted ones would
pin its index pages (measured on PostgreSQL: a day of 1,000 targets every 5 s left 300 MB of
half-empty pages in the ``id`` and ``at`` indexes). Rows recorded before this migration are not
marked (NULL): compaction leaves them, and pruning ages them out at the raw retention.

- ``probe_results.routine``; a partial index of the marked rows by time, what compaction takes.
- ``probe_evidence``: the kept rows, appended in time order, pruned oldest first (B-trees: its
  pruned space is reused, so it is not kept in time order either).
- PostgreSQL: the time index of ``probe_results`` a B-tree again (0004 made it BRIN; rows no
  longer lie in time order), and autovacuum frees its deleted rows by their number (20,000), not
  by a fifth of the table, which the unmarked rows of the weeks before would make millions.
- SQLite: ``probe_rollups`` becomes ``WITHOUT ROWID`` (its rows in its primary key's B-tree: no
  rowid and no separate key index, 173 → 132 bytes a row; minute rows are now the record of most
  probes), rebuilt by a batch copy.

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
EVIDENCE = "probe_evidence"
MARKED = sa.text("routine IS NOT NULL")
VACUUM_SETTINGS = {"autovacuum_vacuum_scale_factor": "0", "autovacuum_vacuum_threshold": "20000"}
VACUUM_WHEN = ", ".join(f"{k} = {v}" for k, v in VACUUM_SETTINGS.items())


def upgrade() -> None:
    op.add_column(TABLE, sa.Column("routine", sa.Boolean(), nullable=True))
    op.create_index(
        "ix_probe_results_marked_at", TABLE, ["at"], sqlite_where=MARKED, postgresql_where=MARKED
    )
    op.create_table(
        EVIDENCE,
        sa.Column("id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False),
        sa.Column("target_id", sa.Integer(), nullable=False),
        sa.Column("vantage", sa.String(length=100), nullable=False),
        sa.Column("at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("ok", sa.Boolean(), nullable=True),
        sa.Column("usable", sa.Boolean(), nullable=True),
        sa.Column("latency_ms", sa.Float(), nullable=True),
        sa.Column("status_code", sa.Integer(), nullable=True),
        sa.Column("error_kind", sa.String(length=32), nullable=True),
        sa.Column("error", sa.Text(), nullable=True),
        sa.Column("detail", sa.JSON(), nullable=True),
        sa.ForeignKeyConstraint(
            ["target_id"],
            ["targets.id"],
            name=op.f("fk_probe_evidence_target_id_targets"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_probe_evidence")),
    )
    op.create_index("ix_probe_evidence_target_at", EVIDENCE, ["target_id", "at"])
    op.create_index("ix_probe_evidence_at", EVIDENCE, ["at"])
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
    # the kept rows go back among the raw rows, as they were recorded
    columns = "target_id, vantage, at, ok, usable, latency_ms, status_code, error_kind, error, detail"
    op.execute(f"INSERT INTO {TABLE} ({columns}) SELECT {columns} FROM {EVIDENCE} ORDER BY at")
    op.drop_index("ix_probe_evidence_at", table_name=EVIDENCE)
    op.drop_index("ix_probe_evidence_target_at", table_name=EVIDENCE)
    op.drop_table(EVIDENCE)
    op.drop_index("ix_probe_results_marked_at", table_name=TABLE)
    with op.batch_alter_table(TABLE) as batch:
        batch.drop_column("routine")


def _rebuild_rollups(*, with_rowid: bool) -> None:
    """SQLite: copy ``probe_rollups`` into a table of the other kind (its indexes with it)."""
    with op.batch_alter_table(
        "probe_rollups", recreate="always", table_kwargs={"sqlite_with_rowid": with_rowid}
    ):
        pass
