"""The monthly report as one CSV file that a spreadsheet opens as it is.

Layout: blocks of rows separated by an empty row. Every row's first column names its section;
each block starts with a header row whose first cell is the word ``section`` and whose other cells
name the columns (the model's field names), so filtering column A on ``target`` gives the targets
table. Blocks, in order:

=========  ==========================================================================
section    columns
=========  ==========================================================================
report     month, period_start, period_end, generated_at, policy_hash
provider   every :class:`ProviderReport` field (slug, name, sla, target_pct, uptime_pct,
           credit_pct, credit_amount, claim_deadline, the three ledgers, …, rank)
target     every :class:`TargetReport` field except ``outages`` and ``exclusions``
outage     target (the target's name), then every :class:`OutageRow` field except
           ``evidence``
evidence   target, outage (the outage's number among the target's outage rows, from 1),
           then every :class:`EvidenceRow` field: the account events that are the provider's
           record of that outage
exclusion  target, then every :class:`ExclusionRow` field: the downtime the target's policy
           left out on the provider's record, and why
pool       every :class:`PoolReport` field
incident   every :class:`IncidentRow` field (``regions`` joined with ``;``)
note       text
work       every :class:`WorkRow` field: price / performance / stability per provider and
           instance type (effective and list price per million units of work)
ledger     every :class:`LedgerRow` field: the interruption ledger per provider, instance type
           and capacity (instance-hours, preemptions, provider ends, per 1,000 h with its
           interval; ``small_sample`` as ``true``/``false``)
policy     key, value (one row per top-level policy setting; the value as JSON)
=========  ==========================================================================

Cells: an empty cell is "not known" (``None``); floats are written with ``repr`` so :func:`parse`
reads back exactly the same number; times are ISO 8601 UTC with ``Z``. Text that a spreadsheet
would run as a formula (starting with ``=``, ``+``, ``-``, ``@``, tab or CR) is prefixed with
``'`` — as is text already starting with ``'`` — and :func:`parse` strips that prefix again.
Target names are unique in a report (the config enforces it), so outages refer to them by name.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterable, Iterator, Sequence
from datetime import datetime
from typing import Any

from monitor.reports.model import (
    EvidenceRow,
    ExclusionRow,
    IncidentRow,
    LedgerRow,
    MonthlyReport,
    OutageRow,
    PoolReport,
    ProviderReport,
    TargetReport,
    WorkRow,
)
from monitor.reports.render.codec import format_time, hints, optional_of
from monitor.sla.times import parse_aware

CONTENT_TYPE = "text/csv; charset=utf-8"
REPORT_COLUMNS = ("month", "period_start", "period_end", "generated_at", "policy_hash")
_FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r", "'")
# fields holding rows of their own, written as sections of their own
TARGET_NESTED = frozenset({"outages", "exclusions"})
OUTAGE_NESTED = frozenset({"evidence"})

Row = list[str]


def render(report: MonthlyReport) -> bytes:
    """UTF-8 CSV (with a BOM so spreadsheets pick the encoding), CRLF line ends."""
    out = io.StringIO()
    writer = csv.writer(out)
    for block in _blocks(report):
        writer.writerows(block)
        writer.writerow([])
    return ("\ufeff" + out.getvalue()).encode()


def parse(data: bytes) -> MonthlyReport:
    """Read a file written by :func:`render` back into an equal report; ``ValueError`` if not."""
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise ValueError(f"not a UTF-8 CSV report: {exc}") from None
    sections: dict[str, list[dict[str, str]]] = {}
    header: Row = []
    for line, row in enumerate(csv.reader(io.StringIO(text)), start=1):
        if not any(row):
            continue
        if row[0] == "section":
            header = row[1:]
        elif not header:
            raise ValueError(f"line {line}: not a slamon CSV report (no 'section' header row)")
        elif len(row) - 1 != len(header):
            raise ValueError(f"line {line}: {len(row) - 1} cells under {len(header)} columns")
        else:
            sections.setdefault(row[0], []).append(dict(zip(header, row[1:], strict=True)))
    return _assemble(sections)


# --- writing ----------------------------------------------------------------------------------


def _blocks(report: MonthlyReport) -> Iterator[list[Row]]:
    yield _block("report", REPORT_COLUMNS, [[_cell(getattr(report, c)) for c in REPORT_COLUMNS]])
    yield _dataclass_block("provider", ProviderReport, report.providers)
    yield _dataclass_block("target", TargetReport, report.targets, skip=TARGET_NESTED)
    outage_rows = [
        [_cell(t.name), *_cells(o, OutageRow, OUTAGE_NESTED)]
        for t in report.targets
        for o in t.outages
    ]
    yield _block("outage", ("target", *_names(OutageRow, OUTAGE_NESTED)), outage_rows)
    evidence_rows = [
        [_cell(t.name), str(n), *_cells(e, EvidenceRow)]
        for t in report.targets
        for n, o in enumerate(t.outages, start=1)
        for e in o.evidence
    ]
    yield _block("evidence", ("target", "outage", *_names(EvidenceRow)), evidence_rows)
    exclusion_rows = [
        [_cell(t.name), *_cells(x, ExclusionRow)] for t in report.targets for x in t.exclusions
    ]
    yield _block("exclusion", ("target", *_names(ExclusionRow)), exclusion_rows)
    yield _dataclass_block("pool", PoolReport, report.pools)
    yield _dataclass_block("incident", IncidentRow, report.incidents)
    yield _block("note", ("text",), [[_cell(n)] for n in report.notes])
    yield _dataclass_block("work", WorkRow, report.work)
    yield _dataclass_block("ledger", LedgerRow, report.ledger)
    policy = [[_cell(str(k)), _cell(json.dumps(v))] for k, v in report.policy.items()]
    yield _block("policy", ("key", "value"), policy)


def _block(section: str, columns: Sequence[str], rows: Iterable[Row]) -> list[Row]:
    return [["section", *columns], *([section, *r] for r in rows)]


def _dataclass_block(
    section: str, cls: type[Any], items: Iterable[Any], skip: frozenset[str] = frozenset()
) -> list[Row]:
    return _block(section, _names(cls, skip), [_cells(i, cls, skip) for i in items])


def _names(cls: type[Any], skip: frozenset[str] = frozenset()) -> tuple[str, ...]:
    return tuple(name for name, _ in hints(cls) if name not in skip)


def _cells(item: Any, cls: type[Any], skip: frozenset[str] = frozenset()) -> Row:
    return [_cell(getattr(item, name)) for name in _names(cls, skip)]


def _cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, datetime):
        return format_time(value)
    if isinstance(value, float):
        return repr(value)
    if isinstance(value, tuple):
        return _text(";".join(value))
    if isinstance(value, str):
        return _text(value)
    return str(value)


def _text(value: str) -> str:
    return "'" + value if value.startswith(_FORMULA_STARTS) else value


# --- reading ----------------------------------------------------------------------------------


def _assemble(sections: dict[str, list[dict[str, str]]]) -> MonthlyReport:
    heads = sections.get("report", [])
    if len(heads) != 1:
        raise ValueError("not a slamon CSV report: expected exactly one 'report' row")
    evidence: dict[tuple[str, int], list[EvidenceRow]] = {}
    for row in sections.get("evidence", []):
        key = (_untext(row["target"]), _number(row["outage"]))
        evidence.setdefault(key, []).append(_read(EvidenceRow, row))
    outages: dict[str, list[OutageRow]] = {}
    for row in sections.get("outage", []):
        name = _untext(row["target"])
        found = outages.setdefault(name, [])
        cited = tuple(evidence.pop((name, len(found) + 1), ()))
        found.append(_read(OutageRow, row, evidence=cited))
    if evidence:
        raise ValueError(f"evidence for unknown outages: {sorted(evidence)}")
    exclusions: dict[str, list[ExclusionRow]] = {}
    for row in sections.get("exclusion", []):
        exclusions.setdefault(_untext(row["target"]), []).append(_read(ExclusionRow, row))
    targets = tuple(
        _read(
            TargetReport,
            row,
            outages=tuple(outages.pop(_untext(row["name"]), ())),
            exclusions=tuple(exclusions.pop(_untext(row["name"]), ())),
        )
        for row in sections.get("target", [])
    )
    if outages:
        raise ValueError(f"outages of unknown targets: {sorted(outages)}")
    if exclusions:
        raise ValueError(f"exclusions of unknown targets: {sorted(exclusions)}")
    head = heads[0]
    return MonthlyReport(
        month=_untext(head["month"]),
        period_start=parse_aware(head["period_start"]),
        period_end=parse_aware(head["period_end"]),
        generated_at=parse_aware(head["generated_at"]),
        policy_hash=_untext(head["policy_hash"]),
        policy={
            _untext(r["key"]): json.loads(_untext(r["value"])) for r in sections.get("policy", [])
        },
        providers=tuple(_read(ProviderReport, r) for r in sections.get("provider", [])),
        targets=targets,
        pools=tuple(_read(PoolReport, r) for r in sections.get("pool", [])),
        incidents=tuple(_read(IncidentRow, r) for r in sections.get("incident", [])),
        notes=tuple(_untext(r["text"]) for r in sections.get("note", [])),
        work=tuple(_read(WorkRow, r) for r in sections.get("work", [])),
        ledger=tuple(_read(LedgerRow, r) for r in sections.get("ledger", [])),
    )


def _number(cell: str) -> int:
    if not cell.isdigit():
        raise ValueError(f"evidence: outage must be a number from 1, got {cell!r}")
    return int(cell)


def _read(cls: type[Any], row: dict[str, str], **extra: Any) -> Any:
    try:
        values = {name: _value(hint, row[name]) for name, hint in hints(cls) if name in row}
        return cls(**values, **extra)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{cls.__name__} row {row!r}: {exc}") from None


def _value(hint: Any, cell: str) -> Any:
    inner = optional_of(hint)
    if inner is not None:
        return None if cell == "" else _value(inner, cell)
    if hint is bool:
        if cell not in ("true", "false"):
            raise ValueError(f"expected true or false, got {cell!r}")
        return cell == "true"
    if hint is float:
        return float(cell)
    if hint is int:
        return int(cell)
    if hint is datetime:
        return parse_aware(cell)
    if hint == tuple[str, ...]:
        return tuple(_untext(cell).split(";")) if cell else ()
    return _untext(cell)


def _untext(cell: str) -> str:
    return cell[1:] if cell.startswith("'") else cell
