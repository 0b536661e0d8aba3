"""bench/tsdb_shift.py, the peer's history copied forward for bench/ages.py: a block moved in
time holds what promtool itself writes for the moved samples, read back with promtool's own
``tsdb dump``; a block built from a pattern and its copies is the block built whole."""

from __future__ import annotations

import json
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from tests.prometheus import PROMTOOL, binary, promtool

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))

import ages_peer
import tsdb_shift

DAY = 86_400
# a day starting on a two-hour boundary, and one starting between two
ALIGNED = datetime(2026, 11, 2, tzinfo=UTC)
MIDWAY = ALIGNED + timedelta(minutes=37, seconds=12)


def captured(interval_s: float) -> list[ages_peer.Series]:
    """Three series as a capture leaves them: 12 or 13 samples, jittered, on their own phases."""
    return [
        ages_peer.Series('probe_success{instance="a"}', "probe_success", ("1",) * 11 + ("0",),
                         (0.0, 0.012, 0.003) * 4, 1.25),
        ages_peer.Series('probe_duration_seconds{instance="a"}', "probe_duration_seconds",
                         tuple(f"0.00{n}" for n in range(1, 14)), (0.001,) * 13, 2.5),
        ages_peer.Series('scrape_samples_scraped{instance="b"}', "scrape_samples_scraped",
                         ("21",) * 12, (0.0,) * 12, interval_s - 0.001),
    ]  # fmt: skip


def dumped(tsdb: Path) -> list[str]:
    """Every sample of the TSDB under ``tsdb``, as promtool reads them, sorted."""
    (tsdb / "wal").mkdir(exist_ok=True)  # promtool dump opens the head's log too
    code, out = promtool("tsdb", "dump", str(tsdb))
    assert code == 0, out
    return sorted(out.splitlines())


def blocks(tsdb: Path) -> list[dict[str, object]]:
    return [json.loads((b / "meta.json").read_text()) for b in sorted(tsdb.glob("01*"))]


@pytest.mark.parametrize("start", [ALIGNED, MIDWAY], ids=["aligned", "midway"])
def test_a_history_from_a_pattern_is_the_history_built_whole(
    tmp_path: Path, start: datetime
) -> None:
    binary(PROMTOOL)
    series = ages_peer.repeating(captured(60.0), 60.0, DAY)
    end = start + timedelta(days=3, hours=5)
    whole = ages_peer.build(series, 60.0, start, end, tmp_path / "whole", say=str, compact=False)
    copied = ages_peer.build(
        series, 60.0, start, end, tmp_path / "copied", say=str, pattern_s=DAY, compact=False
    )
    # after the first whole day, every whole block is a copy: two days and two (or one) more
    assert copied["blocks_copied"] == (26 if start == ALIGNED else 25)
    assert copied["samples"] == whole["samples"] == 3 * (3 * 1440 + 300)
    assert dumped(tmp_path / "copied") == dumped(tmp_path / "whole")
    spans = [(b["minTime"], b["maxTime"]) for b in blocks(tmp_path / "copied")]
    assert sorted(spans) == sorted((b["minTime"], b["maxTime"]) for b in blocks(tmp_path / "whole"))


def test_a_moved_block_answers_queries_at_its_new_time(tmp_path: Path) -> None:
    binary(PROMTOOL)
    series = captured(5.0)
    ages_peer.build(
        series, 5.0, ALIGNED, ALIGNED + timedelta(hours=2), tmp_path / "a", say=str, compact=False
    )
    (original,) = list((tmp_path / "a").glob("01*"))
    (tmp_path / "b").mkdir()
    later = tsdb_shift.shift_block(original, tmp_path / "b", 9 * DAY * 1000)
    meta, moved = blocks(tmp_path / "a")[0], blocks(tmp_path / "b")[0]
    assert moved["minTime"] == meta["minTime"] + 9 * DAY * 1000  # type: ignore[operator]
    assert moved["ulid"] == later.name != meta["ulid"]
    assert moved["compaction"] == {"level": 1, "sources": [later.name]}
    # the index's chunk times moved with the samples: a range read finds them at the new time
    start_ms = int((ALIGNED + timedelta(days=9, minutes=10)).timestamp() * 1000)
    (tmp_path / "b" / "wal").mkdir()
    minute = (f"--min-time={start_ms}", f"--max-time={start_ms + 59_999}")
    code, out = promtool("tsdb", "dump", *minute, str(tmp_path / "b"))
    assert code == 0, out
    assert sum('__name__="probe_success"' in line for line in out.splitlines()) == 12


def test_moving_by_nothing_rewrites_every_checksum_as_it_was(tmp_path: Path) -> None:
    binary(PROMTOOL)
    two_hours = (ALIGNED, ALIGNED + timedelta(hours=2))
    ages_peer.build(captured(5.0), 5.0, *two_hours, tmp_path, say=str, compact=False)
    (block,) = list(tmp_path.glob("01*"))
    chunks = (block / "chunks" / "000001").read_bytes()
    index = (block / "index").read_bytes()
    same_chunks, same_index = bytearray(chunks), bytearray(index)
    assert tsdb_shift.shift_chunks(same_chunks, 0) == 3 * 12  # 1,440 samples: 12 chunks each
    assert tsdb_shift.shift_index(same_index, 0) == 3
    assert (bytes(same_chunks), bytes(same_index)) == (chunks, index)
    moved = bytearray(chunks)
    tsdb_shift.shift_chunks(moved, 7_200_000)
    assert moved != chunks
    assert len(moved) == len(chunks)
    tsdb_shift.shift_chunks(moved, -7_200_000)
    assert bytes(moved) == chunks


def test_a_time_whose_varint_would_grow_is_refused() -> None:
    data = bytearray(tsdb_shift.put_varint(2**41 - 5))
    with pytest.raises(ValueError, match="changes its length"):
        tsdb_shift._rewrite_varint(data, 0, 10, "a time")
    assert tsdb_shift.varint(tsdb_shift.put_varint(-(2**40)), 0) == (-(2**40), 6)


def test_a_pattern_cuts_each_capture_to_a_run_that_repeats_in_it() -> None:
    cut = ages_peer.repeating(captured(5.0), 5.0, DAY)
    assert [len(s.values) for s in cut] == [12, 12, 12]  # 13 does not divide 17,280
    assert cut[1].values == tuple(f"0.00{n}" for n in range(1, 13))
    with pytest.raises(ValueError, match="not whole two-hour blocks"):
        ages_peer.repeating(cut, 5.0, 3600)
