"""Reader of the update history that Statuspage and status.io write into a feed item's HTML body.

Statuspage ``history.atom`` / ``history.rss`` lists updates newest first, with no year::

    <small>Aug <var data-var='date'>21</var>, <var data-var='time'>00:37</var> UTC</small><br>
    <strong>Resolved</strong> - text

status.io RSS lists them oldest first, with a year::

    <small>September 1, 2026 1:14AM UTC</small><br /><b>Scheduled</b> - text

Statuspage bodies may end with ``This incident affected: Git Operations and API Requests.``;
``affected_components`` reads that list. Everything here is pure.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from monitor.feeds.model import IncidentUpdate, Status
from monitor.feeds.parsing.status import as_kind, normalize_status, opening_status
from monitor.feeds.parsing.text import html_to_text, unique
from monitor.sla.response import CLOSED_STATUSES

MAINTENANCE_STATUSES = frozenset({"scheduled", "in_progress", "verifying", "completed"})

# Bounded repeats keep the scan linear on hostile input (no unbounded lazy ``.*?``).
_ENTRY_HEAD = re.compile(
    r"<small\b[^>]{0,200}>(?P<stamp>.{0,300}?)</small>\s*(?:<br\s*/?>\s*){0,3}"
    r"<(?P<tag>strong|b)\b[^>]{0,200}>(?P<word>[^<]{0,60})</(?P=tag)>\s*(?:-|–|&ndash;)?\s*",
    re.IGNORECASE | re.DOTALL,
)
_STAMP = re.compile(
    r"(?P<month>[A-Za-z]{3,9})\.?\s+(?P<day>\d{1,2})(?:st|nd|rd|th)?,?"
    r"(?:\s+(?P<year>\d{4}))?\s*[,-]?\s*"
    r"(?P<hour>\d{1,2}):(?P<minute>\d{2})\s*(?P<half>[AaPp][Mm])?"
    r"(?:\s*(?P<zone>[A-Za-z]{1,5}))?"
)
_MONTH_ABBREVIATIONS = ("jan", "feb", "mar", "apr", "may", "jun",
                        "jul", "aug", "sep", "oct", "nov", "dec")  # fmt: skip
_MONTHS = {name: number for number, name in enumerate(_MONTH_ABBREVIATIONS, 1)}
# Zone names a status page may print; an unknown name is read as UTC (both formats print UTC).
_ZONE_HOURS = {"utc": 0, "gmt": 0, "z": 0, "est": -5, "edt": -4, "cst": -6, "cdt": -5,
               "mst": -7, "mdt": -6, "pst": -8, "pdt": -7, "cet": 1, "cest": 2}  # fmt: skip
_AFFECTED = re.compile(
    r"This (?:incident|scheduled maintenance|maintenance) affected:[ \t]*(?P<names>[^\n]*)"
)


@dataclass(frozen=True, slots=True)
class HistoryEntry:
    """One stamped update as the page wrote it; ``word`` is its own status word ("Update")."""

    at: datetime
    word: str
    body: str


def read_history(html: str, reference: datetime | None) -> list[HistoryEntry]:
    """The stamped updates in ``html``, oldest first, times in UTC.

    ``reference`` (the item's latest published/updated time) places yearless Statuspage stamps
    in a year; without it such stamps cannot be dated and are left out, as are stamps that are
    no valid date. An empty list means the body holds no such history.
    """
    heads = list(_ENTRY_HEAD.finditer(html))
    entries: list[HistoryEntry] = []
    yearless = False
    for index, head in enumerate(heads):
        end = heads[index + 1].start() if index + 1 < len(heads) else len(html)
        stamp = " ".join(html_to_text(head["stamp"]).split())
        yearless = yearless or _is_yearless(stamp)
        at = read_stamp(stamp, reference)
        if at is not None:
            body = strip_affected(html_to_text(html[head.end() : end]))
            entries.append(HistoryEntry(at, " ".join(head["word"].split()), body))
    return _oldest_first(entries, newest_first_on_tie=yearless)


def _oldest_first(entries: list[HistoryEntry], newest_first_on_tie: bool) -> list[HistoryEntry]:
    """Entries in time order, keeping the page's order among equal times.

    Pages list either way round; the first and last times tell which. When they are equal,
    yearless stamps mean Statuspage, which lists newest first.
    """
    if not entries:
        return entries
    first, last = entries[0].at, entries[-1].at
    if first > last or (first == last and newest_first_on_tie):
        entries = entries[::-1]
    return sorted(entries, key=lambda entry: entry.at)


def _is_yearless(stamp: str) -> bool:
    match = _STAMP.fullmatch(stamp)
    return match is not None and match["year"] is None


def read_stamp(stamp: str, reference: datetime | None) -> datetime | None:
    """The UTC time of one stamp ("Aug 21, 00:37 UTC", "September 1, 2026 1:14AM UTC"), or
    None when it is not a date or is yearless without a ``reference``."""
    match = _STAMP.fullmatch(stamp.strip())
    month = _MONTHS.get(match["month"][:3].lower()) if match else None
    if match is None or month is None:
        return None
    hour = _hour_of_day(int(match["hour"]), match["half"])
    minute, day = int(match["minute"]), int(match["day"])
    if hour is None or minute > 59:
        return None
    offset = timedelta(hours=_ZONE_HOURS.get((match["zone"] or "utc").lower(), 0))
    if match["year"] is not None:
        return _utc(int(match["year"]), month, day, hour, minute, offset)
    return _infer_year(month, day, hour, minute, offset, reference)


def _hour_of_day(hour: int, half: str | None) -> int | None:
    """24-hour clock hour; None when the hour is impossible for its clock."""
    if half is None:
        return hour if hour < 24 else None
    if not 1 <= hour <= 12:
        return None
    return hour % 12 + (12 if half.lower() == "pm" else 0)


def _infer_year(
    month: int, day: int, hour: int, minute: int, offset: timedelta, reference: datetime | None
) -> datetime | None:
    """The latest such date not after ``reference`` + 1 day (a December update of an item
    published in January belongs to the year before). Feb 29 looks back to a leap year."""
    if reference is None or reference.year >= 9999:
        return None
    limit = reference + timedelta(days=1)
    for year in range(limit.year, limit.year - 9, -1):
        at = _utc(year, month, day, hour, minute, offset)
        if at is not None and at <= limit:
            return at
    return None


def _utc(
    year: int, month: int, day: int, hour: int, minute: int, offset: timedelta
) -> datetime | None:
    try:
        return datetime(year, month, day, hour, minute, tzinfo=UTC) - offset
    except (ValueError, OverflowError):
        return None


def is_maintenance_history(entries: Iterable[HistoryEntry]) -> bool:
    """Whether any update carries a maintenance-only status (Scheduled, In progress, ...)."""
    return any(normalize_status(entry.word) in MAINTENANCE_STATUSES for entry in entries)


def to_updates(entries: Sequence[HistoryEntry], maintenance: bool) -> tuple[IncidentUpdate, ...]:
    """Normalized updates. A word that is no state ("Update") carries the previous state on;
    before any state, an incident is "investigating" and a maintenance "scheduled"."""
    current: Status = opening_status(maintenance)
    updates = []
    for entry in entries:
        current = as_kind(normalize_status(entry.word) or current, maintenance)
        updates.append(IncidentUpdate(entry.at, current, entry.body))
    return tuple(updates)


def resolved_time(updates: Sequence[IncidentUpdate]) -> datetime | None:
    """When the item closed: the first update of the closing run (a Postmortem after Resolved
    keeps the Resolved time); None while the last update is not closed."""
    resolved_at = None
    for update in reversed(updates):
        if update.status not in CLOSED_STATUSES:
            break
        resolved_at = update.at
    return resolved_at


def affected_components(html: str) -> tuple[str, ...]:
    """Names from Statuspage's "This incident affected: A, B, and C." line, in order, unique.

    Lists are split on commas and "and" outside parentheses, so a group written
    "Europe (Frankfurt, Amsterdam)" stays one name; a name that itself holds " and " is split.
    """
    text = html_to_text(html)
    lists = [match["names"].strip().removesuffix(".") for match in _AFFECTED.finditer(text)]
    return unique(name for names in lists for name in _split_names(names) if name)


def _split_names(text: str) -> list[str]:
    masked = text
    while True:  # blank out parenthesized parts, innermost first, keeping positions
        unmasked = masked
        masked = re.sub(r"\([^()]*\)", lambda m: "\0" * len(m[0]), masked)
        if masked == unmasked:
            break
    names, start = [], 0
    for separator in re.finditer(r"\s*,\s*(?:and\s+)?|\s+and\s+", masked):
        names.append(text[start : separator.start()].strip())
        start = separator.end()
    names.append(text[start:].strip())
    return names


def strip_affected(text: str) -> str:
    """``text`` without the "This incident affected: ..." line (it is no update's words)."""
    return _AFFECTED.sub("", text).strip()
