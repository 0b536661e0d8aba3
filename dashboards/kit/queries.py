"""The slamon datasource and its raw SQL targets. The SQL is kept exactly as Grafana sends it;
tests/dashboards/test_dashboards.py runs every query on PostgreSQL."""

from __future__ import annotations

import textwrap
from typing import Literal

from grafana_foundation_sdk.cog import builder as cogbuilder
from grafana_foundation_sdk.cog import variants as cogvariants
from grafana_foundation_sdk.models import dashboard as model

DATASOURCE = model.DataSourceRef(type_val="grafana-postgresql-datasource", uid="slamon-postgres")
# What a variable's "All" puts in the SQL, verbatim: `'__all__' IN ($provider)` is then true.
ALL_VALUE = "'__all__'"

Format = Literal["table", "time_series"]


def sql(text: str) -> str:
    """A query written indented in a board's module, as Grafana will send it."""
    return textwrap.dedent(text).strip()


class SqlQuery(cogvariants.Dataquery):
    """A raw SQL target of the PostgreSQL datasource (the SDK has no model for it)."""

    def __init__(self, raw_sql: str, format_val: Format, ref_id: str = "A") -> None:
        self.raw_sql = raw_sql
        self.format_val = format_val
        self.ref_id = ref_id

    def to_json(self) -> dict[str, object]:
        return {
            "refId": self.ref_id,
            "datasource": DATASOURCE.to_json(),
            "editorMode": "code",
            "format": self.format_val,
            "rawQuery": True,
            "rawSql": self.raw_sql,
        }


class SqlTarget(cogbuilder.Builder[SqlQuery]):
    def __init__(self, raw_sql: str, format_val: Format) -> None:
        self._internal = SqlQuery(raw_sql, format_val)

    def build(self) -> SqlQuery:
        return self._internal
