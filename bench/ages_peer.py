"""The peer at an age, for bench/ages.py: a Prometheus TSDB holding what blackbox_exporter probing
N targets every I seconds for a day, a week or two would leave, built the way Prometheus'
own documentation backfills (``promtool tsdb create-blocks-from openmetrics``), then compacted
by Prometheus itself as a long-running one would have compacted it.

The samples are real ones: the peer probes the same N targets for a short while
(``capture``: every series blackbox_exporter and the scrape write, 22 per probe for an http
target), and each series' values and its scrape timestamps' jitter are repeated over the age at
the benchmark's interval (``openmetrics_lines``), as bench/storage.py tiles an hour. The text
is written and handed to promtool one two-hour block at a time: promtool reads its whole input
once per block it writes, so a bigger file would cost more than its size.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass, replace
from datetime import datetime
from pathlib import Path
from typing import Any

import peer
import tsdb_shift
from measure import wait_for

BLOCK_S = 7200  # promtool's and Prometheus' smallest block
SETTLE_PORT = 19491


@dataclass(frozen=True, slots=True)
class Series:
    """One captured series: its text key (``name{labels}``), its values in order, and each
    sample's offset from its place on the capture's grid (the scrape's jitter), seconds."""

    key: str
    name: str
    values: tuple[str, ...]
    jitter: tuple[float, ...]
    phase: float  # seconds into the interval of its first sample


def capture(urls: list[str], interval_s: float, seconds: float) -> list[dict[str, Any]]:
    """Run the peer over ``urls`` (scraping every ``interval_s``, at most 5 s so a short
    capture has samples) for a warm-up and ``seconds``; every blackbox series of the window,
    as the query API returns them."""
    scrape = min(interval_s, 5.0)
    with peer.Peer(urls, scrape) as running:
        time.sleep(2 * scrape)
        time.sleep(seconds)
        end = time.time()
        time.sleep(min(3.0, scrape))
        return running.query(f'{{job="blackbox"}}[{seconds:g}s]', at=end)


def series_of(raw: list[dict[str, Any]], interval_s: float) -> list[Series]:
    """The captured series as ``Series`` (pure), sorted by name then labels (OpenMetrics keeps
    a metric's samples together)."""
    found = []
    for s in raw:
        metric = dict(s["metric"])
        name = metric.pop("__name__")
        labels = ",".join(f'{k}="{v}"' for k, v in sorted(metric.items()))
        stamps = [float(t) for t, _ in s["values"]]
        step = (stamps[-1] - stamps[0]) / (len(stamps) - 1) if len(stamps) > 1 else interval_s
        jitter = tuple(round(t - (stamps[0] + i * step), 3) for i, t in enumerate(stamps))
        found.append(
            Series(
                f"{name}{{{labels}}}",
                name,
                tuple(v for _, v in s["values"]),
                jitter,
                stamps[0] % interval_s,
            )
        )
    return sorted(found, key=lambda s: s.key)


def openmetrics_lines(
    series: list[Series], interval_s: float, start: float, end: float
) -> Iterator[str]:
    """OpenMetrics text for [start, end) (pure): each series sampled on its own phase every
    ``interval_s``, its captured values and jitter repeated in turn, ``# EOF`` last."""
    for s in series:
        first = int((start - s.phase) // interval_s)
        last = int((end - s.phase) // interval_s) + 1
        count = len(s.values)
        lines = []
        for k in range(first, last):
            at = s.phase + k * interval_s + s.jitter[k % count]
            if start <= at < end:
                lines.append(f"{s.key} {s.values[k % count]} {at:.3f}\n")
        yield "".join(lines)
    yield "# EOF\n"


def build(
    series: list[Series],
    interval_s: float,
    start: datetime,
    end: datetime,
    folder: Path,
    jobs: int = 2,
    say: Any = print,
    pattern_s: int | None = None,
    compact: bool = True,
) -> dict[str, Any]:
    """Blocks for [start, end) under ``folder`` (made afresh), one promtool run per aligned
    two-hour block (up to ``jobs`` at once, the next block's text written meanwhile), then
    (``compact``) compacted by Prometheus (``settle``); figures of the build.

    With ``pattern_s`` (whole two-hour blocks) promtool builds the first whole ``pattern_s``
    of blocks and the part blocks at either end; every other whole block is a copy of the
    block a whole number of patterns before it, moved forward (bench/tsdb_shift.py): the
    samples repeat with the pattern (``repeating``), so the copy is the block promtool would
    have built."""
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    began = time.perf_counter()
    lo, hi = start.timestamp(), end.timestamp()
    blocks = list(range(int(lo // BLOCK_S) * BLOCK_S, int(hi), BLOCK_S))
    copies: dict[int, int] = {}  # block -> the block it copies
    if pattern_s:
        series = repeating(series, interval_s, pattern_s)
        first_whole = blocks[0] if blocks[0] >= lo else blocks[0] + BLOCK_S
        copies = {
            b: first_whole + (b - first_whole) % pattern_s
            for b in blocks
            if b - pattern_s >= first_whole and b + BLOCK_S <= hi
        }
    built = [b for b in blocks if b not in copies]
    samples, running = 0, []
    for n, block in enumerate(built, 1):
        text = folder.parent / f"{folder.name}-{n}.om"
        with text.open("w") as out:
            for chunk in openmetrics_lines(
                series, interval_s, max(lo, block), min(hi, block + BLOCK_S)
            ):
                samples += chunk.count("\n")
                out.write(chunk)
        samples -= 1  # the # EOF line
        while len(running) >= max(1, jobs):
            _finish(running.pop(0))
        command = ["promtool", "tsdb", "create-blocks-from", "openmetrics", "-q", str(text)]
        running.append((subprocess.Popen([*command, str(folder)], stderr=subprocess.PIPE), text))
        if n % 12 == 0 or n == len(built):
            elapsed = time.perf_counter() - began
            say(
                f"  peer blocks {n:>4}/{len(built)}  {samples:>14,} samples  {elapsed:7.0f} s  "
                f"eta {elapsed / n * (len(built) - n):6.0f} s"
            )
    for job in running:
        _finish(job)
    if copies:
        samples += copy_forward(folder, copies, say)
    written = {
        "samples": samples,
        "blocks_written": len(list(folder.glob("01*"))),
        "blocks_copied": len(copies),
    }
    if not compact:
        return written
    settled = settle(folder)
    say(
        f"  peer TSDB: {samples:,} samples in {written['blocks_written']} blocks "
        f"({len(copies)} of them copies), compacted by Prometheus into {settled} "
        f"({peer.du(folder) / 1e6:,.1f} MB) in {time.perf_counter() - began:.0f} s"
    )
    return written | {"blocks": settled}


def repeating(series: list[Series], interval_s: float, pattern_s: int) -> list[Series]:
    """``series`` with each one's captured values (and jitter) cut to the longest run that
    repeats a whole number of times in ``pattern_s`` (pure): a capture of 60 s at 5 s holds 12
    or 13 samples, and 13 does not divide a day's 17,280."""
    per_pattern = pattern_s / interval_s
    if pattern_s % BLOCK_S or per_pattern != int(per_pattern):
        raise ValueError(
            f"a pattern of {pattern_s} s is not whole two-hour blocks of {interval_s:g} s samples"
        )
    cut = []
    for s in series:
        count = max(c for c in range(1, len(s.values) + 1) if int(per_pattern) % c == 0)
        cut.append(replace(s, values=s.values[:count], jitter=s.jitter[:count]))
    return cut


def copy_forward(folder: Path, copies: dict[int, int], say: Any = print) -> int:
    """Make each block of ``copies`` (block start -> the start of the block it copies) from
    the block promtool built, moved forward; the samples copied."""
    began = time.perf_counter()
    built: dict[int, tuple[Path, int]] = {}  # block start -> the block, its samples
    for block in folder.glob("01*"):
        meta = json.loads((block / "meta.json").read_text())
        start = meta["minTime"] // 1000 // BLOCK_S * BLOCK_S
        built[start] = (block, meta["stats"]["numSamples"])
    samples = 0
    for n, (block, source) in enumerate(sorted(copies.items()), 1):
        original, count = built[source]
        tsdb_shift.shift_block(original, folder, (block - source) * 1000)
        samples += count
        if n % 12 == 0 or n == len(copies):
            say(f"  peer blocks copied {n:>4}/{len(copies)}  {time.perf_counter() - began:7.0f} s")
    return samples


def _finish(job: tuple[subprocess.Popen[bytes], Path]) -> None:
    """Wait for one promtool run; its text goes; its failure stops the benchmark."""
    process, text = job
    _, errors = process.communicate()
    text.unlink(missing_ok=True)
    if process.returncode:
        raise SystemExit(f"promtool failed on {text.name}: {errors.decode().strip()[-500:]}")


def settle(tsdb: Path, timeout_s: float = 1800) -> int:
    """Start Prometheus on ``tsdb`` scraping nothing until it has run its compaction once
    (it first compacts a minute after start, and each run compacts until nothing is left to
    plan); the blocks left."""
    config = tsdb.parent / f"{tsdb.name}-settle.yml"
    config.write_text(json.dumps({"global": {"scrape_interval": "1m"}}))
    log = (tsdb.parent / f"{tsdb.name}-settle.log").open("wb")
    process = subprocess.Popen(
        [
            "prometheus",
            f"--config.file={config}",
            f"--storage.tsdb.path={tsdb}",
            f"--web.listen-address=127.0.0.1:{SETTLE_PORT}",
        ],
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    try:
        wait_for(lambda: _compactions_triggered() >= 2, timeout_s, "Prometheus' compaction", 2.0)
    finally:
        process.terminate()
        process.wait(timeout=60)
        config.unlink(missing_ok=True)
    return len([p for p in tsdb.iterdir() if p.is_dir() and p.name.startswith("01")])


def _compactions_triggered() -> float:
    url = f"http://127.0.0.1:{SETTLE_PORT}/metrics"
    with urllib.request.urlopen(url, timeout=5) as answer:
        for line in answer.read().decode().splitlines():
            if line.startswith("prometheus_tsdb_compactions_triggered_total "):
                return float(line.split()[1])
    return 0.0


def footprint(tsdb: Path) -> dict[str, int]:
    """Bytes of the TSDB: its blocks, its write-ahead log, its head chunks, in all."""
    blocks = sum(peer.du(p) for p in tsdb.glob("01*") if p.is_dir()) if tsdb.exists() else 0
    wal = peer.du(tsdb / "wal") if (tsdb / "wal").exists() else 0
    head = peer.du(tsdb / "chunks_head") if (tsdb / "chunks_head").exists() else 0
    return {
        "blocks": blocks,
        "wal": wal,
        "head_chunks": head,
        "total": peer.du(tsdb) if tsdb.exists() else 0,
    }
